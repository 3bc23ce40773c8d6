"""A tried alternative to abs_combination_interval's corners: test inversion over its box (issue 31).

    python benchmarks/abs_inversion.py --runs 1000

The two-step interval of sum_i w_i |theta_i| takes the error's most extreme
quantiles over the corners of a 99.5% box for theta, and over-covers where a
theta_i sits between 0 and a settled sign (docs/statistics.md). Test inversion
keeps, of every theta in the box, only the value sum_i w_i |theta_i| whose own
error quantiles (4.5% split evenly) accept the estimate, and reports the hull:
the least a set built from the same statistic and box can keep. It misses at
most the same 5% at every theta (up to the grid), and this script measures how
much of the over-coverage it takes back, on normal estimates with unit standard
errors beside the two-step interval on the same draws. It is not used by the
product: its grid costs a thousand times the corners' work.
"""

from __future__ import annotations

import argparse
import itertools
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from genderprobe.analysis.stats import SIGN_LEVEL, _box_half_widths, abs_combination_interval

CASES = [((5.0, 0.0), (1.0, -1.0)), ((5.0, 2.0), (1.0, -1.0)), ((0.0, 0.0), (1.0, -1.0)),
         ((0.0, 0.0, 0.0), (1 / 3,) * 3), ((0.0, 1.0, 1.0), (1 / 3,) * 3), ((0.0, 2.2, 2.2), (1 / 3,) * 3)]
DRAWS = 2000


def inverted_interval(points: np.ndarray, draws: np.ndarray, weights: np.ndarray, steps: int) -> tuple[float, float]:
    """The hull of the values sum w |theta| over the box's grid points whose error quantiles accept the estimate."""
    dev = draws - points
    half = _box_half_widths(dev, dev.std(axis=0), SIGN_LEVEL)
    axes = [np.union1d(np.linspace(a, b, steps), [0.0] if a < 0 < b else []) for a, b in zip(points - half, points + half)]
    grid = np.array(list(itertools.product(*axes)))
    value = float(weights @ np.abs(points))
    tail = (0.05 - SIGN_LEVEL) / 2
    target = np.abs(grid) @ weights
    low, high = np.inf, -np.inf
    for chunk in np.array_split(np.arange(len(grid)), max(1, len(grid) // 100)):
        theta = grid[chunk]
        error = (np.abs(theta[:, None, :] + dev[None]) - np.abs(theta)[:, None, :]) @ weights
        q_lo, q_hi = np.quantile(error, [tail, 1 - tail], axis=1)
        accepted = target[chunk][(value - target[chunk] >= q_lo) & (value - target[chunk] <= q_hi)]
        if accepted.size:
            low, high = min(low, accepted.min()), max(high, accepted.max())
    return (value, value) if low > high else (low, high)


def _case(args: tuple[tuple[float, ...], tuple[float, ...], int, int]) -> tuple[float, float, float, float]:
    theta, weights, runs, seed = args
    theta, weights = np.asarray(theta), np.asarray(weights)
    rng = np.random.default_rng(seed)
    truth = float(weights @ np.abs(theta))
    steps = 41 if theta.size == 2 else 15
    hits, width = np.zeros(2), np.zeros(2)
    for _ in range(runs):
        est = theta + rng.standard_normal(theta.size)
        draws = est + rng.standard_normal((DRAWS, theta.size))
        e = abs_combination_interval(est, draws, weights, 100)
        for i, (lo, hi) in enumerate(((e.ci_low, e.ci_high), inverted_interval(est, draws, weights, steps))):
            hits[i] += lo - 1e-12 <= truth <= hi + 1e-12
            width[i] += hi - lo
    return (*(hits / runs), *(width / runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    print("| weights | theta (standard errors) | two-step (corners) | test inversion |\n|---|---|---|---|")
    with ProcessPoolExecutor(args.jobs) as pool:
        found = pool.map(_case, [(*c, args.runs, 700 + i) for i, c in enumerate(CASES)])
        for (theta, weights), (two_step, inverted, w2, wi) in zip(CASES, found):
            print(f"| {', '.join(f'{w:+.2g}' for w in weights)} | {', '.join(f'{t:g}' for t in theta)} | "
                  f"{two_step:.1%} ({w2:.2f}) | {inverted:.1%} ({wi:.2f}) |")
    print(f"\n({args.runs:,} runs a row, {DRAWS:,} normal draws around each estimate; coverage (mean width).)")


if __name__ == "__main__":
    main()
