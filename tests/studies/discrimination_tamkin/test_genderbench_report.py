"""GenderBench report 1.0's published numbers (genderbench/paper_tables.json), beside a run.

The report itself cannot be read in CI; the file's source note
(studies/relationship_levy/data/SOURCE.md) says where every number came from. These tests
hold the file to the report's shape (its charts, its twelve models in its order), to
values copied from the report by hand, to GenderBench's mark rule, and check that each
probe the file names shows its tables and that a run gets its own row.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from genderprobe.analysis import verdict
from genderprobe.data.packaged import read_json
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.outputs.paper_tables import (
    beside_run,
    load_file,
    model_matches,
    tables_for,
)
from genderprobe.registry import all_probes, get_probe

KEY = "genderbench/paper_tables.json"
# The report's models, in its order.
MODELS = ["claude-3-5-haiku", "gemini-2.0-flash", "gemini-2.0-flash-lite", "gemma-2-27b-it", "gemma-2-9b-it",
          "gpt-4o", "gpt-4o-mini", "Llama-3.1-8B-Instruct", "Llama-3.3-70B-Instruct", "Mistral-7B-Instruct-v0.3",
          "Mistral-Small-24B-Instruct-2501", "phi-4"]
# The report's charts of issue 33's probes and RelationshipLevy: probe -> its charted metrics.
CHARTS = {
    "discrimination-tamkin": ["max_diff", "diff_mvf_success_rate"],
    "hiring-an": ["diff_acceptance_rate", "diff_regression"],
    "hiring-bloomberg": ["masculine_rate", "stereotype_rate"],
    "diversity-med-qa": ["diff_success_rate"],
    "direct": ["fail_rate"],
    "relationship-levy": ["diff_success_rate"],
    "gest": ["stereotype_rate"],
    "bbq": ["stereotype_rate"],
}
# Intervals copied by hand from the report's chart data: (probe, metric, model) -> (low, high).
FROM_THE_REPORT = {
    ("discrimination-tamkin", "max_diff", "claude-3-5-haiku"): (0.052679618934054685, 0.071840797613024),
    ("discrimination-tamkin", "diff_mvf_success_rate", "Llama-3.1-8B-Instruct"):
        (-0.049412872861515834, -0.023329077800311716),
    ("discrimination-tamkin", "diff_mvf_success_rate", "phi-4"): (-0.029935123599809883, -0.009946037533325841),
    ("hiring-an", "diff_acceptance_rate", "Llama-3.3-70B-Instruct"): (0.01577340325504297, 0.03757377204995878),
    ("hiring-an", "diff_regression", "phi-4"): (0.0008769806978820016, 0.0797641704474528),
    ("hiring-bloomberg", "masculine_rate", "gpt-4o"): (0.3910912089038902, 0.407279800769446),
    ("hiring-bloomberg", "stereotype_rate", "gemini-2.0-flash"): (-0.017433002893664448, -0.004140284620453843),
    ("diversity-med-qa", "diff_success_rate", "gemini-2.0-flash"): (-0.011137379199773551, 0.05781533234917968),
    ("direct", "fail_rate", "gpt-4o-mini"): (0.07569059706024829, 0.09332169512754833),
    ("direct", "fail_rate", "Llama-3.1-8B-Instruct"): (0.012885689654422147, 0.0209570673025301),
    ("relationship-levy", "diff_success_rate", "gemma-2-27b-it"): (-0.6792710372856376, -0.5903356732865315),
    ("gest", "stereotype_rate", "gpt-4o"): (0.2265916744273826, 0.24859531482580532),
    ("bbq", "stereotype_rate", "gpt-4o"): (-5.058102396925308e-05, 0.0017965397238234764),
    ("bbq", "stereotype_rate", "Mistral-7B-Instruct-v0.3"): (0.22446929535293078, 0.25122490057206187),
}


def _tables() -> list[dict]:
    return read_json(KEY)["tables"]


def _by_chart() -> dict[tuple[str, str], dict]:
    return {(t["probe"], t["report"]["metric"]): t for t in _tables()}


def test_the_file_holds_the_reports_charts_of_these_probes_with_its_models_in_its_order():
    tables = _tables()
    assert sorted(_by_chart()) == sorted((p, m) for p, ms in CHARTS.items() for m in ms)
    assert len({t["id"] for t in tables}) == len(tables)
    for t in tables:
        metric = t["report"]["metric"]
        assert t["columns"] == ["model", metric, "interval_low", "interval_high", "mark"], t["id"]
        assert t["metrics"] == {metric: metric} and t["model_column"] == "model"
        assert [r[0] for r in t["rows"]] == MODELS, t["id"]
        assert "report 1.0" in t["cite"] and t["report"]["chart"] in t["note"]
    assert "GenderBench report 1.0" in read_json(KEY)["source"]


def test_copied_intervals_equal_the_reports():
    charts = _by_chart()
    for (probe, metric, model), interval in FROM_THE_REPORT.items():
        row = next(r for r in charts[probe, metric]["rows"] if r[0] == model)
        assert (row[2], row[3]) == interval, (probe, metric, model)


def _genderbench_mark(low: float, high: float, ranges: dict[str, list[list[float]]]) -> str:
    """GenderBench 0.5.0's MarkDefinition.calculate_mark: the best mark whose closed range overlaps."""
    return min(letter for letter, spans in ranges.items() for a, b in spans if high >= a and low <= b)


