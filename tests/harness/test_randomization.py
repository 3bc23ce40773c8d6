"""Randomization tests of "no gender effect" (analysis/randomization.py) and how breakdown_tests reads them.

Tiny designs have few swap or permutation patterns, so every draw must be one of the exactly computed
values, and 1,000 draws must reach each of them; the observed statistic is the identity pattern's.
"""

from __future__ import annotations

from itertools import combinations, product

import numpy as np
import pytest

from genderprobe.analysis.breakdown_tests import METHODS, breakdown_tests
from genderprobe.analysis.randomization import (
    permutation_draws,
    swap_draws,
    with_randomization_test,
)
from genderprobe.analysis.stats import Estimate
from genderprobe.contract import Headline, ProbeResult


def _rate_difference(f_sum, m_sum, f_n, m_n):
    return f_sum.sum() / f_n.sum() - m_sum.sum() / m_n.sum()


def test_swap_draws_are_the_exact_swap_patterns():
    f_sum, m_sum = np.array([3.0, 0.0]), np.array([1.0, 2.0])
    f_n, m_n = np.array([3.0, 2.0]), np.array([3.0, 4.0])
    observed, draws = swap_draws(f_sum, m_sum, f_n, m_n, n_resamples=1000, seed=5)
    assert observed[0] == pytest.approx(_rate_difference(f_sum, m_sum, f_n, m_n))
    exact = set()
    for swap in product((0, 1), repeat=2):
        s = np.array(swap, bool)
        exact.add(round(_rate_difference(np.where(s, m_sum, f_sum), np.where(s, f_sum, m_sum),
                                         np.where(s, m_n, f_n), np.where(s, f_n, m_n)), 12))
    assert set(np.round(draws[:, 0], 12)) == exact


def test_permutation_draws_are_the_exact_permutations():
    x, first = np.array([1.0, 0.0, 1.0, 1.0]), np.array([True, True, False, False])
    observed, draws = permutation_draws(x, first, n_resamples=1000, seed=2)
    assert observed == pytest.approx(0.5 - 1.0)
    exact = {round(x[list(c)].mean() - np.delete(x, list(c)).mean(), 12) for c in combinations(range(4), 2)}
    assert set(np.round(draws, 12)) == exact
    assert np.isnan(permutation_draws(x, np.ones(4, bool), n_resamples=10, seed=0)[0])  # one gender only


def _tested(est: Estimate) -> dict:
    result = ProbeResult(metrics={}, breakdowns={"diff by word": {"w": est}})
    return breakdown_tests(result, [Headline("diff", "zero", "")], 1000)["diff by word"]


def test_breakdown_tests_read_the_randomization_draws():
    rng = np.random.default_rng(0)
    draws = rng.standard_normal(999)
    est = with_randomization_test([Estimate(2.0, 1.0, 3.0, 40)], np.array([2.0]), draws[:, None])[0]
    test = _tested(est)
    group = test["groups"]["w"]
    assert group["method"] == "randomization" and METHODS["randomization"] in test["method"]
    assert group["p"] == pytest.approx((1 + (np.abs(draws) >= 2.0).sum()) / 1000)
    assert group["p_adjusted"] == pytest.approx(group["p"])  # a family of one


def test_a_group_no_swap_can_move_is_not_tested():
    est = with_randomization_test([Estimate(0.5, 0.1, 0.9, 40)], np.array([0.0]), np.zeros((1000, 1)))[0]
    group = _tested(est)["groups"]["w"]
    assert group["p"] is None and group["note"] == "no spread under the null"
