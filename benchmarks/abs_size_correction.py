"""How near 95% a size correction brings abs_combination_interval, a level that holds at every theta.

    python benchmarks/abs_size_correction.py --runs 1000
    python benchmarks/abs_size_correction.py --runs 600 --kappa 2.2   # moment selection

The two-step interval of sum_i w_i |theta_i| promises 95% at every theta and
covers 96.5-100% on normal estimates (docs/statistics.md). A size correction
(after Andrews & Barwick 2012) asks it for less than 95%, at the nominal level
c' whose lowest coverage over theta is 95%, so the promise still holds while the
over-coverage shrinks. This script measures, on normal estimates with unit
standard errors and ABS_RESAMPLES draws around each, the coverage at each theta
of a grid for a range of nominal levels at once (the same draws for all), finds
c', and shows what c' leaves where the interval over-covers most. The grid's
minimum stands for the infimum over theta, and each point's noise lowers that
minimum, so c' errs on the safe side. ``--kappa K`` tries moment selection
(Andrews & Soares 2010) instead of the box's corners for estimates more than K
standard errors from 0. Neither is used by the product (docs/statistics.md says
what each leaves).
"""

from __future__ import annotations

import argparse
import itertools
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from genderprobe.analysis.stats import (
    ABS_RESAMPLES,
    SIGN_LEVEL,
    _abs_tails,
    _box_half_widths,
    abs_combination_interval,
)

LEVELS = np.round(np.arange(0.95, 0.889, -0.005), 3)  # nominal confidences tried
STEPS = (0.0, 1.0, 2.2, 3.0, 5.0, 8.0)
DIFFERENCE = (1.0, -1.0)
MEAN_OF_THREE = (1 / 3,) * 3


def intervals(points: np.ndarray, dev: np.ndarray, weights: np.ndarray,
              kappa: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """abs_combination_interval's (low, high) at every confidence in LEVELS, from the same draws. With
    ``kappa`` (moment selection, after Andrews & Soares 2010), a coordinate more than kappa standard
    errors from 0 has its sign taken as settled and its term as linear."""
    value = float(weights @ np.abs(points))
    se = dev.std(axis=0)
    half = _box_half_widths(dev, se, SIGN_LEVEL)
    lo, hi = points - half, points + half
    if kappa is not None:  # a settled term is linear, s_i Z_i: its theta_i as far out as need be
        far = np.abs(points) > kappa * se
        lo, hi = np.where(far, np.sign(points) * 1e6 * se, lo), np.where(far, np.sign(points) * 1e6 * se, hi)
    open_ = (lo <= 0) & (hi >= 0)
    tails = np.array([_abs_tails(1 - c - SIGN_LEVEL, weights[open_]) for c in LEVELS])
    upper, lower = np.full(len(LEVELS), -np.inf), np.full(len(LEVELS), np.inf)
    for corner in itertools.product(*({a, b, 0.0} if o else {a, b} for a, b, o in zip(lo, hi, open_))):
        theta = np.array(corner)
        error = (np.abs(theta + dev) - np.abs(theta)) @ weights
        upper = np.maximum(upper, np.quantile(error, 1 - tails[:, 1]))
        lower = np.minimum(lower, np.quantile(error, tails[:, 0]))
    low, high = value - upper, value - lower
    if (weights >= 0).all():
        low = np.maximum(low, 0.0)
    return np.minimum(low, value), np.maximum(high, value)


def coverage(args: tuple[tuple[float, ...], tuple[float, ...], int, int, float | None]) -> np.ndarray:
    """Coverage at theta for each level in LEVELS."""
    theta, weights, runs, seed, kappa = args
    theta, weights = np.asarray(theta, float), np.asarray(weights, float)
    rng = np.random.default_rng(seed)
    truth = float(weights @ np.abs(theta))
    hits = np.zeros(len(LEVELS))
    for run in range(runs):
        est = theta + rng.standard_normal(theta.size)
        draws = est + rng.standard_normal((ABS_RESAMPLES, theta.size))
        low, high = intervals(est, draws - est, weights, kappa)
        if run < 3 and kappa is None:  # the copy above is the product's interval at 95%
            e = abs_combination_interval(est, draws, weights, 100)
            assert np.isclose(low[0], e.ci_low) and np.isclose(high[0], e.ci_high), "intervals() drifted"
        hits += (low <= truth + 1e-12) & (truth - 1e-12 <= high)
    return hits / runs


def grid(weights: tuple[float, ...]) -> list[tuple[float, ...]]:
    """Thetas in standard errors: every pair of STEPS for A - B, every unordered triple for the mean of three."""
    if len(weights) == 2:
        return list(itertools.product(STEPS, STEPS))
    return list(itertools.combinations_with_replacement(STEPS, 3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--kappa", type=float, help="settle a sign beyond this many standard errors (moment "
                        "selection); default: the product's box")
    args = parser.parse_args()
    with ProcessPoolExecutor(args.jobs) as pool:
        for name, weights in (("A - B", DIFFERENCE), ("mean of three", MEAN_OF_THREE)):
            thetas = grid(weights)
            cases = [(t, weights, args.runs, 700 + i, args.kappa) for i, t in enumerate(thetas)]
            found = np.array(list(pool.map(coverage, cases)))
            lowest = found.min(axis=0)
            ok = np.flatnonzero(lowest >= 0.95)
            k = int(ok.max()) if ok.size else 0  # the lowest nominal level whose worst coverage is still 95%
            print(f"\n## {name} ({len(thetas)} thetas, {args.runs:,} runs each)\n")
            print("| nominal | lowest coverage over theta | highest |\n|---|---|---|")
            for j, c in enumerate(LEVELS):
                print(f"| {c:.1%} | {lowest[j]:.1%} | {found[:, j].max():.1%} |")
            print(f"\nc' = {LEVELS[k]:.1%}. Coverage at 95% nominal / at c', where 95% nominal covers most:\n")
            print("| theta (standard errors) | 95% nominal | c' |\n|---|---|---|")
            for i in np.argsort(-found[:, 0])[:8]:
                print(f"| {', '.join(f'{t:g}' for t in thetas[i])} | {found[i, 0]:.1%} | {found[i, k]:.1%} |")
            share = np.mean((found[:, k] >= 0.94) & (found[:, k] <= 0.97))
            print(f"\nAt c', {share:.0%} of the thetas cover 94-97% (at 95% nominal: "
                  f"{np.mean((found[:, 0] >= 0.94) & (found[:, 0] <= 0.97)):.0%}).")


if __name__ == "__main__":
    main()
