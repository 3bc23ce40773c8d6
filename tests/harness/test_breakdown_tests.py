"""Breakdowns: which groups differ from the neutral value, after Holm's correction across each breakdown.

The reference models give known answers: reference:biased differs in every
group, reference:first-option (position only, cancelled by the two orders) in
none, and reference:random differs nowhere but
shows raw 95% intervals that leave 0 out about once in twenty; the Holm flags
must stay near the nominal 5% per breakdown while those raw exclusions pile up.
"""

from __future__ import annotations

import numpy as np
import pytest
from rich.console import Console

from genderprobe import charts
from genderprobe.api import RunConfig, run_probe
from genderprobe.breakdown_tests import MARKER, MIN_ITEMS, breakdown_tests, excludes
from genderprobe.contract import Headline, ProbeResult, Table
from genderprobe.report import render_report
from genderprobe.stats import Estimate, bootstrap_p, interval_p, percentile_interval
from genderprobe.terminal import print_results


def levy(model: str, seed: int = 0, sample_k: int = 1000) -> dict:
    config = RunConfig(seed=seed, use_cache=False, keep_records=False)
    return run_probe("relationship-levy", model, config=config, sample_k=sample_k).document


DIMENSIONS = ("topic", "source", "label", "race_pairing")


def test_reference_biased_differs_in_every_group():
    doc = levy("reference:biased", sample_k=2000)
    assert set(doc["breakdown_tests"]) == set(DIMENSIONS)
    for dim, test in doc["breakdown_tests"].items():
        assert (test["metric"], test["null"]) == ("diff_success_rate", 0.0), dim
        assert test["family"] == len(doc["breakdowns"][dim]) > 0, dim  # every group tested
        assert all(g["flag"] for g in test["groups"].values()), dim
        # Every resample is 1: the bootstrap can only say p <= 2 / (B + 1).
        assert all(g["p"] == pytest.approx(2 / 1001) for g in test["groups"].values()), dim


def test_reference_first_option_differs_in_no_group():
    doc = levy("reference:first-option")
    for dim, test in doc["breakdown_tests"].items():
        assert test["family"] > 0, dim
        assert not any(g["flag"] for g in test["groups"].values()), dim
        assert all(g["p"] == 1.0 for g in test["groups"].values() if g["p"] is not None), dim


def test_reference_random_keeps_the_family_wise_rate_while_raw_intervals_miss_often():
    # Measured with 1,000 items and 1,000 resamples. Seeds 0-299: 4.8% of the 8,700 group
    # intervals leave 0 out, so 28% of the breakdowns (74% of runs) show a group "away from 0";
    # after Holm 3.4% of the breakdowns hold a flag (41 of 1,200), and 11% of runs, each run
    # having four breakdowns, each its own family. The 40 seeds here: 5.6% of 1,160 intervals
    # leave 0 out, in 35% of the 160 breakdowns (85% of runs); 5 breakdowns hold a flag (3.1%),
    # in 4 runs (10%).
    breakdowns = flagged = raw = runs_flagged = 0
    for seed in range(40):
        doc = levy("reference:random", seed=seed)
        run_flagged = False
        for dim, test in doc["breakdown_tests"].items():
            groups = doc["breakdowns"][dim]
            breakdowns += 1
            has_flag = any(g["flag"] for g in test["groups"].values())
            flagged += has_flag
            run_flagged |= has_flag
            raw += any(excludes(e, 0.0) for e in groups.values())
            # A flag always sits on a raw interval that leaves 0 out; not the other way round.
            assert all(excludes(groups[g], 0.0) for g, t in test["groups"].items() if t["flag"]), dim
        runs_flagged += run_flagged
    assert flagged / breakdowns <= 0.12  # nominal 0.05 per breakdown
    assert runs_flagged / 40 <= 0.3  # four families per run
    assert raw / breakdowns >= 0.15 and raw >= 3 * max(flagged, 1)


# --- Which metric a breakdown belongs to, and how a group is tested ---------------------


def est(value, low, high, n=100, p_zero=None, p_one=None):
    return Estimate(value, low, high, n, p_zero=p_zero, p_one=p_one)