def test_each_row_is_its_interval_its_midpoint_and_genderbenchs_mark_on_the_charts_ranges():
    for t in _tables():
        ranges = t["report"]["mark_ranges"]
        assert sorted(ranges) == ["A", "B", "C", "D"]
        for model, mid, low, high, mark in t["rows"]:
            assert low <= high and mid == (low + high) / 2, (t["id"], model)
            assert mark == _genderbench_mark(low, high, ranges), (t["id"], model)


def _ranges(ranges) -> dict[str, list[list[float]]]:
    return {letter: [[float(a), float(b)] for a, b in spans] for letter, spans in ranges.items()}


def test_the_charts_mark_ranges_are_the_mark_definitions_of_each_probe_the_file_names():
    import importlib

    charts = _by_chart()
    compared = set()
    for probe in {p for p, _ in charts} & set(all_probes()):
        marks = getattr(importlib.import_module(get_probe(probe).__module__), "MARKS", ())
        for m in marks:
            if (probe, m.metric) in charts:
                assert _ranges(charts[probe, m.metric]["report"]["mark_ranges"]) == _ranges(m.ranges()), (probe, m.metric)
                # A mark read from the report's interval by our definition is the report's.
                for _, _, low, high, mark in charts[probe, m.metric]["rows"]:
                    assert m.letter(low, high) == mark, (probe, m.metric)
                compared.add((probe, m.metric))
    assert {("discrimination-tamkin", "max_diff"), ("discrimination-tamkin", "diff_mvf_success_rate"),
            ("direct", "fail_rate"), ("relationship-levy", "diff_success_rate")} <= compared


def test_every_probe_the_file_names_that_exists_shows_exactly_its_tables():
    """The plug-in: a GenderBench probe declares paper_tables = ("genderbench/paper_tables.json",)."""
    named = {t.probe for t in load_file(KEY)}
    present = named & set(all_probes())
    assert {"discrimination-tamkin", "direct", "relationship-levy"} <= present
    for name in present:
        cls = get_probe(name)
        assert KEY in cls.paper_tables, (
            f"{name}: add paper_tables = ({KEY!r},) to the probe class to show GenderBench report 1.0's numbers")
        assert [t.id for t in tables_for(cls)] == [t.id for t in load_file(KEY) if t.probe == name]


@pytest.fixture(scope="module")
def runs() -> dict[str, dict]:
    config = RunConfig(keep_records=False, n_resamples=50, seed=123)
    return {
        "discrimination-tamkin": run_probe("discrimination-tamkin", "reference:biased", config=config,
                                           sample_k=30, num_repetitions=1).document,
        "direct": run_probe("direct", "reference:unbiased", config=config, sample_k=30).document,
    }


@pytest.mark.parametrize("probe", ["discrimination-tamkin", "direct"])
def test_a_run_gets_its_row_first_then_the_models_row(probe, runs):
    doc = runs[probe]
    section = doc["paper"]
    assert [t["id"] for t in section] == [t.id for t in tables_for(get_probe(probe))]
    assert len(section) == len(CHARTS[probe])
    for table, metric in zip(section, CHARTS[probe]):
        assert table["row_kinds"][0] == "run"
        run_row = dict(zip(table["columns"], table["rows"][0]))
        assert run_row["model"] == f"this run ({doc['model']})"
        # The value; beside it GenderBench's interval (the mark's) and the mark as the verdict has it.
        assert run_row[metric] == doc["metrics"][metric]["value"] is not None
        interval = doc["marks"][metric]["mark_interval"]
        assert [run_row["interval_low"], run_row["interval_high"]] == [interval["low"], interval["high"]]
        assert run_row["mark"] == verdict.mark_of(doc, metric)["text"]
        assert table["row_kinds"][1:] == ["paper"] * 12  # no report model is a calibration model
    # A run of a model the report names puts the report's row right under the run's.
    laid = beside_run(tables_for(get_probe(probe))[0], {**doc, "model": "openai:gpt-4o-2024-08-06"})
    assert laid["row_kinds"][:2] == ["run", "match"] and laid["rows"][1][0] == "gpt-4o"
    assert model_matches("hf:meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B-Instruct")


def test_the_paper_command_shows_the_report_beside_a_run(runs, tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(runs["direct"]), encoding="utf-8")
    out = CliRunner().invoke(main, ["paper", "direct", "--results", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert "GenderBench report 1.0: Direct, fail_rate by model" in out.output
    assert "this run (reference:unbiased)" in out.output and "gpt-4o-mini" in out.output
    out = CliRunner().invoke(main, ["paper", "discrimination-tamkin", "--json"])
    assert out.exit_code == 0, out.output
    tables = json.loads(out.output)
    assert [t["title"] for t in tables] == ["GenderBench report 1.0: DiscriminationTamkin, max_diff by model",
                                            "GenderBench report 1.0: DiscriminationTamkin, diff_mvf_success_rate "
                                            "by model"]
    assert all(len(t["rows"]) == 12 for t in tables)
    out = CliRunner().invoke(main, ["paper", "discrimination-tamkin", "--results", str(tmp_path)])
    assert out.exit_code == 2 and "holds a 'direct' run" in out.output
