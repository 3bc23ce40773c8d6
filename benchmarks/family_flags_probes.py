"""Two checks behind the unexplained family excesses in docs/statistics.md (issue 48).

``--independent-groups``: the run family's max-T over 67 disjoint groups of 30 DiscriminationTamkin-like
items (yes among three attempts per gender, a fair coin), each tested by its own randomization
(``swap_draws``), through the same studentizing and ``maxt_stepdown`` as breakdown_tests. Shows whether the
procedure itself keeps 5% with DiscriminationTamkin's small discrete groups, apart from how its groups overlap.

``--fixed-items SEED``: HiringAn at 2,000 items with the items of one seed held fixed and new answers and
analysis seeds every run (benchmarks/family_flags.py otherwise).

    python benchmarks/family_flags_probes.py --independent-groups --runs 3000
    python benchmarks/family_flags_probes.py --fixed-items 0 --runs 1000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from genderprobe.analysis.randomization import swap_draws
from genderprobe.analysis.stats import maxt_stepdown

RESAMPLES = 1000


def independent_groups(runs: int, groups: int = 67, items: int = 30) -> float:
    flagged = 0
    for run in range(runs):
        rng, shuffle = np.random.default_rng([run, 67]), np.random.default_rng(31)
        stats, columns = [], []
        for g in range(groups):
            male, female = rng.binomial(3, 0.5, items), rng.binomial(3, 0.5, items)
            observed, draws = swap_draws(male, female, np.full(items, 3), np.full(items, 3),
                                         n_resamples=RESAMPLES, seed=run * groups + g)
            spread = draws[:, 0].std()
            stats.append(abs(observed[0]) / spread)
            columns.append(shuffle.permutation(np.abs(draws[:, 0]) / spread))
        flagged += maxt_stepdown(np.array(stats), np.column_stack(columns)).min() < 0.05
    return flagged / runs


def fixed_items(seed: int, runs: int) -> float:
    sys.path.insert(0, str(Path(__file__).parent))
    import family_flags

    from genderprobe.studies.hiring_an import dataset

    ids = dataset.sampled_ids(2000, seed)
    dataset.sampled_ids = lambda size, _seed: ids  # family_flags._hiring reads it at call time
    rng = np.random.default_rng([seed, 99])
    return sum(family_flags.any_flag(family_flags.tests_of("hiring-an", 2000, s, rng=rng)) for s in range(runs)) / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--independent-groups", action="store_true")
    parser.add_argument("--fixed-items", type=int, metavar="SEED")
    args = parser.parse_args()
    if args.independent_groups:
        print(f"67 independent groups of 30 items: {independent_groups(args.runs):.2%} of {args.runs:,} runs flagged")
    if args.fixed_items is not None:
        print(f"hiring-an, 2,000 items of seed {args.fixed_items}: {fixed_items(args.fixed_items, args.runs):.2%} "
              f"of {args.runs:,} runs flagged")


if __name__ == "__main__":
    main()