HEADLINES = [
    Headline("diff_abs_success_rate", "lower"),
    Headline("diff_success_rate", "zero"),
    Headline("bias_w_m", "zero"),
    Headline("di_communal", "one"),
    Headline("di_outlook", "one"),
    Headline("mse", "lower"),
]


def run_breakdown_tests(breakdowns, chart_list=(), n_resamples=1000):
    return breakdown_tests(ProbeResult(metrics={}, breakdowns=breakdowns, charts=list(chart_list)),
                           HEADLINES, n_resamples)


def test_a_breakdown_is_tied_to_its_headline_by_name_by_chart_or_by_family():
    dims = ("bias(W,M) by label", "topic", "di_word_en", "mse_by_seed_type", "s(A-B)", "mixed")
    breakdowns = {dim: {"a": est(0.1 + i / 100, -0.1, 0.3, p_zero=0.4, p_one=0.001)} for i, dim in enumerate(dims)}
    out = run_breakdown_tests(breakdowns, [charts.forest("diff_by_topic", "diff_success_rate by topic",
                                                          breakdowns["topic"])])
    assert (out["bias(W,M) by label"]["metric"], out["bias(W,M) by label"]["null"]) == ("bias_w_m", 0.0)
    assert (out["topic"]["metric"], out["topic"]["null"]) == ("diff_success_rate", 0.0)
    assert (out["di_word_en"]["metric"], out["di_word_en"]["null"]) == ("di_*", 1.0)
    assert out["di_word_en"]["groups"]["a"]["p"] == 0.001  # the p-value against 1
    assert out["mse_by_seed_type"]["metric"] == "mse" and "better lower" in out["mse_by_seed_type"]["note"]
    for dim in ("s(A-B)", "mixed"):
        assert out[dim]["metric"] is None and out[dim]["groups"] == {} and "Not tested" in out[dim]["note"]


def test_small_undefined_and_widthless_groups_are_left_out_of_the_family():
    out = run_breakdown_tests({"bias_w_m by topic": {
        "small": est(0.9, 0.8, 1.0, n=MIN_ITEMS - 1, p_zero=0.001),
        "undefined": est(None, None, None),
        "no width": est(0.5, 0.5, 0.5),  # no resamples kept: read from the interval, which has no spread
        "open": est(1.5, 0.2, float("inf")),
        "kept": est(0.9, 0.8, 1.0, p_zero=0.01),
    }})["bias_w_m by topic"]
    assert out["family"] == 1
    assert out["groups"]["kept"] == {"p": 0.01, "p_holm": 0.01, "flag": True, "method": "bootstrap"}
    assert {g: t.get("note") for g, t in out["groups"].items() if g != "kept"} == {
        "small": f"fewer than {MIN_ITEMS} items", "undefined": "undefined",
        "no width": "an interval of no width", "open": "an open interval"}


def test_holm_decides_the_flag_not_the_raw_p_value():
    groups = {"a": est(0.5, 0.3, 0.7, p_zero=0.004), "b": est(0.2, 0.01, 0.4, p_zero=0.03),
              "c": est(0.0, -0.2, 0.2, p_zero=1.0)}
    out = run_breakdown_tests({"bias_w_m by topic": groups})["bias_w_m by topic"]["groups"]
    assert [out[g]["p_holm"] for g in "abc"] == pytest.approx([0.012, 0.06, 1.0])
    assert [out[g]["flag"] for g in "abc"] == [True, False, False]


def test_too_few_resamples_for_the_family_is_said():
    groups = {str(i): est(0.5, 0.3, 0.7, p_zero=2 / 201) for i in range(12)}
    note = run_breakdown_tests({"bias_w_m by topic": groups}, n_resamples=200)["bias_w_m by topic"]["note"]
    assert "No group can be flagged" in note and "--resamples 480" in note


