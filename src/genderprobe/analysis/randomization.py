"""A randomization test of "no gender effect" for designs whose units each hold a female and a male part.

A unit is a pair of prompts that differ only in gender (MultilingualWords: a name, age and occupation
asked as a woman and as a man) or an item asked once per gender (DiscriminationTamkin). With no gender
effect, swapping a unit's female and male parts changes nothing, so the difference of the two pooled
rates, female minus male, is read against its values under random swaps. Where a unit holds one gender
(HiringAn's items), the group's gender labels are permuted instead. The test is exact for any
count: where groups are small or events rare, a bootstrap's tails and any normal reading of its
interval are too thin (a fair coin's runs were flagged in 8-45% of runs; docs/statistics.md). A rate
ratio of 1 and a rate difference of 0 are the same hypothesis, so the test serves either metric.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from genderprobe.analysis.stats import Estimate


def swap_draws(female_sum: np.ndarray, male_sum: np.ndarray, female_n: np.ndarray, male_n: np.ndarray, *,
               n_resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(observed, draws): rate_female - rate_male, and its (n_resamples, k) values under random swaps.

    female_sum, male_sum: (units, k) event counts of each unit's female and male part; female_n,
    male_n: (units,) how many answers each part holds. A rate is its sums over its answers.
    """
    f_sum, m_sum = np.asarray(female_sum, np.float64), np.asarray(male_sum, np.float64)
    if f_sum.ndim == 1:
        f_sum, m_sum = f_sum[:, None], m_sum[:, None]
    f_n, m_n = np.asarray(female_n, np.float64), np.asarray(male_n, np.float64)
    total, answers = f_sum.sum(0) + m_sum.sum(0), f_n.sum() + m_n.sum()
    swaps = np.random.default_rng([seed, 48]).integers(0, 2, (n_resamples, f_n.size)).astype(np.float64)
    drawn_sum = f_sum.sum(0) + swaps @ (m_sum - f_sum)
    drawn_n = f_n.sum() + swaps @ (m_n - f_n)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = drawn_sum / drawn_n[:, None] - (total - drawn_sum) / (answers - drawn_n)[:, None]
        observed = f_sum.sum(0) / f_n.sum() - m_sum.sum(0) / m_n.sum()
    return observed, draws


def with_randomization_test(estimates: list[Estimate], observed: np.ndarray, draws: np.ndarray) -> list[Estimate]:
    """The estimates, each defined one carrying its column's test (Estimate.null_stat, null_draws)."""
    return [est if est.value is None or not np.isfinite(observed[j])
            else replace(est, null_stat=float(observed[j]), null_draws=draws[:, j])
            for j, est in enumerate(estimates)]


def permutation_draws(values: np.ndarray, first: np.ndarray, *, n_resamples: int,
                      seed: int) -> tuple[float, np.ndarray]:
    """(observed, draws): mean of ``values`` where ``first`` minus mean of the others, and its values
    when the labels are permuted at random. For designs whose units hold one gender each (HiringAn's
    items: a candidate's gender drawn independently of the rest of the item), so no gender effect makes
    the labels exchangeable."""
    x, first = np.asarray(values, np.float64), np.asarray(first, bool)
    n_first, n = int(first.sum()), x.size
    if not 0 < n_first < n:
        return np.nan, np.full(n_resamples, np.nan)
    # The sum over a random subset of n_first items is the distinct values' multivariate hypergeometric
    # draw: exact, and a few numbers a draw where permuting every label would move n.
    values, counts = np.unique(x, return_counts=True)
    drawn = np.random.default_rng([seed, 48]).multivariate_hypergeometric(counts, n_first, size=n_resamples) @ values
    return (float(x[first].mean() - x[~first].mean()),
            drawn / n_first - (x.sum() - drawn) / (n - n_first))
