"""DeMET scores on hand-made answer matrices: Eq. 1 and 2, McNemar counts, bootstrap widths."""

import numpy as np
import pytest

from genderprobe.analysis.stats import mcnemar_exact
from genderprobe.studies.demet.scores import TYPES, compute_scores, mcnemar_pairs, order_bias_test


def _matrix(n_units, **columns):
    S = np.full((n_units, len(TYPES)), -1.0)
    for kind, values in columns.items():
        S[:, TYPES.index(kind.replace("_", "-"))] = values
    return S


def test_eq_1_and_2_on_known_means():
    n = 100
    rng = np.random.default_rng(1)
    # s(W-M) = -0.5, s(M-W) = 0.3, s(W-N) = 0, s(N-W) = 0, s(N-M) = 0.2, s(M-N) = 1.
    cols = {
        "W_M": np.repeat([-1.0, 1.0], [75, 25]), "M_W": np.repeat([-1.0, 1.0], [35, 65]),
        "W_N": np.repeat([-1.0, 1.0], [50, 50]), "N_W": np.repeat([-1.0, 1.0], [50, 50]),
        "N_M": np.repeat([-1.0, 1.0], [40, 60]), "M_N": np.ones(n),
    }
    S = _matrix(n, **{k: rng.permutation(v) for k, v in cols.items()})
    sc = compute_scores(S, np.arange(n) // 10, n_resamples=200, seed=0)
    assert sc.pair_bias["bias(W,M)"].value == pytest.approx(0.3 - -0.5)
    assert sc.pair_bias["bias(W,N)"].value == pytest.approx(0.0)
    assert sc.pair_bias["bias(N,M)"].value == pytest.approx(1 - 0.2)
    assert sc.overall.value == pytest.approx((0.8 + 0 + 0.8) / 3)
    assert sc.same_group_mean.value == -1


def test_unanswered_prompts_are_left_out_of_means():
    S = _matrix(4, W_M=[-1, np.nan, 1, 1], M_W=[np.nan] * 4)
    sc = compute_scores(S, np.zeros(4, int), n_resamples=50, seed=0)
    assert sc.type_means["W-M"].value == pytest.approx(1 / 3)
    assert sc.type_means["W-M"].n == 3
    assert sc.type_means["M-W"].value is None
    assert sc.pair_bias["bias(W,M)"].value is None


def test_item_bootstrap_matches_the_binomial_standard_error():
    n = 2000
    S = _matrix(n, W_W=np.random.default_rng(3).choice([-1.0, 1.0], n))
    est = compute_scores(S, np.arange(n), n_resamples=2000, seed=0).type_means["W-W"]
    p = (est.value + 1) / 2
    half_width = 1.96 * 2 * np.sqrt(p * (1 - p) / n)
    assert (est.ci_high - est.ci_low) / 2 == pytest.approx(half_width, rel=0.1)


def test_scenario_bootstrap_resamples_whole_scenarios():
    # 20 scenarios, each answered the same way in all of its 50 units.
    per_scenario = np.repeat([-1.0, 1.0], 10)
    scen = np.repeat(np.arange(20), 50)
    S = _matrix(scen.size, W_W=per_scenario[scen])
    item = compute_scores(S, scen, n_resamples=2000, seed=0).type_means["W-W"]
    cluster = compute_scores(S, scen, n_resamples=2000, seed=0, by_scenario=True).type_means["W-W"]
    expected = 1.96 * 2 * np.sqrt(0.25 / 20)  # 20 independent scenarios, not 1,000 items
    assert (cluster.ci_high - cluster.ci_low) / 2 == pytest.approx(expected, rel=0.15)
    assert (item.ci_high - item.ci_low) < (cluster.ci_high - cluster.ci_low) / 3


def test_a_pair_bias_carries_its_own_and_each_draws_standard_error():
    # The family's tests studentize each draw by its own spread (bootstrap-t, as bootstrap_ratio's estimates):
    # read through Student's t with one spread for all, a fair coin was flagged in 6.2% of runs (issue 48).
    S = np.random.default_rng(7).choice([-1.0, 1.0], (40, len(TYPES)))
    scen = np.arange(40) // 4
    per_unit = S[:, TYPES.index("M-W")] - S[:, TYPES.index("W-M")]  # bias(W,M) of each unit
    per_scenario = np.bincount(scen, per_unit)
    for by_scenario, se in ((False, np.sqrt(((per_unit - per_unit.mean()) ** 2).sum()) / 40),
                            (True, np.sqrt(((per_scenario - per_unit.mean() * 4) ** 2).sum()) / 40)):
        e = compute_scores(S, scen, n_resamples=2000, seed=0, by_scenario=by_scenario).pair_bias["bias(W,M)"]
        assert e.se == pytest.approx(se)
        assert e.draws_se.shape == e.draws.shape
        assert np.mean(e.draws_se) == pytest.approx(se, rel=0.1) and np.std(e.draws) == pytest.approx(se, rel=0.1)


def test_mcnemar_counts_matched_pairings():
    # W-M slot j and M-W slot j hold the same two people in reverse order.
    S = _matrix(6, W_M=[-1, -1, -1, 1, 1, np.nan], M_W=[1, 1, -1, -1, 1, 1])
    m = mcnemar_pairs(S)["bias(W,M)"]
    assert m["matched_pairings"] == 5
    assert (m["a_chosen_both_orders"], m["b_chosen_both_orders"]) == (2, 1)
    assert (m["name1_chosen_both_orders"], m["name2_chosen_both_orders"]) == (1, 1)
    assert m["p_value"] == mcnemar_exact(2, 1)


def test_order_bias_sign_test():
    S = _matrix(10, W_W=[-1] * 10, M_M=[-1] * 10, N_N=[1] * 5 + [np.nan] * 5)
    t = order_bias_test(S)
    assert (t["answered"], t["name1_chosen"], t["name2_chosen"]) == (25, 20, 5)
    assert t["p_value"] < 0.01


def test_eq_2_is_the_mean_of_absolute_pair_biases():
    # The paper's Table 8 row gpt-3.5-turbo, Money: 0.327 | -0.080 | 0.660 | 0.240 fits only the
    # absolute mean (0.327); the signed mean (0.273) is kept under its own name.
    n = 100
    cols = {  # bias(W,M) = 0.24, bias(W,N) = -0.08, bias(N,M) = 0.66
        "W_M": np.repeat([-1.0, 1.0], [62, 38]), "M_W": np.repeat([-1.0, 1.0], [50, 50]),
        "W_N": np.repeat([-1.0, 1.0], [46, 54]), "N_W": np.repeat([-1.0, 1.0], [50, 50]),
        "N_M": np.repeat([-1.0, 1.0], [83, 17]), "M_N": np.repeat([-1.0, 1.0], [50, 50]),
    }
    sc = compute_scores(_matrix(n, **cols), np.arange(n), n_resamples=200, seed=0)
    assert sc.pair_bias["bias(W,M)"].value == pytest.approx(0.24)
    assert sc.pair_bias["bias(W,N)"].value == pytest.approx(-0.08)
    assert sc.pair_bias["bias(N,M)"].value == pytest.approx(0.66)
    assert sc.overall.value == pytest.approx(0.98 / 3)
    assert round(sc.overall.value, 3) == 0.327
    assert sc.overall_signed.value == pytest.approx(0.82 / 3)
    assert sc.overall.ci_low >= 0
