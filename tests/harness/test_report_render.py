"""The HTML report without a browser: contents, secrets, escaping, size and the CLI."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from pathlib import Path

import markupsafe
import pytest
import report_support as rs
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.analysis import verdict
from genderprobe.errors import UserError
from genderprobe.interfaces.cli import main
from genderprobe.models import BACKENDS
from genderprobe.outputs.report import render_report
from genderprobe.outputs.results import load_results, write_json


@pytest.fixture(scope="module")
def levy(tmp_path_factory) -> Path:
    return rs.levy_results(tmp_path_factory.mktemp("levy"), "reference:random", 200)


@pytest.fixture(scope="module")
def gallery(tmp_path_factory) -> Path:
    return rs.gallery_document(tmp_path_factory.mktemp("gallery"))


@pytest.fixture()
def test_backend(monkeypatch):
    """Register tests/report_support.py as the 'test' model backend."""
    monkeypatch.setitem(BACKENDS, "test", ("report_support", "test models"))


def render(path: Path) -> str:
    return render_report([(load_results(path), path.name)])


def test_report_holds_every_metric_mark_and_table_value(levy):
    doc = load_results(levy)
    page = render(levy)
    for name, est in doc["metrics"].items():
        row = re.search(rf'<tr data-metric="{name}">(.*?)</tr>', page, re.S).group(1)
        assert f'data-value="{json.dumps(est["value"])}"' in row
        assert f'data-ci-low="{json.dumps(est["ci_low"])}"' in row
    for name, mark in doc["marks"].items():
        state = verdict.mark_of(doc, name)
        card = re.search(rf'<div class="markcard" data-metric="{name}" data-mark-state="{state["state"]}">(.*?)'
                         r'<div class="scale">', page, re.S).group(1)
        meaning = f"mark {mark['mark']}, {html.escape(mark['meaning'])}"
        # The meaning of a mark is said only of a mark that stands, decided.
        assert f"{name} = " in card and (meaning in card) == (state["state"] == "decided")
        if state["state"] == "undecided":
            assert f"undecided {state['reaches'][0]}…{state['reaches'][-1]}" in card
    for table in doc["tables"]:
        assert f'<p class="table-caption">{html.escape(table["title"])}</p>' in page
        for row in table["rows"]:
            for cell in row:
                if isinstance(cell, dict) and "value" in cell:
                    assert f'data-value="{json.dumps(cell["value"])}"' in page
    assert page.count('<figure class="chart"') == len(doc["charts"])


def test_report_has_no_way_to_load_or_run_anything(gallery, levy):
    for path in (gallery, levy):
        page = render(path)
        assert "<script" not in page.lower()
        assert "Content-Security-Policy" in page and "default-src 'none'" in page
        assert not re.search(r"\b(src|href|action|formaction|data)\s*=\s*\"(?!#)", page.replace("data-", "x-"))
        assert "@import" not in page and "url(" not in page


def test_report_keeps_secrets_out(gallery):
    page = render(gallery)
    assert fake_key("should-never-show") not in page
    assert "(redacted)" in page


def test_gallery_report_draws_every_known_chart_and_flags_the_unknown(gallery):
    doc = load_results(gallery)
    page = render(gallery)
    known = [c for c in doc["charts"] if c["type"] != "sankey"]
    assert len(re.findall(r"<svg\b", page)) >= len(known)
    assert "“sankey”, which this version of genderprobe cannot draw" in page
    assert "中文" in page and "한국어" in page and "看護師" in page
    assert "Breakdown: language" in page  # a breakdown no chart draws gets its own forest plot


def test_payload_answers_are_escaped_in_the_html(tmp_path, test_backend):
    path = rs.levy_with_model(tmp_path, "test:hostile", 30)
    doc = load_results(path)
    answers = {s["answer"] for samples in doc["evidence"].values() for s in samples}
    assert set(rs.PAYLOADS) <= answers  # the payloads really went through the harness
    page = render(path)
    for payload in rs.PAYLOADS:
        assert payload not in page
        assert str(markupsafe.escape(payload)) in page  # shown, as text
    assert "<script" not in page.lower() and "<iframe" not in page.lower()
    assert not re.search(r"<[^>]*\son\w+\s*=", page)  # no tag carries an event handler


@pytest.mark.parametrize("model", ["reference:random", "test:undecided"])
def test_a_3000_item_report_stays_under_5_mb(tmp_path, model, test_backend):
    path = rs.levy_with_model(tmp_path, model, 3000)
    page = render(path)
    size = len(page.encode("utf-8"))
    print(f"{model}: 3,000-item report is {size / 1e6:.2f} MB")
    assert size < 5_000_000
    if model == "test:undecided":  # every undetected answer the probe kept is shown
        assert page.count('<pre class="answer">') == len(load_results(path)["evidence"]["undetected"]) == 1000
        assert "the run had 6,000; the probe keeps the first 1,000" in page


# -- the command line -----------------------------------------------------------


def run_cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_report_command_writes_one_file(levy, tmp_path):
    out = tmp_path / "r.html"
    result = run_cli("report", str(levy), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "Wrote" in result.output


def test_report_command_defaults_beside_the_results_and_takes_run_folders(levy, gallery, tmp_path):
    result = run_cli("report", str(levy.parent))
    assert result.exit_code == 0, result.output
    assert (levy.parent / "report.html").exists()
    out = tmp_path / "both.html"
    assert run_cli("report", str(levy), str(gallery), "-o", str(out)).exit_code == 0
    page = out.read_text(encoding="utf-8")
    assert page.count('<section class="run"') == 2 and 'href="#run-2"' in page


def test_report_command_refuses_bad_input_in_one_sentence(tmp_path, levy):
    out = tmp_path / "r.html"
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json", encoding="utf-8")
    not_results = tmp_path / "other.json"
    not_results.write_text('{"hello": 1}', encoding="utf-8")
    broken_chart = tmp_path / "broken.json"
    doc = load_results(levy)
    doc["charts"] = [{"type": "forest", "id": "oops", "title": "t", "rows": 3}]
    write_json(broken_chart, doc)
    wrong_shape = tmp_path / "shape.json"
    doc = load_results(levy)
    doc["tables"] = {"a": 1}
    write_json(wrong_shape, doc)
    for args in ([str(tmp_path / "missing.json")], [str(bad_json)], [str(not_results)], [str(broken_chart)],
                 [str(wrong_shape)]):
        result = run_cli("report", *args, "-o", str(out))
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in result.output
        assert not out.exists()
    assert "Chart 'oops'" in run_cli("report", str(broken_chart), "-o", str(out)).output
    folder = tmp_path / "folder"
    folder.mkdir()
    result = run_cli("report", str(levy), "-o", str(folder))
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert list(tmp_path.glob(".r.html.*")) == []  # no temporary left behind


def test_render_report_needs_a_document():
    with pytest.raises(UserError):
        render_report([])


def test_a_key_inside_a_model_spec_is_redacted_everywhere(levy):
    doc = load_results(levy)
    doc["model"] = "openai:gpt-4o-mini?key=" + fake_key("abcdefghijklmnop12345")
    doc["judge"] = "anthropic:claude?token=Bearer abcdefghijklmnop"
    page = render_report([(doc, "results.json")])
    assert fake_key("abcdefghijklmnop") not in page and "abcdefghijklmnop" not in page
    title = re.search(r"<title>(.*?)</title>", page).group(1)
    assert "(redacted)" in title


def test_breakdowns_a_chart_already_draws_get_no_second_plot(levy):
    """Probes draw breakdowns as bars per series ("FF Appearance") or as forest rows named "seed type:
    explicit"; each used to get a duplicate forest plot (six of 28 rows in a multilingual-dialogue report)."""
    from genderprobe import charts
    from genderprobe.analysis.stats import Estimate

    doc = load_results(levy)
    a, b, c = (Estimate(v, v - 0.1, v + 0.1, 10) for v in (0.1, 0.2, 0.3))
    doc["charts"] = [
        charts.bar("topics", "Topics per pairing", ["Appearance", "Money"], {"FF": [a, b], "MM": [c, a]}),
        charts.forest("types", "r by type", {"seed type: explicit": b, "seed type: implicit": c}),
    ]
    doc["breakdowns"] = {
        "topics_en": {"FF Appearance": a.to_json(), "FF Money": b.to_json(), "MM Appearance": c.to_json()},
        "r_by_seed_type": {"explicit": b.to_json(), "implicit": c.to_json()},
        "mse_by_seed_type": {"explicit": a.to_json(), "implicit": a.to_json()},  # drawn nowhere
    }
    page = render_report([(doc, "results.json")])
    assert re.findall(r'data-chart-id="breakdown-([^"]+)"', page) == ["mse_by_seed_type"]
    assert "<figcaption>Breakdown: mse_by_seed_type</figcaption>" in page


