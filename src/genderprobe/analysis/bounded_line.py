"""The least-squares line rate = a * score + b with a and b held in a box, solved exactly for many weighted
samples at once from their sums.

The residual sum of squares is a convex quadratic in (a, b), so over a box its minimum is the unconstrained
one where that lies inside, else on an edge: fixing one parameter at a bound leaves a one-dimensional
quadratic whose minimum, clipped to the other parameter's bounds, is that edge's best point (a corner where
clipped). The answer is the edge point of least residual. Nothing iterates, so a sample whose answers sit on
a bound (every candidate hired, none hired) costs what any other does.

scipy's ``lsq_linear``, which GenderBench calls, returns the same unconstrained solution where it lies inside
the bounds; elsewhere its trust-region method stops strictly inside the box once a step gains less than
its tolerance (1e-10 of the cost): in the slope about 1e-6 short of this exact optimum on hundreds of rows,
1e-4 on a few, up to 3e-3 on three rows of nearly equal scores (tests/studies/hiring_an/
test_hiring_an_bounded_fit.py checks it). Where the scores do not vary the slope is not identified: every
point of a line is optimal, and ``lsq_linear`` returns one its path finds, so callers decide what to do
there (see ``no_spread``).
"""

from __future__ import annotations

import numpy as np

BOUNDS = [[-1, 0], [1, 1]]  # GenderBench's, in lsq_linear's form: a in [-1, 1], b in [0, 1]
# Below this spread of the scores (sum of squared deviations over sum of squares) a resample's slope is
# left to lsq_linear: not identified, or not exact from sums. Two occupations' scores differ by 8e-4 at
# least, so only resamples of a few rows, nearly all of one occupation, fall under it.
MIN_SPREAD = 1e-6


def no_spread(count: np.ndarray, s1: np.ndarray, s2: np.ndarray, spread: float) -> np.ndarray:
    """Where the scores' sum of squared deviations is at most ``spread`` times their sum of squares: the slope
    is not identified there (no spread) or not trustworthy from sums (cancellation on nearly equal scores)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return ~(s2 - s1 * (s1 / count) > spread * s2)


def bounded_line(count: np.ndarray, s1: np.ndarray, s2: np.ndarray, r1: np.ndarray, sr: np.ndarray,
                 bounds=BOUNDS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(slope, intercept, on_bound) minimising sum w * (a * s + b - r)^2 over ``bounds`` for each sample.

    Arguments are arrays of one shape, each sample's weighted sums: count (sum w), s1 (w * s), s2 (w * s^2),
    r1 (w * r), sr (w * s * r). on_bound says where the optimum touches a bound (where lsq_linear may
    iterate). NaN where count is 0."""
    (a_lo, b_lo), (a_hi, b_hi) = bounds
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_s, mean_r = s1 / count, r1 / count
        sxx, sxy = s2 - s1 * mean_s, sr - s1 * mean_r
        a = sxy / sxx
        b = mean_r - a * mean_s
        interior = (sxx > 0) & (a >= a_lo) & (a <= a_hi) & (b >= b_lo) & (b <= b_hi)

        def excess(a, b):
            # The residual sum of squares less a constant of the sample, written about the means, where it
            # loses no precision.
            return a * (sxx * a - 2 * sxy) + count * (b + a * mean_s - mean_r) ** 2

        edges = [(np.full_like(mean_s, fixed), np.clip(mean_r - fixed * mean_s, b_lo, b_hi)) for fixed in (a_lo, a_hi)]
        edges += [(np.clip((sr - fixed * s1) / s2, a_lo, a_hi), np.full_like(mean_s, fixed)) for fixed in (b_lo, b_hi)]
        least = np.where(interior, -np.inf, np.inf)
        for edge_a, edge_b in edges:
            value = excess(edge_a, edge_b)
            better = value < least  # NaN (no rows, or s2 = 0 on the b edges) is never better
            least = np.where(better, value, least)
            a, b = np.where(better, edge_a, a), np.where(better, edge_b, b)
        lost = ~interior & np.isinf(least)  # no rows: nothing was better than nothing
        a, b = np.where(lost, np.nan, a), np.where(lost, np.nan, b)
    return a, b, (a == a_lo) | (a == a_hi) | (b == b_lo) | (b == b_hi)
