"""The stratified delete-a-cluster jackknife that masculine_rate prints (issue 44), against a hand computation.

masculine_rate of GestCreative, Inventories and HiringBloomberg is a mean of group means; its printed
interval is point +- t(df) * se with se^2 = sum_h v_h, v_h = (m_h - 1) / m_h * sum_c (theta_(hc) - mean_h)^2,
and df Satterthwaite's (sum_h v_h)^2 / sum_h v_h^2 / (m_h - 1), at most clusters - strata
(genderprobe.analysis.jackknife). benchmarks/abs_zero_coverage.py measures its coverage.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from genderprobe.analysis.jackknife import (
    OUTSIDE,
    cluster_strata,
    delete_cluster_values,
    jackknife_interval,
)


def mean_of_group_means(s: np.ndarray) -> np.ndarray:
    """Columns (score in A, read in A, score in B, read in B) summed -> the mean of the two groups' means."""
    return (s[:, 0] / s[:, 1] + s[:, 2] / s[:, 3]) / 2


def columns(scores: list[float], groups: list[int]) -> np.ndarray:
    out = np.zeros((len(scores), 4))
    for i, (y, g) in enumerate(zip(scores, groups)):
        if g != OUTSIDE:  # an unread item adds nothing
            out[i, 2 * g], out[i, 2 * g + 1] = y, 1
    return out


SCORES, GROUPS = [1, 0, 1, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]  # A: 1, 0, 1; B: 0, 0, 1, 1


def interval(scores, groups, clusters, bounds=(0.0, 1.0)):
    counts = columns(scores, groups)
    point = float(mean_of_group_means(counts.sum(axis=0, keepdims=True))[0])
    replicates = delete_cluster_values(counts, mean_of_group_means, np.asarray(clusters))
    return jackknife_interval(point, replicates, cluster_strata(np.asarray(clusters), np.asarray(groups)),
                              len(scores), bounds=bounds, null=0.5)


def satterthwaite(parts: list[float], clusters: list[int]) -> float:
    return sum(parts) ** 2 / sum(v**2 / (m - 1) for v, m in zip(parts, clusters))


def test_the_interval_is_the_stratified_t_interval_by_hand():
    est = interval(SCORES, GROUPS, list(range(7)), bounds=(-math.inf, math.inf))
    # Each group's s^2 / n (divisor n - 1): A 1/3 / 3, B 1/3 / 4; the mean of two means: a quarter of each.
    parts = [1 / 9 / 4, 1 / 12 / 4]
    se = math.sqrt(sum(parts))
    df = satterthwaite(parts, [3, 4])
    assert df == pytest.approx(4.4546, abs=1e-4)  # fewer than 7 clusters - 2 strata = 5
    t = stats.t.ppf(0.975, df)
    assert est.value == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert (est.ci_low, est.ci_high) == pytest.approx((est.value - t * se, est.value + t * se))
    # p of "differs from 0.5": t's two-sided tail at |value - 0.5| / se, on the same degrees of freedom.
    assert est.p_zero == pytest.approx(2 * stats.t.sf(abs(est.value - 0.5) / se, df))
    # Cut to what the metric can be.
    assert interval(SCORES, GROUPS, list(range(7))).ci_high == 1.0


def test_items_with_one_prompt_are_one_draw():
    # Each item asked twice under one prompt (the same answers): the same value and interval as once.
    once = interval(SCORES, GROUPS, list(range(7)))
    twice = interval(SCORES * 2, GROUPS * 2, list(range(7)) * 2)
    assert (twice.value, twice.ci_low, twice.ci_high) == pytest.approx((once.value, once.ci_low, once.ci_high))
    # Read as 14 independent items instead, it would claim more than the answers hold.
    apart = interval(SCORES * 2, GROUPS * 2, list(range(14)))
    assert apart.ci_high - apart.ci_low < once.ci_high - once.ci_low


def test_unread_items_and_lone_clusters():
    # An item in no group (unread) is left out: the same interval as without it.
    alone = interval(SCORES, GROUPS, list(range(7)))
    with_unread = interval(SCORES + [0], GROUPS + [OUTSIDE], list(range(8)))
    assert (with_unread.value, with_unread.ci_low, with_unread.ci_high) == (alone.value, alone.ci_low, alone.ci_high)
    # A cluster alone in its group is pooled with the smallest other group (it says nothing of its own
    # group's spread): groups {0.4, 0.6}, {0.5, 0.7}, {0.2} count as {0.4, 0.6, 0.2} and {0.5, 0.7}.
    est = jackknife_interval(0.5, np.array([0.4, 0.6, 0.5, 0.7, 0.2]), np.array([0, 0, 1, 1, 2]), 5)
    parts = [2 / 3 * (0.0**2 + 0.2**2 + 0.2**2), 1 / 2 * (0.1**2 + 0.1**2)]
    se = math.sqrt(sum(parts))
    t = stats.t.ppf(0.975, satterthwaite(parts, [3, 2]))  # about 2.6 degrees of freedom, not 5 - 2 = 3
    assert (est.ci_low, est.ci_high) == pytest.approx((0.5 - t * se, 0.5 + t * se))
    # Two lone clusters make one group of two; one cluster has no spread: no interval.
    two = jackknife_interval(0.5, np.array([0.4, 0.6]), np.array([0, 1]), 2)
    assert two.ci_high - 0.5 == pytest.approx(12.706204736174698 * math.sqrt(0.5 * 2 * 0.1**2))  # 1 df


def test_degrees_of_freedom_never_exceed_clusters_less_strata():
    # Equal strata with equal spread: Satterthwaite's df is the design's clusters - strata exactly.
    est = jackknife_interval(0.5, np.array([0.4, 0.6, 0.4, 0.6]), np.array([0, 0, 1, 1]), 4)
    se = math.sqrt(2 * 0.5 * (0.1**2 + 0.1**2))
    assert est.ci_high - 0.5 == pytest.approx(stats.t.ppf(0.975, 2) * se)
    # No spread at all: the design's df, an interval of no width.
    flat = jackknife_interval(0.5, np.array([0.5, 0.5, 0.5]), np.array([0, 0, 0]), 3, null=0.5)
    assert (flat.ci_low, flat.ci_high, flat.p_zero) == (0.5, 0.5, 1.0)
    assert jackknife_interval(0.5, np.array([0.4]), np.array([0]), 1).ci_low is None
