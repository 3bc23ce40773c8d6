"""Comparing two runs (``genderprobe compare``): is model A's headline different from model B's?

Per-item scores (:class:`ItemScores`) rebuild a run's metric from its records;
a paired bootstrap resamples items once for both runs, so what the items share
cancels; runs on different items are resampled on their own, and runs without
records are compared from their intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from genderprobe.stats import (
    _MAX_BLOCK,
    CONFIDENCE,
    DEFAULT_RESAMPLES,
    Estimate,
    bootstrap_p,
    mcnemar_exact,
    percentile_interval,
)


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
    same items name them alike. ``choices``, where an exact paired test fits:
    per answer (any key two runs share), 1 or 0 for the event whose rate the
    metric measures; McNemar's test pairs them by key.
    """

    items: np.ndarray
    num: np.ndarray
    den: np.ndarray
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray] = ratio_of_sums
    choices: dict | None = None

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


def _column(a: np.ndarray) -> np.ndarray:
    return a.reshape(len(a), -1)


def _width(a: np.ndarray) -> int:
    return 1 if a.ndim == 1 else a.shape[1]


@dataclass(frozen=True)
class Difference:
    """run A against run B: A - B (or A / B for a ratio) with its interval and two-sided p-value."""

    estimate: Estimate
    p_value: float | None


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
    finite = samples[np.isfinite(samples)]
    return Difference(est, bootstrap_p(finite, point, 0.0) if finite.size else None)


def paired_rows(a: ItemScores, b: ItemScores) -> np.ndarray:
    """Both runs' rows side by side, matched by item id (an item one run lacks is zeros there)."""
    ids = list(dict.fromkeys([*a.items.tolist(), *b.items.tolist()]))
    where = {item: i for i, item in enumerate(ids)}
    rows_a, rows_b = a.rows(), b.rows()
    rows = np.zeros((len(ids), rows_a.shape[1] + rows_b.shape[1]))
    rows[[where[i] for i in a.items.tolist()], : rows_a.shape[1]] = rows_a
    rows[[where[i] for i in b.items.tolist()], rows_a.shape[1] :] = rows_b
    return rows


def paired_difference(a: ItemScores, b: ItemScores, *, ratio: bool = False, n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = 0, confidence: float = CONFIDENCE, sums: np.ndarray | None = None) -> Difference:
    """A - B by a paired bootstrap: items are resampled once and the same resample
    scores both runs, so what the items share cancels out.

    Items are matched by id; an item only one run holds counts for nothing in the
    other. ``sums``: the resampled sums of :func:`paired_rows` when already drawn
    (metrics built from the same parts share them).
    """
    point_a, point_b = a.value(), b.value()
    if sums is None:
        sums = resampled_row_sums(paired_rows(a, b), n_resamples=n_resamples, rng=np.random.default_rng(seed))
    n = len(set(a.items.tolist()) | set(b.items.tolist()))
    if point_a is None or point_b is None:
        return Difference(Estimate(None, None, None, n), None)
    k = 2 * _width(a.num)
    return _difference(point_a, point_b, a.resampled(sums[:, :k]), b.resampled(sums[:, k:]), n, ratio, confidence)


def unpaired_difference(a: ItemScores, b: ItemScores, *, ratio: bool = False, n_resamples: int = DEFAULT_RESAMPLES,
                        seed: int = 0, confidence: float = CONFIDENCE) -> Difference:
    """A - B when the runs asked different items: each run's items resampled on their own."""
    point_a, point_b = a.value(), b.value()
    n = len(a.items) + len(b.items)
    if point_a is None or point_b is None:
        return Difference(Estimate(None, None, None, n), None)
    rng = np.random.default_rng(seed)
    boot_a = a.resampled(resampled_row_sums(a.rows(), n_resamples=n_resamples, rng=rng))
    boot_b = b.resampled(resampled_row_sums(b.rows(), n_resamples=n_resamples, rng=rng))
    return _difference(point_a, point_b, boot_a, boot_b, n, ratio, confidence)


def normal_difference(a: Estimate, b: Estimate, *, ratio: bool = False, confidence: float = CONFIDENCE) -> Difference:
    """A - B from the two runs' intervals alone, read as independent normal ones
    (on the log scale for a ratio, shown as A / B). No interval where a run has
    none, and no p-value then or where neither interval has any width: they
    say nothing of the spread."""
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
    return Difference(Estimate(*(math.exp(x) for x in est) if ratio else est), p)


def paired_choices_test(a: dict, b: dict) -> tuple[float, int, int] | None:
    """McNemar's exact test of two runs' 0/1 choices matched by key: (p, b, c), with
    b the answers where A chose 1 and B 0, c the reverse; None when no key is shared."""
    shared = a.keys() & b.keys()
    if not shared:
        return None
    only_a = sum(1 for k in shared if a[k] and not b[k])
    only_b = sum(1 for k in shared if b[k] and not a[k])
    return mcnemar_exact(only_a, only_b), only_a, only_b