def test_a_minimal_or_odd_results_file_renders_instead_of_a_traceback(tmp_path, levy):
    """Only 'probe' and 'metrics' are required; a file with 'run': null used to raise jinja2's UndefinedError."""
    minimal = tmp_path / "minimal.json"
    write_json(minimal, {"probe": "p", "metrics": {"m": {"value": 0.5}}, "marks": {"m": {"ranges": {"A": [[0, 1]]}}},
                         "tables": [{"columns": ["a"], "rows": [[1]]}], "run": None})
    odd = tmp_path / "odd.json"
    doc = load_results(levy)
    doc["metrics"]["odd"] = {"value": "abc", "ci_low": [1], "ci_high": {"a": 1}}
    doc["created"] = 5
    doc["charts"] += [
        {"type": "forest", "id": "f", "title": None, "rows": [{"label": {"a": 1}, "value": "x"}]},
        {"type": "bar", "id": "b", "categories": ["a"], "series": [{"name": None, "points": ["x"]}]},
        {"type": "histogram", "id": "h", "edges": [0, 1], "series": [{"name": "s", "counts": ["x"]}]},
        {"type": "scatter", "id": "s", "points": [["a", None]]},
    ]
    doc["evidence"]["odd"] = [{"prompt": ["x"], "answer": None}]
    write_json(odd, doc)
    out = tmp_path / "r.html"
    for args in (["report", str(minimal)], ["report", str(odd)], ["compare", str(minimal), str(odd)]):
        result = run_cli(*args, "-o", str(out))
        assert result.exit_code == 0, result.output
        out.unlink()
    bad_mark = tmp_path / "bad_mark.json"
    write_json(bad_mark, {"probe": "p", "metrics": {"m": {"value": 0.5}}, "marks": {"m": "A"}})
    result = run_cli("report", str(bad_mark), "-o", str(out))
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert result.output.strip().endswith("bad_mark.json is not a valid results file: mark 'm' must be a mapping.")