def test_interval_p_values_agree_with_the_interval_and_bootstrap_ones_with_the_resamples():
    # Read from the interval: p < 0.05 exactly where the interval leaves the neutral value out,
    # however skewed (the half facing it sets the spread), on the log scale for ratios.
    assert interval_p(0.2, 0.0, 1.0, 1.0) == pytest.approx(0.05)
    assert interval_p(0.2, 0.0, 0.99, 1.0) < 0.05 < interval_p(0.2, 0.0, 1.01, 1.0)
    assert interval_p(0.5, 0.25, 1.0, 1.0, log=True) == pytest.approx(0.05)
    # From the resamples: never below 2 / (B + 1); 1 at the neutral value.
    assert bootstrap_p(np.ones(999), 1.0, 0.0) == pytest.approx(2 / 1000)
    assert bootstrap_p(np.linspace(-1, 1, 1001), 0.0, 0.0) == 1.0
    samples = np.random.default_rng(0).normal(0.3, 0.1, 4000)
    e = percentile_interval(0.3, samples, 50)
    assert e.p_zero == pytest.approx(2 * (np.sum(samples <= 0) + 1) / 4001)
    assert e.p_one == pytest.approx(2 / 4001)


def test_estimates_keep_their_json_equality_and_repr():
    e = percentile_interval(0.3, np.linspace(0.1, 0.5, 100), 50)
    assert e.p_zero is not None
    assert e == Estimate(e.value, e.ci_low, e.ci_high, 50)
    assert set(e.to_json()) == {"value", "ci_low", "ci_high", "n"}
    assert "p_zero" not in repr(e)


# --- What the terminal and the report show -----------------------------------------------


def document(with_chart: bool) -> dict:
    """A results document whose breakdown has one flagged group (a), one whose raw interval
    leaves 0 out without surviving Holm (b), and one near 0 (c)."""
    groups = {"a": est(0.5, 0.3, 0.7, p_zero=0.004), "b": est(0.2, 0.01, 0.4, p_zero=0.03),
              "c": est(0.0, -0.2, 0.2, p_zero=1.0)}
    chart = charts.forest("diff_by_topic", "diff_success_rate by topic", groups, reference=0.0)
    table = Table("diff_success_rate by topic", ["topic", "diff [95% CI]", "items"],
                  [[g, e, e.n] for g, e in groups.items()])
    result = ProbeResult(metrics={"diff_success_rate": est(0.2, 0.1, 0.3)}, breakdowns={"topic": groups},
                         charts=[chart] if with_chart else [], tables=[table] if with_chart else [])
    # Without the chart, the breakdown is tied by its own name.
    headlines = HEADLINES if with_chart else [Headline("topic", "zero")]
    doc = {"probe": "relationship-levy", "model": "reference:random", **result.to_json()}
    doc["breakdown_tests"] = breakdown_tests(result, headlines, 1000)
    return doc


@pytest.mark.parametrize("with_chart", [True, False], ids=["probe-chart", "breakdown-figure"])
def test_the_report_marks_only_flagged_groups_with_a_legend(with_chart):
    page = render_report([(document(with_chart), "results.json")])
    assert f">a {MARKER}<" in page
    assert f"b {MARKER}" not in page and f"c {MARKER}" not in page
    assert (f"{MARKER} differs from 0 after Holm correction across the 3 tested groups of this breakdown "
            "(family-wise alpha 0.05): 1 of 3.") in page
    assert "The 95% interval of b leaves out 0 on its own: within what chance gives" in page


def test_the_terminal_marks_only_flagged_groups_with_a_legend():
    console = Console(record=True, width=300)
    print_results(document(with_chart=True), console)
    text = console.export_text()
    lines = {line.split("│")[1].strip(): line for line in text.splitlines() if line.startswith("│")}
    assert f"0.500 [0.300, 0.700] {MARKER}" in lines["a"]
    assert MARKER not in lines["b"] and MARKER not in lines["c"]
    legend = " ".join(text.split())
    assert "across the 3 tested groups of this breakdown" in legend and "The 95% interval of b" in legend


def test_breakdowns_no_table_shows_get_a_line_of_their_own():
    doc = document(with_chart=False)
    console = Console(record=True, width=300)
    print_results(doc, console)
    text = console.export_text()
    assert "Breakdown topic (topic against 0):" in text and "Differ: a." in text
