"""compare ranks and shows what each probe declares as its headline, in the declared direction."""

from __future__ import annotations

import copy
import math

import pytest

from genderprobe.outputs.report.compare import compare, distance


def _doc(model: str, metrics: dict[str, float], *, headline=None, probe_params=None, marks=None) -> dict:
    doc = {
        "probe": "p", "model": model,
        "metrics": {k: {"value": v, "ci_low": v, "ci_high": v, "n": 10} for k, v in metrics.items()},
        "marks": marks or {},
        "parameters": {"probe": probe_params or {}, "seed": 0},
        "counts": {}, "run": {}, "versions": {"genderprobe": "x", "data": {}},
    }
    if headline is not None:
        doc["headline"] = headline
    return doc


@pytest.mark.parametrize("value, better, expected", [
    (-0.3, "zero", 0.3), (0.5, "one", abs(math.log(0.5))), (2.0, "one", math.log(2.0)),
    (0.2, "lower", 0.2), (0.9, "higher", -0.9), (None, "higher", math.inf), (float("nan"), "zero", math.inf),
    (0.0, "one", math.inf),
])
def test_distance_from_the_best_value(value, better, expected):
    assert distance(value, better) == pytest.approx(expected)


def test_runs_without_marks_are_ranked_by_the_declared_direction_not_input_order():
    headline = {"metrics": [{"metric": "r", "better": "higher"}, {"metric": "mse", "better": "lower"}],
                "view_parameters": []}
    docs = [(_doc("bad", {"r": 0.1, "mse": 0.2, "other": 1}, headline=headline), "a"),
            (_doc("good", {"r": 0.9, "mse": 0.01, "other": 1}, headline=headline), "b"),
            (_doc("tie-on-r", {"r": 0.9, "mse": 0.05, "other": 1}, headline=headline), "c")]
    (section,) = compare(docs)
    (group,) = section.groups
    assert group.headline == ["r", "mse"] and group.better == {"r": "higher", "mse": "lower"}
    assert [e.doc["model"] for e in group.entries] == ["good", "tie-on-r", "bad"]


def test_a_ratio_is_best_at_one_whichever_side():
    headline = {"metrics": [{"metric": "di", "better": "one"}]}
    docs = [(_doc(m, {"di": v}, headline=headline), m) for m, v in (("x4", 4.0), ("x1", 1.05), ("x025", 0.3))]
    (section,) = compare(docs)
    assert [e.doc["model"] for e in section.groups[0].entries] == ["x1", "x025", "x4"]


def test_view_parameters_do_not_split_runs_but_other_parameters_do():
    headline = {"metrics": [{"metric": "pm", "better": "lower"}], "view_parameters": ["ablation"]}
    a = _doc("a", {"pm": 3}, headline=headline, probe_params={"ablation": [], "template": "cot"})
    b = _doc("b", {"pm": 1}, headline=headline, probe_params={"ablation": ["names"], "template": "cot"})
    c = _doc("c", {"pm": 0}, headline=headline, probe_params={"ablation": [], "template": "noncot"})
    (section,) = compare([(a, "a"), (b, "b"), (c, "c")])
    assert [[e.doc["model"] for e in g.entries] for g in section.groups] == [["b", "a"], ["c"]]
    assert [name for name, _ in section.mismatches] == ["probe.template"]


def test_results_written_before_the_declaration_keep_the_old_behaviour():
    marks = {"m": {"mark": "B"}}
    old = [(_doc("first", {"m": 0.5, "n": 1}, marks={"m": {"mark": "C"}}), "a"),
           (_doc("second", {"m": 0.1, "n": 1}, marks=copy.deepcopy(marks)), "b")]
    (section,) = compare(old)
    assert section.groups[0].headline == ["m"]
    assert [e.doc["model"] for e in section.groups[0].entries] == ["second", "first"]


def test_the_leaderboard_and_html_say_what_the_ranking_rests_on():
    from rich.console import Console

    from genderprobe.outputs.report import render_comparison
    from genderprobe.outputs.report.leaderboard import print_leaderboard

    headline = {"metrics": [{"metric": "r", "better": "higher"}, {"metric": "mse", "better": "lower"}]}
    docs = [(_doc(m, {"r": r, "mse": 0.1}, headline=headline), m) for m, r in (("a", 0.2), ("b", 0.8))]
    console = Console(width=200, record=True)
    print_leaderboard(compare(docs), console)
    note = "ranked by r (highest is best), then mse (lowest is best)"
    assert note in " ".join(console.export_text().split())  # the caption wraps at the table's width
    assert note in render_comparison(docs)
    unknown = [(_doc(m, {"x": 1.0}), m) for m in ("a", "b")]
    console = Console(width=200, record=True)
    print_leaderboard(compare(unknown), console)
    assert "in the order given" in console.export_text()


def test_lost_answers_by_gender_show_beside_each_run():
    from rich.console import Console

    from genderprobe.analysis.losses import loss_report
    from genderprobe.outputs.report import render_comparison
    from genderprobe.outputs.report.leaderboard import print_leaderboard

    genders = ["female"] * 100 + ["male"] * 100
    lossy = loss_report(genders, {"undetected": [True] * 30 + [False] * 70 + [True] * 5 + [False] * 95},
                        order=["female", "male"]).to_json()
    clean = loss_report(genders, {"undetected": [False] * 200}, order=["female", "male"]).to_json()
    docs = [(dict(_doc("a", {"x": 0.1}), losses=lossy), "a"), (dict(_doc("b", {"x": 0.2}), losses=clean), "b")]
    (section,) = compare(docs)
    texts = {e.doc["model"]: e.lost_by_group for e in section.groups[0].entries}
    assert texts == {"a": "undetected female 30% / male 5% (p < 0.001)", "b": ""}
    console = Console(width=250, record=True)
    print_leaderboard([section], console)
    assert "undetected female 30% / male 5% (p < 0.001)" in console.export_text()
    assert "undetected female 30% / male 5% (p &lt; 0.001)" in render_comparison(docs)
