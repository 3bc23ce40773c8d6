"""Comparing two runs (``genderprobe compare``): is model A's headline different from model B's?

Per-item scores (:class:`ItemScores`) rebuild a run's metric from its records;
a paired bootstrap resamples items once for both runs, so what the items share
cancels; runs on different items are resampled on their own, and runs without
records are compared from their intervals. Every difference keeps the draws it
was read from, so the tests of one pair of runs can be adjusted as one family
(:func:`genderprobe.analysis.stats.maxt_stepdown`); a metric that is a sum of absolute
values (diff_abs_success_rate, mixed_gender_bias) gets the two-step interval of
:func:`genderprobe.analysis.stats.abs_combination_interval`, as the percentile interval
of |a| - |b| misses where one run is unbiased.

Each p-value is read off the interval printed beside it, by test inversion: the
smallest alpha whose (1 - alpha) interval leaves 0 out, so p < 0.05 exactly when
the 95% interval does. A difference of a bounded metric keeps its interval within
what the difference can be (:mod:`genderprobe.analysis.metric_bounds`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from genderprobe.analysis.stats import (
    _MAX_BLOCK,
    CONFIDENCE,
    DEFAULT_RESAMPLES,
    KINK_TAIL,
    SIGN_LEVEL,
    Estimate,
    abs_combination_interval,
    percentile_interval,
)

# Bisection steps of a test inversion: p to within 2^-14 (0.00006).
_INVERSION_STEPS = 14
# The smallest level the two-step interval of a sum of absolute values is built at: its box takes
# SIGN_LEVEL, and one end at least KINK_TAIL (a hair more keeps the other tail from going negative).
_ABS_SMALLEST_LEVEL = SIGN_LEVEL + KINK_TAIL + 1e-9


def ratio_of_sums(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """sum(num) / sum(den): NaN where the denominator is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


@dataclass(frozen=True)
class ItemScores:
    """One run's metric rebuilt item by item, so two runs can be resampled together.

    The metric is ``combine(num.sum(axis=0), den.sum(axis=0))``: num and den hold
    one row per item (a vector, or a matrix of k parts such as DeMET's nine type
    means), with no NaN (an item that counts for nothing has den 0). ``combine``
    works elementwise over leading axes, so it also takes bootstrap sums of shape
    (resamples,) or (resamples, k). ``items`` names each row; two runs on the
    same items name them alike. A metric that is a sum of absolute values,
    sum_i weights[i] |signed(num, den)[..., i]|, names its signed parts, so that
    a difference between runs gets an interval that holds near 0.
    """

    items: np.ndarray
    num: np.ndarray
    den: np.ndarray
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray] = ratio_of_sums
    signed: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    weights: tuple[float, ...] = ()

    def value(self) -> float | None:
        with np.errstate(invalid="ignore", divide="ignore"):
            v = float(self.combine(self.num.sum(axis=0), self.den.sum(axis=0)))
        return None if math.isnan(v) else v

    def resampled(self, sums: np.ndarray) -> np.ndarray:
        """The metric of each row of bootstrap sums laid out as ``np.hstack([num, den])``."""
        k = _width(self.num)
        num, den = sums[:, :k], sums[:, k:]
        if self.num.ndim == 1:
            num, den = num[:, 0], den[:, 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self.combine(num, den), dtype=np.float64)

    def rows(self) -> np.ndarray:
        return np.hstack([_column(self.num), _column(self.den)]).astype(np.float64)

    def signed_parts(self, sums: np.ndarray | None = None) -> np.ndarray:
        """The signed parts (resamples x m; one row for the point) of a sum of absolute values."""
        if sums is None:
            sums = self.rows().sum(axis=0)[None, :]
        k = _width(self.num)
        num, den = sums[:, :k], sums[:, k:]
        if self.num.ndim == 1:
            num, den = num[:, 0], den[:, 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self.signed(num, den), dtype=np.float64).reshape(len(sums), -1)


