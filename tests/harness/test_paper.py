"""The papers' own tables beside a run: loading, model matching, layout, the command, the report."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from rich.console import Console

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.outputs.paper_tables import (
    PaperTable,
    _check,
    beside_run,
    model_matches,
    paper_section,
)
from genderprobe.outputs.report import render_report
from genderprobe.outputs.terminal import print_results
from genderprobe.registry import all_probes

TABLE = PaperTable(
    id="t1", title="Table 1: bias by model", cite="Someone et al. 2024, Table 1",
    columns=["model", "bias", "size"], model_column="model", metrics={"bias": "diff_success_rate"},
    rows=[["GPT-3.5-Turbo", 0.25, "?"], ["llama-2-13b-chat", 0.1, "13B"], ["gpt-4", 0.05, "?"]],
)


@pytest.mark.parametrize("spec, name, expected", [
    ("openai:gpt-3.5-turbo", "GPT-3.5-Turbo", True),
    ("openai:gpt-3.5-turbo-0613", "gpt-3.5-turbo", True),
    ("hf:meta-llama/Llama-2-13b-chat-hf", "llama-2-13b-chat", True),
    ("vllm:/models/llama-2-13b-chat", "llama-2-13b-chat", True),
    ("openai:gpt-4o", "gpt-4", False),
    ("openai:gpt-4-turbo", "gpt-4", False),
    ("hf:meta-llama/Llama-2-13b-chat-hf", "llama-2-70b-chat", False),
    ("openai:gpt-3.5-turbo-instruct", "gpt-3.5-turbo", False),
    ("reference:biased", "gpt-4", False),
])
def test_model_names_match_the_papers_only_up_to_a_date_or_packaging_suffix(spec, name, expected):
    assert model_matches(spec, name) is expected


def test_the_run_row_comes_first_then_the_models_rows_then_the_rest():
    doc = {"model": "openai:gpt-4-0613", "metrics": {"diff_success_rate": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}}}
    t = beside_run(TABLE, doc)
    assert t["row_kinds"] == ["run", "match", "paper", "paper"]
    assert t["rows"][0] == ["this run (openai:gpt-4-0613)", doc["metrics"]["diff_success_rate"], None]
    assert t["rows"][1] == ["gpt-4", 0.05, "?"]
    assert [r[0] for r in t["rows"][2:]] == ["GPT-3.5-Turbo", "llama-2-13b-chat"]  # the paper's order


def test_without_a_run_or_a_metric_mapping_the_table_is_shown_as_printed():
    assert beside_run(TABLE, None)["rows"] == TABLE.rows
    unmapped = PaperTable(id="t2", title="", cite="", columns=["model", "x"], rows=[["a", 1]], model_column="model")
    t = beside_run(unmapped, {"model": "openai:a", "metrics": {}})
    assert t["row_kinds"] == ["match"] and t["rows"] == [["a", 1]]


@pytest.mark.parametrize("table, message", [
    ({"id": "x", "title": "", "cite": "", "columns": ["a", "b"], "rows": [[1]]}, "row 0 has 1 cells"),
    ({"id": "x", "title": "", "cite": "", "columns": ["a"], "rows": [], "metrics": {"zz": "m"}}, "no column 'zz'"),
    ({"id": "x", "title": "", "columns": ["a"], "rows": []}, "no 'cite'"),
])
def test_a_malformed_paper_table_is_refused_with_where_it_is(table, message):
    with pytest.raises(ValueError, match=message):
        _check(table, "study/paper_tables.json")


def test_every_packaged_paper_table_loads_with_rows_and_a_citation():
    for name, cls in all_probes().items():
        for t in paper_section(cls, None):
            assert t["rows"], f"{name}: {t['id']} has no rows"
            assert t["cite"], f"{name}: {t['id']} cites nothing"


@pytest.fixture(scope="module")
def levy_doc():
    config = RunConfig(model="reference:biased", use_cache=False, n_resamples=100)
    return run_probe("relationship-levy", "reference:biased", config=config, sample_k=40).document


def test_a_run_shows_the_paper_table_in_the_terminal_and_the_report(levy_doc):
    doc = dict(levy_doc, paper=[beside_run(TABLE, levy_doc)])
    console = Console(width=200, record=True)
    print_results(doc, console)
    text = console.export_text()
    assert "Table 1: bias by model" in text and "Someone et al. 2024, Table 1" in text
    assert "this run (reference:biased)" in text and "1.000 [1.000, 1.000]" in text
    html = render_report([(doc, "r/results.json")])
    assert 'data-paper-table="t1"' in html and 'data-row-kind="run"' in html
    assert html.count('data-row-kind="paper"') == 3


def test_paper_command(levy_doc, tmp_path):
    runner = CliRunner()
    (tmp_path / "results.json").write_text(json.dumps(levy_doc))
    out = runner.invoke(main, ["paper", "nonexistent-probe"])
    assert out.exit_code == 2 and "Unknown probe" in out.output
    out = runner.invoke(main, ["paper", "genmo", "--results", str(tmp_path)])
    assert out.exit_code == 2 and "holds a 'relationship-levy' run, not 'genmo'" in out.output
    for name, cls in all_probes().items():
        out = runner.invoke(main, ["paper", name, "--json"])
        assert out.exit_code == 0, out.output
        assert len(json.loads(out.output)) == len(paper_section(cls, None))


def test_a_column_can_map_to_one_group_of_a_breakdown():
    table = PaperTable(id="t6", title="by label", cite="c", columns=["model", "T", "E"], model_column="model",
                       metrics={"T": {"breakdown": "bias by label", "group": "T"},
                                "E": {"breakdown": "bias by label", "group": "E"}}, rows=[["m", 0.1, 0.2]])
    doc = {"model": "x:y", "metrics": {},
           "breakdowns": {"bias by label": {"T": {"value": 0.5}, "E": {"value": -0.5}}}}
    assert beside_run(table, doc)["rows"][0] == ["this run (x:y)", {"value": 0.5}, {"value": -0.5}]
    assert beside_run(table, dict(doc, breakdowns={}))["rows"][0] == ["this run (x:y)", None, None]


def test_a_study_file_shows_each_probe_only_its_own_tables():
    from genderprobe.outputs.paper_tables import tables_for
    from genderprobe.registry import get_probe

    for name in ("multilingual-words", "multilingual-pronouns", "multilingual-dialogue"):
        tables = tables_for(get_probe(name))
        assert tables and all(t.probe in (None, name) for t in tables)
