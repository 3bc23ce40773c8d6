"""Shared reader and loss services: reasoning set aside, lost answers by gender with a test, the warning."""

from __future__ import annotations

import pytest

from genderprobe.losses import loss_report, unread_warnings, wilson
from genderprobe.reading import answer_text, split_reasoning


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
    from genderprobe.losses import loss_report_from_counts

    doc = loss_report_from_counts({"undetected": {"f": (15, 100), "m": (5, 100)},
                                   "refusal": {"f": (10, 100), "m": (5, 100)}},
                                  within={"refusal": "undetected"}).to_json()
    assert doc["within"] == {"refusal": "undetected"}
    assert unread_warnings(doc, supports_option_scoring=False, scored=False, max_tokens=None) == []  # 10%, not 17.5%


def test_a_report_from_counts_equals_one_from_flags():
    from genderprobe.losses import loss_report_from_counts

    genders = ["female"] * 10 + ["male"] * 10
    flags = {"undetected": [True] * 3 + [False] * 7 + [True] + [False] * 9}
    a = loss_report(genders, flags, order=["female", "male"]).to_json()
    b = loss_report_from_counts({"undetected": {"female": (3, 10), "male": (1, 10)}}, order=["female", "male"])
    assert a == b.to_json()
    assert wilson(10, 10).ci_high == 1.0 and wilson(0, 10).ci_low == 0.0