def _column(a: np.ndarray) -> np.ndarray:
    return a.reshape(len(a), -1)


def _width(a: np.ndarray) -> int:
    return 1 if a.ndim == 1 else a.shape[1]


@dataclass(frozen=True)
class Difference:
    """run A against run B: A - B (or A / B for a ratio) with its interval and two-sided p-value.

    ``point`` and ``draws``: the difference and its bootstrap values on the scale it is
    tested on (log for a ratio), for the family of tests of one pair; ``se`` where the
    difference was read from two intervals instead."""

    estimate: Estimate
    p_value: float | None
    point: float | None = None
    draws: np.ndarray | None = None
    se: float | None = None


def resampled_row_sums(rows: np.ndarray, *, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Column sums of ``rows`` (items x columns) in each of n_resamples bootstrap resamples of items.

    Few distinct rows (most probes' items take a handful of values) are drawn
    as multinomial counts per distinct row; many as counts of uniform draws.
    """
    n, width = rows.shape
    out = np.empty((n_resamples, width))
    if n == 0:
        out.fill(0.0)
        return out
    values, counts = np.unique(rows, axis=0, return_counts=True)
    few = len(values) <= 256
    block = max(1, _MAX_BLOCK // (len(values) if few else n))
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        if few:
            out[start : start + size] = rng.multinomial(n, counts / n, size=size) @ values
        else:  # int32 draws are several times faster; size x n stays below _MAX_BLOCK
            draws = rng.integers(0, n, size=(size, n), dtype=np.int32) + (np.arange(size, dtype=np.int32) * n)[:, None]
            weights = np.bincount(draws.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)
            out[start : start + size] = weights @ rows
    return out


def _difference(point_a: float, point_b: float, a: np.ndarray, b: np.ndarray, n: int, ratio: bool,
                confidence: float) -> Difference:
    """A - B from two runs' points and bootstrap values; for a ratio, on the log scale, shown as A / B."""
    if ratio:
        if point_a <= 0 or point_b <= 0:
            return Difference(Estimate(None, None, None, n), None)
        with np.errstate(invalid="ignore", divide="ignore"):
            a, b = np.log(a), np.log(b)
        point_a, point_b = math.log(point_a), math.log(point_b)
    samples = a - b
    samples[np.isinf(samples)] = np.nan
    point = point_a - point_b
    est = percentile_interval(point, samples, n, confidence)
    if ratio:
        est = Estimate(*(None if x is None else math.exp(x) for x in (est.value, est.ci_low, est.ci_high)), n)
    finite = np.isfinite(samples).any()
    # The draws keep their places (NaN where a resample has no value): they line up with the other metrics'.
    return Difference(est, percentile_p(samples, point) if finite else None, point, samples)


def percentile_p(samples: np.ndarray, point: float, null: float = 0.0) -> float:
    """Two-sided p of "the value differs from ``null``", read off its percentile interval
    (:func:`genderprobe.analysis.stats.percentile_interval`): the smallest alpha whose central
    1 - alpha interval of the samples, held to include ``point``, leaves ``null`` out. So
    p < 1 - confidence exactly when the interval at that confidence leaves ``null`` out.

    The end that faces ``null`` moves with alpha along np.quantile's linear interpolation
    between the sorted samples, so it crosses ``null`` at ``null``'s interpolated position h
    among them: alpha = 2 h / (B - 1). Never below 1 / (B + 1), the finest B samples tell;
    1 at ``null``; samples that are not finite are left out.
    """
    s = np.sort(samples[np.isfinite(samples)])
    if s.size == 0 or point == null:
        return 1.0
    if point < null:  # mirrored, the end that faces null is the lower one
        s, null = -s[::-1], -null
    k = int(np.searchsorted(s, null, side="right"))  # samples at or below null
    if k == s.size:
        return 1.0
    h = 0.0 if k == 0 else (k - 1) + (null - s[k - 1]) / (s[k] - s[k - 1])
    alpha = 2 * h / (s.size - 1) if s.size > 1 else 0.0
    return float(min(1.0, max(alpha, 1 / (s.size + 1))))


def inverted_p(excludes: Callable[[float], bool], alpha: float, smallest: float, below: float) -> float:
    """p by test inversion over nested intervals: the smallest level a whose 1 - a interval leaves 0
    out (``excludes(a)`` says whether it does), found by bisection.

    The interval at ``alpha`` (the one printed) is asked first and the search stays on its side,
    so p < ``alpha`` exactly when that interval leaves 0 out, whatever the bisection's precision.
    Levels below ``smallest`` are not asked (an interval that is not built there); where 0 is
    left out even at ``smallest``, p is ``below`` (another reading of how small p is) held to it.
    """
    shown = excludes(alpha)
    if shown and excludes(smallest):
        return min(smallest, below)
    if not shown and not excludes(1.0):
        return 1.0
    low, high = (smallest, alpha) if shown else (alpha, 1.0)
    for _ in range(_INVERSION_STEPS):
        middle = (low + high) / 2
        low, high = (low, middle) if excludes(middle) else (middle, high)
    return (low + high) / 2


def _leaves_out_zero(estimate: Estimate) -> bool:
    low, high = estimate.ci_low, estimate.ci_high
    return low is not None and high is not None and not low <= 0 <= high


def within(d: Difference, bounds: tuple[float, float] | None) -> Difference:
    """The difference with its interval held to ``bounds``, (lowest, highest) it can be (None:
    unbounded; :func:`genderprobe.analysis.metric_bounds.difference_bounds`). The bounds hold 0,
    so what the interval says of 0, and the p beside it, stay. Bootstrap draws of a - b, each
    run's value within the metric's bounds, lie within them already."""
    e = d.estimate
    if bounds is None or e.ci_low is None or e.ci_high is None:
        return d
    lowest, highest = bounds
    held = dataclasses.replace(e, ci_low=min(max(e.ci_low, lowest), highest),
                               ci_high=max(min(e.ci_high, highest), lowest))
    return dataclasses.replace(d, estimate=held)


def joint_rows(parts: list[ItemScores]) -> np.ndarray:
    """Every part's rows side by side, matched by item id (an item a part lacks is zeros there):
    one resample of these rows resamples the items once for all of them."""
    ids = list(dict.fromkeys(item for part in parts for item in part.items.tolist()))
    where = {item: i for i, item in enumerate(ids)}
    blocks = []
    for part in parts:
        rows = part.rows()
        block = np.zeros((len(ids), rows.shape[1]))
        block[[where[i] for i in part.items.tolist()]] = rows
        blocks.append(block)
    return np.hstack(blocks) if blocks else np.zeros((0, 0))


def paired_rows(a: ItemScores, b: ItemScores) -> np.ndarray:
    """Both runs' rows side by side, matched by item id (an item one run lacks is zeros there)."""
    return joint_rows([a, b])


def paired_difference(a: ItemScores, b: ItemScores, *, ratio: bool = False, n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = 0, confidence: float = CONFIDENCE, sums: np.ndarray | None = None,
                      bounds: tuple[float, float] | None = None) -> Difference:
    """A - B by a paired bootstrap: items are resampled once and the same resample
    scores both runs, so what the items share cancels out.

    Items are matched by id; an item only one run holds counts for nothing in the
    other. ``sums``: the resampled sums of :func:`paired_rows` when already drawn
    (the metrics of one pair of runs share one resample of the items). ``bounds``:
    what A - B can be, its interval held to them (:func:`within`); None for a ratio.
    """
    if sums is None:
        sums = resampled_row_sums(paired_rows(a, b), n_resamples=n_resamples, rng=np.random.default_rng(seed))
    n = len(set(a.items.tolist()) | set(b.items.tolist()))
    k = 2 * _width(a.num)
    return within(_from_sums(a, b, sums[:, :k], sums[:, k:], n, ratio, confidence), bounds)


def unpaired_difference(a: ItemScores, b: ItemScores, *, ratio: bool = False, n_resamples: int = DEFAULT_RESAMPLES,
                        seed: int = 0, confidence: float = CONFIDENCE,
                        sums: tuple[np.ndarray, np.ndarray] | None = None,
                        bounds: tuple[float, float] | None = None) -> Difference:
    """A - B when the runs asked different items: each run's items resampled on their own
    (``sums``: each run's resampled row sums, when already drawn; ``bounds`` as for
    :func:`paired_difference`)."""
    if sums is None:
        rng = np.random.default_rng(seed)
        sums = (resampled_row_sums(a.rows(), n_resamples=n_resamples, rng=rng),
                resampled_row_sums(b.rows(), n_resamples=n_resamples, rng=rng))
    return within(_from_sums(a, b, *sums, len(a.items) + len(b.items), ratio, confidence), bounds)


def _from_sums(a: ItemScores, b: ItemScores, sums_a: np.ndarray, sums_b: np.ndarray, n: int, ratio: bool,
               confidence: float) -> Difference:
    """A - B from each run's resampled sums. A sum of absolute values (``ItemScores.signed``) gets
    :func:`genderprobe.analysis.stats.abs_combination_interval` over both runs' signed parts, and
    the p of that interval by test inversion (:func:`inverted_p`; below the smallest level it is
    built at, the percentile p of the difference's draws)."""
    point_a, point_b = a.value(), b.value()
    if point_a is None or point_b is None:
        return Difference(Estimate(None, None, None, n), None)
    d = _difference(point_a, point_b, a.resampled(sums_a), b.resampled(sums_b), n, ratio, confidence)
    if a.signed is None or b.signed is None or ratio:
        return d
    parts = np.hstack([a.signed_parts(), b.signed_parts()])[0]
    draws = np.hstack([a.signed_parts(sums_a), b.signed_parts(sums_b)])
    weights = [*a.weights, *(-w for w in b.weights)]

    def interval(level: float) -> Estimate:
        return abs_combination_interval(parts, draws, weights, n, level)

    shown = interval(confidence)
    p = None
    if shown.ci_low is not None:
        p = inverted_p(lambda alpha: _leaves_out_zero(interval(1 - alpha)), 1 - confidence, _ABS_SMALLEST_LEVEL,
                       below=1.0 if d.p_value is None else d.p_value)
    return Difference(Estimate(d.estimate.value, shown.ci_low, shown.ci_high, n), p, d.point, d.draws)


def normal_difference(a: Estimate, b: Estimate, *, ratio: bool = False, confidence: float = CONFIDENCE,
                      bounds: tuple[float, float] | None = None) -> Difference:
    """A - B from the two runs' intervals alone, read as independent normal ones
    (on the log scale for a ratio, shown as A / B). No interval where a run has
    none, and no p-value then or where neither interval has any width: they
    say nothing of the spread. The p is the interval's own (p < 1 - confidence
    exactly when it leaves 0 out); ``bounds`` as for :func:`paired_difference`."""
    def usable(x: float | None) -> bool:
        return x is not None and math.isfinite(x) and (not ratio or x > 0)

    if not (usable(a.value) and usable(b.value)):
        return Difference(Estimate(None), None)
    ends = (a.value, a.ci_low, a.ci_high, b.value, b.ci_low, b.ci_high)
    if not all(map(usable, ends)):  # the difference, with no interval
        return Difference(Estimate(a.value / b.value if ratio else a.value - b.value), None)
    from statistics import NormalDist

    va, la, ha, vb, lb, hb = (math.log(x) if ratio else float(x) for x in ends)
    d = va - vb
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    se = math.hypot(ha - la, hb - lb) / (2 * z)  # independent runs: the spreads add in quadrature
    p = None if se == 0 else math.erfc(abs(d) / se / math.sqrt(2))
    est = (d, d - z * se, d + z * se)
    return within(Difference(Estimate(*(math.exp(x) for x in est) if ratio else est), p, d, None, se or None), bounds)
