"""Intervals that keep their promise where a metric is a sum of absolute values (issue 31).

DeMET's mixed_gender_bias (the mean of three absolute pair biases) and the
difference of two runs' diff_abs_success_rate are absolute values of signed
estimates, some near 0. Their intervals (genderprobe.analysis.stats.abs_combination_interval)
must hold the truth at least 95% of the time whatever the signed values are;
here checked on normal estimates and on DeMET's own scores of simulated answers.
"""

from __future__ import annotations

import numpy as np
import pytest

from genderprobe.analysis.comparison_stats import (
    ItemScores,
    paired_difference,
    paired_rows,
    resampled_row_sums,
)
from genderprobe.analysis.stats import (
    ABS_RESAMPLES,
    FOLDED,
    Estimate,
    abs_combination_interval,
    folded_abs,
    max_abs_interval,
)
from genderprobe.studies.demet.scores import TYPES, compute_scores
from genderprobe.studies.relationship_levy.paired import _diff, _diff_abs


def coverage(theta, weights, runs=250, sigma=0.1, seed=0):
    rng = np.random.default_rng(seed)
    theta, weights = np.asarray(theta, float), np.asarray(weights, float)
    truth, hits = weights @ np.abs(theta), 0
    for _ in range(runs):
        est = theta + sigma * rng.standard_normal(theta.size)
        e = abs_combination_interval(est, est + sigma * rng.standard_normal((ABS_RESAMPLES, theta.size)), weights, 100)
        hits += e.ci_low - 1e-12 <= truth <= e.ci_high + 1e-12
    return hits / runs


@pytest.mark.parametrize(("theta", "weights"), [
    ([0, 0, 0], [1 / 3] * 3),  # DeMET with no bias: every sign open
    ([0, 0.5, 0.5], [1 / 3] * 3),  # DeMET's calibration models: bias(W,N) = 0 beside two clear ones
    ([0.5, 1.0, 1.0], [1 / 3] * 3),  # every sign known
    ([0.5, 0.0], [1, -1]),  # two runs' absolute metrics, B without bias
])
def test_sums_of_absolute_values_hold_their_95_percent(theta, weights):
    assert 0.94 <= coverage(theta, weights) <= 0.985


def _least_favourable(points, draws, weights, alpha=0.05, sign_level=0.005, kink_tail=0.005):
    """The interval computed afresh: the error's quantiles at every corner of the joint 99.5%
    max-|t| box (each coordinate's ends, and 0 where the box holds it), the largest upper one
    and the smallest lower one."""
    import itertools

    points, weights = np.asarray(points, float), np.asarray(weights, float)
    z = draws - points
    se = z.std(axis=0)
    c = np.quantile((np.abs(z) / se).max(axis=1), 1 - sign_level)
    ends = [(p - c * s, p + c * s) for p, s in zip(points, se)]
    holds_0 = [a <= 0 <= b for a, b in ends]
    open_w = weights[holds_0]
    rest = alpha - sign_level
    tails = ((kink_tail, rest - kink_tail) if open_w.size and (open_w > 0).all() else
             (rest - kink_tail, kink_tail) if open_w.size and (open_w < 0).all() else (rest / 2, rest / 2))
    highs, lows = [], []
    for corner in itertools.product(*[(a, b, 0.0) if h else (a, b) for (a, b), h in zip(ends, holds_0)]):
        t = np.array(corner)
        error = (np.abs(t + z) - np.abs(t)) @ weights
        lows.append(np.quantile(error, tails[0]))
        highs.append(np.quantile(error, 1 - tails[1]))
    value = weights @ np.abs(points)
    low = value - max(highs)
    if (weights >= 0).all():
        low = max(low, 0.0)
    return min(low, value), max(value - min(lows), value)


