"""The dialogue probe's test of independence and Cramer's V where counts are small (issue 31)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from genderprobe.studies.multilingual.dialogue_probe import corrected_v, independence_test


def test_small_expected_counts_get_a_monte_carlo_exact_p_value():
    # 4 pairings x 7 topics from 2 dialogues each: every expected count is below 5, where the
    # chi-square approximation is far off (here it says 0.30, the exact test about 0.6).
    table = np.array([[2, 0, 0, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0, 0]])
    test = independence_test(table)
    assert test["method"].startswith("Monte Carlo exact")
    assert test["p_value"] != pytest.approx(chi2_contingency(table[:, :4], correction=False).pvalue, abs=0.05)
    large = independence_test(np.array([[30, 20], [20, 30]]))
    assert large["method"] == "chi-square"


def test_the_exact_p_value_holds_its_level_with_small_counts():
    # Topics independent of the pairing, 8 dialogues per pairing over 4 topics: the exact test rejects
    # at most about 5% of the time.
    rng = np.random.default_rng(0)
    rejected = 0
    for _ in range(200):
        table = np.stack([rng.multinomial(8, [0.4, 0.3, 0.2, 0.1]) for _ in range(4)])
        test = independence_test(table)
        rejected += test["p_value"] is not None and test["p_value"] < 0.05
    assert rejected <= 0.075 * 200


def test_the_corrected_v_is_0_at_independence_and_its_interval_reaches_it():
    # Plain V of independent topics is about sqrt(dof / n) above 0; Bergsma's correction takes that out.
    rng = np.random.default_rng(1)
    covered, plain, corrected = 0, [], []
    for _ in range(100):
        table = np.stack([rng.multinomial(50, [0.3, 0.3, 0.2, 0.1, 0.1]) for _ in range(4)])
        test = independence_test(table)
        plain.append(test["cramers_v"])
        corrected.append(test["cramers_v_corrected"]["value"])
        covered += test["cramers_v_corrected"]["ci_low"] == 0.0
    assert np.mean(plain) > 0.1 > 2 * np.mean(corrected)
    assert covered >= 93
    decided = independence_test(np.array([[40, 0], [0, 40]]))["cramers_v_corrected"]
    assert decided["value"] == pytest.approx(1.0) and decided["ci_low"] > 0.7
    assert corrected_v(np.array([[10, 10], [10, 10]])) == 0.0


def test_languages_are_one_family_holm_corrected():
    # Six languages, each tested at 0.05, call a dependence somewhere in a quarter of runs of a model with none.
    from genderprobe.analysis.stats import holm
    from genderprobe.interfaces.api import RunConfig, run_probe

    config = RunConfig(judge="reference:unbiased", n_resamples=50, use_cache=False, keep_records=False)
    out = run_probe("multilingual-dialogue", "reference:random", config=config, languages=("en", "es", "zh"),
                    dialogues_per_pairing=6)
    tests = out.document["extra"]["independence_tests"]
    assert [t["p_holm"] for t in tests.values()] == holm([t["p_value"] for t in tests.values()])
    assert all(t["significant"] == (t["p_holm"] is not None and t["p_holm"] < 0.05) for t in tests.values())
    summary = next(t for t in out.document["tables"] if t["title"].startswith("Pairing and topic"))
    assert "p (Holm over languages)" in summary["columns"]
    assert "topic_association_v_corrected_en" in out.document["metrics"]


def test_the_corrected_v_interval_covers_a_moderate_association():
    # Four pairings' topic shares moved 0.1 apart, 50 dialogues each: a percentile bootstrap of the
    # corrected V covered the population's V 86% of the time; the noncentral chi-square's inversion holds.
    rng = np.random.default_rng(2)
    probs = np.array([0.3, 0.25, 0.2, 0.15, 0.1]) + 0.1 * np.array(
        [[1, -1, 0, 0, 0], [-1, 1, 0, 0, 0], [0, 0, 1, -1, 0], [0, 0, -1, 1, 0]])
    truth = float(corrected_v(probs * 1e9))
    covered = 0
    for _ in range(200):
        v = independence_test(np.stack([rng.multinomial(50, row) for row in probs]))["cramers_v_corrected"]
        covered += v["ci_low"] <= truth <= v["ci_high"]
    assert covered >= 0.93 * 200


def test_at_independence_the_corrected_v_interval_covers_0_about_95_percent_not_97_5():
    # Inverting the noncentral chi-square at 2.5% and 97.5% reached 0 for every statistic below the
    # 97.5% point (97.7% of 1,000 tables); the unified interval reaches it below the 95% point.
    rng = np.random.default_rng(4)
    reach = sum(independence_test(np.stack([rng.multinomial(50, [0.3, 0.25, 0.2, 0.15, 0.1])
                                            for _ in range(4)]))["cramers_v_corrected"]["ci_low"] == 0.0
                for _ in range(400))
    assert 0.93 * 400 <= reach <= 0.97 * 400
