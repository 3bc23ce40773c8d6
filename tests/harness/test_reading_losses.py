"""Shared reader and loss services: reasoning set aside, lost answers by gender with a test, the warning."""

from __future__ import annotations

import pytest

from genderprobe.analysis.losses import loss_report, unread_warnings, wilson
from genderprobe.reading.reasoning import answer_text, split_reasoning


@pytest.mark.parametrize("raw, answer, reasoning", [
    ("<think>stance: Moral? No...</think>\nSTANCE: B. Immoral", "STANCE: B. Immoral", "stance: Moral? No..."),
    ("<THINKING>a</THINKING>(b)<reasoning>b</reasoning> final", "(b)  final", "a\n\nb"),
    ("I think (a).", "I think (a).", ""),
    ("<think>still weighing (a) against (b)", "", "still weighing (a) against (b)"),
    ("weighing (a)...</think>\n\n(b)", "(b)", "weighing (a)..."),
    ("", "", ""),
    (None, "", ""),
])
def test_reasoning_is_set_aside_and_kept(raw, answer, reasoning):
    assert split_reasoning(raw) == (answer, reasoning)
    assert answer_text(raw) == answer


def test_wilson_interval_is_sound_at_the_ends():
    zero = wilson(0, 20)
    assert zero.value == 0 and zero.ci_low == 0 and 0.1 < zero.ci_high < 0.2
    half = wilson(50, 100)
    assert half.ci_low == pytest.approx(0.4038, abs=1e-3) and half.ci_high == pytest.approx(0.5962, abs=1e-3)
    assert wilson(0, 0).value is None


def test_losses_by_gender_count_test_and_lay_out():
    genders = ["female"] * 100 + ["male"] * 100
    undetected = [True] * 30 + [False] * 70 + [True] * 5 + [False] * 95
    refused = [False] * 200
    report = loss_report(genders, {"undetected": undetected, "refusal": refused}, order=["female", "male"])
    assert report.counts["undetected"] == {"female": (30, 100), "male": (5, 100)}
    assert report.tests["undetected"]["p_value"] < 1e-5
    assert report.tests["refusal"]["p_value"] is None  # nothing refused: nothing to test
    metrics = report.metrics()
    assert metrics["undetected_rate_female"].value == 0.3 and metrics["refusal_rate_male"].value == 0.0
    table = report.table()
    assert table.columns == ["gender", "attempts", "undetected rate", "refusal rate"]
    assert table.rows[0][:2] == ["female", 100] and table.rows[-1][0] == "difference test (p)"
    doc = report.to_json()
    assert doc["kinds"]["undetected"]["groups"]["male"]["lost"] == 5
    with pytest.raises(ValueError, match="3 flags for 200 attempts"):
        loss_report(genders, {"undetected": [True, False, True]})


def test_the_warning_appears_when_many_answers_are_lost_and_names_what_helps():
    genders = ["female", "male"] * 50
    most = loss_report(genders, {"undetected": [i % 10 != 0 for i in range(100)]}).to_json()
    (warning,) = unread_warnings(most, supports_option_scoring=True, scored=False, max_tokens=300)
    assert "90 of 100 answers (90%) could not be used (90 undetected)" in warning
    assert "--score-options" in warning and "300" in warning
    assert "--score-options" not in unread_warnings(most, supports_option_scoring=False, scored=False,
                                                    max_tokens=None)[0]
    few = loss_report(genders, {"undetected": [i % 10 == 0 for i in range(100)]}).to_json()
    assert unread_warnings(few, supports_option_scoring=True, scored=False, max_tokens=300) == []
    assert unread_warnings(None, supports_option_scoring=True, scored=False, max_tokens=300) == []


def test_the_warning_counts_refusals_with_undetected_answers_below_half():
    """demet-names lost 58% (39% undetected, 19% refused) and the old warning, which counted
    undetected answers only and only above half, said nothing."""
    genders = ["female", "male"] * 50
    undetected = [i % 100 < 39 for i in range(100)]
    refused = [39 <= i % 100 < 58 for i in range(100)]
    doc = loss_report(genders, {"undetected": undetected, "refusal": refused}).to_json()
    (warning,) = unread_warnings(doc, supports_option_scoring=False, scored=False, max_tokens=None)
    assert "58 of 100 answers (58%) could not be used (39 undetected, 19 refusal)" in warning
    quarter = loss_report(genders, {"undetected": [i % 4 == 0 for i in range(100)]}).to_json()
    assert unread_warnings(quarter, supports_option_scoring=False, scored=False, max_tokens=None)


def test_kinds_counted_inside_another_are_not_added_twice():
    from genderprobe.analysis.losses import loss_report_from_counts

    doc = loss_report_from_counts({"undetected": {"f": (15, 100), "m": (5, 100)},
                                   "refusal": {"f": (10, 100), "m": (5, 100)}},
                                  within={"refusal": "undetected"}).to_json()
    assert doc["within"] == {"refusal": "undetected"}
    assert unread_warnings(doc, supports_option_scoring=False, scored=False, max_tokens=None) == []  # 10%, not 17.5%