@pytest.mark.parametrize(("points", "weights"), [
    ([0.2, 0.01], [1.0, -1.0]),  # compare: A settled, B open
    ([0.03, -0.01], [1.0, -1.0]),  # both open, weights of both signs
    ([0.02, -0.4, -0.45], [1 / 3] * 3),  # DeMET: bias(W,N) open, two settled
    ([0.05, 0.1, -0.02], [1 / 3] * 3),
])
def test_the_interval_is_the_least_favourable_corner_of_the_sign_box(points, weights):
    rng = np.random.default_rng(11)
    draws = np.asarray(points) + 0.04 * rng.standard_normal((ABS_RESAMPLES, len(points))) @ np.diag(
        np.linspace(1, 2, len(points)))
    e = abs_combination_interval(points, draws, weights, 300)
    assert (e.ci_low, e.ci_high) == pytest.approx(_least_favourable(points, draws, weights), abs=1e-12)


def test_beside_an_unbiased_run_one_end_misses_near_its_budget_and_the_other_is_not_padded():
    # A - B of |theta|, A 5 standard errors from 0, B at 0: the error is Z_A - |Z_B|. Its lower tail is set
    # by B's corner at 0 (exact there) and takes 1 - 0.95 - 0.005 - 0.005 = 4%; its upper one by B's far
    # corners (Z_A -+ Z_B, conservative at B = 0). The Bonferroni sum it replaces (a percentile interval
    # of A's part plus B's folded max-|t| box) was 7.9 standard errors wide here and covered 98-99%.
    rng = np.random.default_rng(3)
    runs, truth, below, above, width = 400, 5.0, 0, 0, 0.0
    for _ in range(runs):
        est = np.array([5.0, 0.0]) + rng.standard_normal(2)
        e = abs_combination_interval(est, est + rng.standard_normal((2000, 2)), [1.0, -1.0], 100)
        below += e.ci_high < truth
        above += e.ci_low > truth
        width += e.ci_high - e.ci_low
    assert 0.02 <= below / runs <= 0.065 and above / runs <= 0.01, (below, above)
    assert width / runs < 7.0


def test_the_interval_holds_its_value_and_stays_above_0_for_positive_weights():
    rng = np.random.default_rng(1)
    e = abs_combination_interval([0.01, -0.02], rng.standard_normal((ABS_RESAMPLES, 2)) * 0.1, [0.5, 0.5], 10)
    assert e.ci_low == 0.0 <= e.value <= e.ci_high
    assert abs_combination_interval([np.nan], np.zeros((10, 1)), [1], 3).ci_low is None


def test_demet_folded_interval_reaches_0_with_no_bias():
    # The folded Bonferroni interval read 98.3% quantiles from the run's 1,000 resamples (about 8
    # in each tail) and covered 93.5% / 92.0% with no bias (per_type 2 / 4); the two-step interval
    # draws ABS_RESAMPLES of its own (benchmarks/coverage.py measures it on 1,000 runs).
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(100):
        S = rng.choice([-1.0, 1.0], size=(58, len(TYPES)))
        scores = compute_scores(S, np.repeat(np.arange(29), 2), n_resamples=200, seed=int(rng.integers(1 << 30)))
        assert scores.overall_folded.value == pytest.approx(scores.overall.value)
        hits += scores.overall_folded.ci_low <= 0.0
    assert hits >= 90


def test_the_difference_of_two_runs_absolute_metrics_covers_when_one_is_unbiased():
    # The percentile interval of |a| - |b| covered 90.0% / 91.5% (300 / 400 pairs) with B unbiased:
    # |b-hat| is biased away from 0. Here A has diff_success_rate 0.2 and B none: the truth is 0.2.
    rng = np.random.default_rng(2)
    items, ids, ones = 300, np.arange(300), np.ones(300)
    hits = {"two-step": 0, "percentile": 0}
    for _ in range(200):
        a = rng.binomial(2, 0.6, items) / 2
        b = rng.binomial(2, 0.5, items) / 2
        runs = [(ItemScores(ids, x, ones, _diff_abs, signed=_diff, weights=(1.0,)), ItemScores(ids, x, ones, _diff_abs))
                for x in (a, b)]
        sums = resampled_row_sums(paired_rows(runs[0][0], runs[1][0]), n_resamples=ABS_RESAMPLES,
                                  rng=np.random.default_rng(int(rng.integers(1 << 30))))
        for name, i in (("two-step", 0), ("percentile", 1)):
            e = paired_difference(runs[0][i], runs[1][i], sums=sums).estimate
            hits[name] += e.ci_low <= 0.2 <= e.ci_high
    assert hits["two-step"] >= 0.95 * 200 > hits["percentile"], hits


