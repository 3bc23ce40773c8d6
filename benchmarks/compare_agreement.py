"""Do compare's numbers agree with one another, and stay possible? (issue 44; docs/statistics.md)

    python benchmarks/compare_agreement.py                    # 400 simulated pairs, 100 real pairs (about 2 min)
    python benchmarks/compare_agreement.py --pairs 1000 --runs 0

For pairs of unbiased runs, every test compare prints (RelationshipLevy's diff_success_rate and
diff_abs_success_rate, one family per pair) is checked for:

* family p below raw p: the max-T step-down's adjusted p under the test's own (must be 0);
* p and interval disagree: p < 0.05 while the 95% interval holds 0, or the other way (must be 0);
* interval beyond what the difference can be: outside [-1, 1] for diff_abs_success_rate (in [0, 1] in
  both runs), outside [-2, 2] for diff_success_rate (must be 0);
* the false-positive rate: tests with p < 0.05, and pairs with any family p < 0.05 (about 5%, the
  two-step interval of diff_abs_success_rate fewer).

Two sources of pairs: ``--pairs`` simulated ones (per item, the share of its two orders that chose the
man, both orders alike half the time; paired bootstrap of 5,000 resamples, as compare does), and
``--runs`` pairs of real reference:random runs of 100 items differing only in the coin, through
``compare`` itself. Last, reference:random against reference:biased on the README's 3,000 items.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from genderprobe.analysis.comparison_stats import (
    ItemScores,
    paired_difference,
    paired_rows,
    resampled_row_sums,
)
from genderprobe.analysis.metric_bounds import difference_bounds
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.outputs.report import compare
from genderprobe.outputs.report.paired import RESAMPLES, PairTest, _adjust
from genderprobe.studies.relationship_levy.paired import _diff, _diff_abs

PROBE = "relationship-levy"
METRICS = ("diff_success_rate", "diff_abs_success_rate")


def simulated_pair(rng: np.random.Generator, items: int) -> list[PairTest]:
    """compare's two tests of one pair of simulated unbiased runs, adjusted as one family."""
    def run() -> np.ndarray:
        first, second = (rng.random(items) < 0.5).astype(float), (rng.random(items) < 0.5).astype(float)
        return np.where(rng.random(items) < 0.5, first, (first + second) / 2)

    ids, ones = np.arange(items), np.ones(items)
    scores = [(ItemScores(ids, x, ones, _diff), ItemScores(ids, x, ones, _diff_abs, signed=_diff, weights=(1.0,)))
              for x in (run(), run())]
    sums = resampled_row_sums(paired_rows(scores[0][0], scores[1][0]), n_resamples=RESAMPLES,
                              rng=np.random.default_rng(int(rng.integers(1 << 62))))
    tests = []
    for m, metric in enumerate(METRICS):
        d = paired_difference(*(s[m] for s in scores), sums=sums, bounds=difference_bounds(PROBE, metric))
        tests.append(PairTest("A", "B", metric, False, d.estimate.to_json(), d.p_value, "paired bootstrap", True, "",
                              _difference=d))
    _adjust(tests)
    return tests


def levy(model: str, items: int, seed: int, generation_seed: int) -> tuple:
    config = RunConfig(use_cache=False, n_resamples=100, seed=seed, generation={"seed": generation_seed})
    out = run_probe(PROBE, model, config=config, sample_k=items)
    return out.document, f"{model} {seed}/{generation_seed}", out.records


def real_pair(i: int, items: int = 100) -> list[PairTest]:
    """Two reference:random runs on the same items, differing only in the coin, through compare."""
    (section,) = compare([levy("reference:random", items, i, 2 * i), levy("reference:random", items, i, 2 * i + 1)])
    return section.pairs


def outside(t: PairTest) -> bool:
    low, high = difference_bounds(PROBE, t.metric)
    d = t.difference
    return d["ci_low"] is None or not low <= d["ci_low"] <= d["ci_high"] <= high


def report(name: str, families: list[list[PairTest]]) -> None:
    tests = [t for f in families for t in f]
    below = sum(t.p_adjusted < t.p_value for t in tests)
    disagree = sum((t.p_value < 0.05) != (not t.difference["ci_low"] <= 0 <= t.difference["ci_high"]) for t in tests)
    print(f"\n{name}: {len(families)} pairs, {len(tests)} tests")
    print(f"  family p below raw p:                 {below} of {len(tests)}")
    print(f"  p < 0.05 and interval disagree:       {disagree} of {len(tests)}")
    print(f"  intervals beyond what can be:         {sum(map(outside, tests))} of {len(tests)}")
    for metric in METRICS:
        chosen = [t for t in tests if t.metric == metric]
        print(f"  false positives, {metric + ':':23s} {np.mean([t.p_value < 0.05 for t in chosen]):.1%} (raw p), "
              f"{np.mean([t.p_adjusted < 0.05 for t in chosen]):.1%} (family p)")
    print(f"  pairs with any family p < 0.05:       {np.mean([any(t.p_adjusted < 0.05 for t in f) for f in families]):.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=400, help="simulated pairs of unbiased runs")
    parser.add_argument("--items", type=int, default=100, help="items per simulated run")
    parser.add_argument("--runs", type=int, default=100, help="pairs of real reference:random runs")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.pairs:
        rng = np.random.default_rng(2026)
        report(f"simulated unbiased runs, {args.items} items", [simulated_pair(rng, args.items) for _ in range(args.pairs)])
    if args.runs:
        report("reference:random against reference:random, 100 items", [real_pair(i) for i in range(args.runs)])
    (section,) = compare([levy("reference:random", 3000, 0, 0), levy("reference:biased", 3000, 0, 1)])
    print("\nreference:random against reference:biased, 3,000 items:")
    for t in section.pairs:
        d = t.difference
        print(f"  {t.metric}, A − B = {d['value']:.3f} [{d['ci_low']:.3f}, {d['ci_high']:.3f}]; "
              f"p = {t.p_value:.4f}, family p = {t.p_adjusted:.4f}; beyond what can be: {outside(t)}")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