def test_a_report_from_counts_equals_one_from_flags():
    from genderprobe.analysis.losses import loss_report_from_counts

    genders = ["female"] * 10 + ["male"] * 10
    flags = {"undetected": [True] * 3 + [False] * 7 + [True] + [False] * 9}
    a = loss_report(genders, flags, order=["female", "male"]).to_json()
    b = loss_report_from_counts({"undetected": {"female": (3, 10), "male": (1, 10)}}, order=["female", "male"])
    assert a == b.to_json()
    assert wilson(10, 10).ci_high == 1.0 and wilson(0, 10).ci_low == 0.0


def test_losses_of_items_asked_in_both_groups_are_tested_matched():
    # 100 items, each asked once with each gender first: 20 lost in both orders, 8 only with the man
    # first, 1 only with the woman. Counted as independent attempts (28 vs 21 of 100) the chi-square
    # sees nothing (p 0.25); matched, the 9 discordant items are McNemar's test (p 0.039).
    import numpy as np

    from genderprobe.analysis.stats import mcnemar_exact

    lost_male = [True] * 28 + [False] * 72
    lost_female = [True] * 20 + [False] * 8 + [True] + [False] * 71
    genders = ["male"] * 100 + ["female"] * 100
    flags = {"undetected": lost_male + lost_female}
    unmatched = loss_report(genders, flags, order=["male", "female"]).tests["undetected"]
    matched = loss_report(genders, flags, order=["male", "female"], items=[*range(100), *range(100)])
    test = matched.tests["undetected"]
    assert unmatched["p_value"] > 0.2 and unmatched["method"] == "chi-square"
    assert test["p_value"] == pytest.approx(mcnemar_exact(8, 1)) and test["informative_items"] == 9
    assert "McNemar" in test["method"] and test["matched"] is True
    # Attempts and lost counts are the report's as before; one attempt per item and group: Wilson as it was.
    assert matched.counts["undetected"] == {"male": (28, 100), "female": (21, 100)}
    assert matched.rate("undetected", "male") == wilson(28, 100)
    assert np.isclose(matched.to_json()["kinds"]["undetected"]["test"]["p_value"], test["p_value"])


def test_repeated_attempts_of_an_item_widen_the_interval_to_what_they_are_worth():
    # 50 words asked 10 times each; a word is either always lost or never: 500 attempts tell no more
    # than 50 words. The per-answer Wilson interval read them as 500 independent attempts.
    import numpy as np

    rng = np.random.default_rng(0)
    hits = {"clustered": 0, "per answer": 0}
    for _ in range(200):
        hard = rng.random(50) < 0.2  # truth: 20% of the words (and so of the attempts) lost
        lost = np.repeat(hard, 10).tolist()
        report = loss_report(["x"] * 500, {"undetected": lost}, items=np.repeat(np.arange(50), 10).tolist())
        for name, e in (("clustered", report.rate("undetected", "x")), ("per answer", wilson(sum(lost), 500))):
            hits[name] += e.ci_low <= 0.2 <= e.ci_high
    assert hits["clustered"] >= 0.93 * 200 and hits["per answer"] < 0.75 * 200, hits


def test_unmatched_clustered_attempts_divide_the_test_by_their_design_effect():
    # Two word classes, 20 words each asked 10 times, each word always or never lost: the counts 60 vs 30 of
    # 200 look decisive attempt by attempt (p < 0.001) and are 6 vs 3 words of 20 (not significant).
    groups = ["a"] * 200 + ["b"] * 200
    lost = [True] * 60 + [False] * 140 + [True] * 30 + [False] * 170
    items = [i // 10 for i in range(400)]
    plain = loss_report(groups, {"undetected": lost}).tests["undetected"]
    clustered = loss_report(groups, {"undetected": lost}, items=items).tests["undetected"]
    assert plain["p_value"] < 0.001 < 0.2 < clustered["p_value"]
    assert clustered["design_effect"] == pytest.approx(10.0) and "Rao-Scott" in clustered["method"]
    assert (clustered["events"], clustered["n"]) == (90, 400)


def test_more_than_two_matched_groups_are_tested_by_permutation_within_items():
    import numpy as np

    rng = np.random.default_rng(1)
    types = [f"T{t}" for t in range(9)] * 60  # 60 units, each asking nine pairings
    units = np.repeat(np.arange(60), 9).tolist()
    hard = np.repeat(rng.random(60) < 0.3, 9)  # units hard in every pairing: no pairing differs
    null = loss_report(types, {"undetected": hard.tolist()}, order=sorted(set(types)), items=units)
    assert null.tests["undetected"]["p_value"] is None  # no unit lost some pairings and kept others
    one = hard.copy()
    one[np.arange(60) * 9] = True  # pairing T0 lost everywhere
    test = loss_report(types, {"undetected": one.tolist()}, order=sorted(set(types)), items=units).tests["undetected"]
    assert test["p_value"] < 0.001 and "Monte Carlo permutation within items" in test["method"]