def test_the_crossed_interval_holds_where_names_and_scenarios_pull_their_items():
    # RelationshipLevy's items share scenarios (item j: j mod 109) and names (400 men, 400 women): where a
    # name leans its items one way, the item interval reads a name's items as independent and misses
    # "names like these"; the multiway cluster-robust one counts each name once.
    from genderprobe.analysis.stats import bootstrap_ratio, crossed_cluster_ratio

    rng = np.random.default_rng(6)
    items, scenario = 3000, np.arange(3000) % 109
    hits = {"item": 0, "crossed": 0}
    widths = {"item": [], "crossed": []}
    for run in range(100):
        s, m, w = rng.normal(0, 0.1, 109), rng.normal(0, 0.1, 400), rng.normal(0, 0.1, 400)
        man, woman = rng.integers(0, 400, items), rng.integers(0, 400, items)
        share = rng.binomial(2, np.clip(0.6 + s[scenario] + m[man] + w[woman], 0, 1)) / 2
        for name, e in (("item", bootstrap_ratio(share, seed=run, transform=lambda x: 2 * x - 1)),
                        ("crossed", crossed_cluster_ratio(share, factors=(scenario, man, woman),
                                                          transform=lambda x: 2 * x - 1))):
            hits[name] += e.ci_low <= 0.2 <= e.ci_high
            widths[name].append(e.ci_high - e.ci_low)
    assert hits["crossed"] >= 92 and hits["item"] < 85, hits
    # Where nothing but the answers varies, it is about as wide as the item interval.
    share = rng.binomial(2, 0.6, items) / 2
    man, woman = rng.integers(0, 400, items), rng.integers(0, 400, items)
    plain = crossed_cluster_ratio(share, factors=(scenario, man, woman))
    item = bootstrap_ratio(share)
    assert (plain.ci_high - plain.ci_low) < 1.3 * (item.ci_high - item.ci_low)


@pytest.mark.parametrize("theta", [[0.0, 0.0, 0.0], [0.0, 0.2, -0.2], [0.3, 0.1, 0.0]])
def test_the_maximum_of_absolute_values_holds_its_95_percent(theta):
    """max_g |theta_g| (issue 44: DiscriminationTamkin's, Dreaddit's and Isear's max_diff) from correlated
    normal estimates: the max-|t| box's interval holds it at least 95% of the time, also where every
    theta_g is 0, where the percentile interval of the maximum never does."""
    rng = np.random.default_rng(4)
    theta = np.asarray(theta)
    mix = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.5], [0.5, 0.0, 1.0]]) * 0.05  # correlated gaps
    hits = percentile_hits = 0
    for _ in range(400):
        est = theta + rng.standard_normal(3) @ mix
        draws = est + rng.standard_normal((1000, 3)) @ mix
        e = max_abs_interval(est, draws, 100)
        truth = np.abs(theta).max()
        hits += e.ci_low <= truth <= e.ci_high
        percentile_hits += np.quantile(np.abs(draws).max(axis=1), 0.025) <= truth
    assert hits / 400 >= 0.94
    if not theta.any():
        assert percentile_hits == 0


def test_an_absolute_value_keeps_its_value_and_names_its_interval():
    signed = Estimate(-0.02, -0.05, 0.01, 80, p_zero=0.4)
    printed = folded_abs(Estimate(0.02, 0.004, 0.05, 80), signed, (-0.01, 0.05))
    assert (printed.value, printed.ci_low, printed.ci_high, printed.n) == (0.02, 0.0, 0.05, 80)
    assert printed.p_zero == 0.4  # |d| differs from 0 exactly where d does
    shown = printed.to_json()
    assert shown["ci_method"] == FOLDED and shown["genderbench_ci"]["method"] == "normal_fit"
    assert "ci_method" not in signed.to_json()  # every other interval is written as before
    box = max_abs_interval([0.3, 0.0], np.array([[0.3, 0.0], [0.9, 0.1], [-0.1, -0.1]] * 10), 10, bound=1.0)
    assert box.ci_high <= 1.0 and box.ci_low <= 0.3 <= box.ci_high