def test_marks_say_which_interval_they_were_read_from_and_their_harm_types():
    from rich.console import Console

    from genderprobe.interfaces.api import RunConfig, run_probe
    from genderprobe.outputs.terminal import print_results

    config = RunConfig(model="reference:random", use_cache=False, n_resamples=100)
    doc = run_probe("relationship-levy", "reference:random", config=config, sample_k=60).document
    iv = doc["marks"]["diff_success_rate"]["mark_interval"]
    expected = f"Mark read from [{iv['low']:.3f}, {iv['high']:.3f}], normal fitted to the bootstrap values"
    html = render_report([(doc, "r/results.json")])
    assert expected in html and "Harm types: Outcome Disparity." in html
    console = Console(width=300, record=True)
    print_results(doc, console)
    assert f"diff_success_rate: {expected}" in console.export_text()


def test_an_absolute_metrics_mark_interval_is_shown_from_0_saying_where_the_fit_reached():
    from genderprobe.outputs.report.document import mark_reading

    m = {"ranges": {"A": [[0, 0.1]], "B": [[0.1, 0.2]], "C": [[0.2, 0.6]], "D": [[0.6, 1]]},
         "mark_interval": {"low": -0.022, "high": 0.222, "how": "normal fitted to the bootstrap values"}}
    assert mark_reading(m) == ("Mark read from [0.000, 0.222] (the fitted normal reaches -0.022, below what the "
                               "metric can be), normal fitted to the bootstrap values.")
    signed = dict(m, ranges={"A": [[-0.1, 0.1]], "D": [[-1, -0.6], [0.6, 1]]})
    assert mark_reading(signed).startswith("Mark read from [-0.022, 0.222], normal")


def _charts_and_tables(page: str) -> str:
    """The page from its Charts to its Tables' end: the paper's tables and the metrics table left out."""
    start = page.index("<h3>Charts</h3>")
    return page[start:min(i for i in (page.find("<h3>Beside the paper</h3>"), page.find("<h3>Evidence</h3>")) if i > 0)]


@pytest.mark.parametrize("probe", ["relationship-levy", "genmo"])
def test_each_breakdown_number_is_shown_once_under_charts_and_tables(tmp_path, probe):
    """A probe's table of a breakdown ("diff_success_rate by topic") repeated the numbers its chart
    shows beside it: every breakdown was on the page twice (issue 35)."""
    from genderprobe.interfaces.api import RunConfig, run_probe

    config = RunConfig(model="reference:random", use_cache=False, n_resamples=100)
    doc = run_probe(probe, "reference:random", config=config, sample_k=120).document
    section = _charts_and_tables(render_report([(doc, "results.json")]))
    # Two groups of a small run can have the same numbers: each is expected as often as the breakdowns hold it.
    expected = Counter((json.dumps(e["value"]), json.dumps(e["ci_low"]), json.dumps(e["ci_high"]))
                       for groups in doc["breakdowns"].values() for e in groups.values())
    assert sum(expected.values()) >= 7
    for value, low, high in expected:
        cell = f'data-value="{value}" data-ci-low="{low}" data-ci-high="{high}"'
        assert section.count(cell) == expected[(value, low, high)], cell
    for table in doc["tables"]:  # each of the probe's tables is still there, once
        assert section.count(f'<p class="table-caption">{markupsafe.escape(table["title"])}</p>') == 1, table["title"]
