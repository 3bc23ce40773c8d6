"""Reports opened in headless Chromium: clean loads, drawn charts, true tables, inert payloads.

Also writes screenshots of a report and a comparison to tests/artifacts/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import report_support as rs
from browser_support import ARTIFACTS, shared_browser

from genderprobe import charts
from genderprobe.analysis.stats import Estimate
from genderprobe.contract import Table
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models import BACKENDS
from genderprobe.outputs.report import answer_data, render_comparison, render_report, write_html
from genderprobe.outputs.results import load_results, write_json
from genderprobe.registry import all_probes

# Per chart type: the CSS selector of its data marks, and how many the spec asks for.
EXPECTED_MARKS = {
    "forest": ("circle.pt", lambda s: sum(r["value"] is not None for r in s["rows"])),
    "bar": ("rect.bar", lambda s: sum(p["value"] is not None for ser in s["series"] for p in ser["points"])),
    "heatmap": ("rect.cell", lambda s: len(s["rows"]) * len(s["columns"])),
    "scatter": ("circle.dot", lambda s: len(s["points"])),
    "histogram": ("rect.bar", lambda s: sum(c > 0 for ser in s["series"] for c in ser["counts"])),
}

CHART_STATE = """
return Array.from(document.querySelectorAll('figure.chart')).map(f => {
  const svg = f.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : null;
  const sel = arguments[0][f.dataset.chartType];
  return {id: f.dataset.chartId, type: f.dataset.chartType, hasSvg: !!svg,
          elements: svg ? svg.querySelectorAll('*').length : 0,
          width: box ? box.width : 0, height: box ? box.height : 0,
          drawnWidth: svg ? svg.viewBox.baseVal.width : 0,
          marks: svg && sel ? svg.querySelectorAll(sel).length : null};
});
"""

TABLE_CELLS = """
return Array.from(document.querySelectorAll(arguments[0])).map(t =>
  Array.from(t.querySelectorAll('tbody tr')).map(tr => Array.from(tr.cells).map(td => ({
    text: td.textContent, value: td.dataset.value === undefined ? null : JSON.parse(td.dataset.value),
    low: td.dataset.ciLow === undefined ? null : JSON.parse(td.dataset.ciLow)}))));
"""


@pytest.fixture(scope="module")
def browser():
    return shared_browser()


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, tuple[Path, list[dict]]]:
    """name -> (HTML file, the results documents it was built from)."""
    base = tmp_path_factory.mktemp("pages")
    levy = rs.levy_results(base / "levy", "reference:random", 300)
    gallery = rs.gallery_document(base)
    out = {}
    for name, paths in (("levy", [levy]), ("gallery", [gallery])):
        docs = [load_results(p) for p in paths]
        html = base / f"{name}.html"
        write_html(html, render_report([(d, p.name) for d, p in zip(docs, paths)]))
        out[name] = (html, docs)
    compared = [rs.levy_results(base / m.split(":")[1], m, 200) for m in
                ("reference:biased", "reference:random", "reference:unbiased", "reference:biased-female")]
    compared.append(rs.levy_results(base / "random-k100", "reference:random", 100))
    docs = [load_results(p) for p in compared]
    html = base / "compare.html"
    write_html(html, render_comparison([(d, f"{p.parent.name}/{p.name}") for d, p in zip(docs, compared)]))
    out["compare"] = (html, docs)
    return out


def check_clean_load_and_charts(browser, html: Path, docs: list[dict], *, every_chart: bool = True) -> None:
    load = browser.open(html)
    assert load.console_errors == []
    assert load.requests == []
    state = browser.js(CHART_STATE, {t: sel for t, (sel, _) in EXPECTED_MARKS.items()})
    specs = {c["id"]: c for d in docs for c in d["charts"]}
    drawn = [s for s in state if s["type"] in EXPECTED_MARKS]
    page_width = browser.js("return document.querySelector('main').clientWidth") - 60
    scales = browser.js("return Array.from(document.querySelectorAll('.markcard svg')).map(s => "
                        "[s.getBoundingClientRect().width, s.viewBox.baseVal.width])")
    assert all(shown >= drawn_at - 1 for shown, drawn_at in scales), scales  # mark scales, likewise
    assert drawn, "no charts on the page"
    for chart in drawn:
        assert chart["hasSvg"] and chart["elements"] > 0, chart
        assert chart["width"] > 100 and chart["height"] > 40, chart
        # Drawn at its own width, not squeezed beside its table (which shrank 12px labels to 8px).
        assert chart["width"] >= min(chart["drawnWidth"], page_width) - 1, chart
        spec = specs.get(chart["id"])
        if spec is not None:  # a probe's own chart: one mark per value it holds
            assert chart["marks"] == EXPECTED_MARKS[spec["type"]][1](spec), chart
    if every_chart:
        assert {s["id"] for s in state} >= set(specs)  # every chart of the results is on the page


@pytest.mark.parametrize("name", ["levy", "gallery", "compare"])
def test_page_loads_offline_with_no_console_errors_and_every_chart_drawn(browser, pages, name):
    html, docs = pages[name]
    check_clean_load_and_charts(browser, html, docs, every_chart=name != "compare")


@pytest.mark.parametrize("probe", sorted(all_probes()))
def test_every_registered_probe_renders_with_no_report_code_of_its_own(browser, tmp_path, probe):
    judge = "reference:random" if all_probes()[probe].needs_judge else None
    config = RunConfig(model="reference:random", judge=judge, use_cache=False, n_resamples=100, out_dir=tmp_path)
    out = run_probe(probe, "reference:random", config=config)
    doc = load_results(out.results_path)
    html = tmp_path / "report.html"
    write_html(html, render_report([(doc, "results.json", out.records_path)]))
    check_clean_load_and_charts(browser, html, [doc])
    # Its answers are in the answer browser, each read as one of the readings it offers.
    records = sum(1 for _ in out.records_path.open(encoding="utf-8"))
    shown = browser.js("const b = document.getElementById('answer-browser'); return [b.dataset.ready, "
                       "+b.dataset.matching, document.querySelectorAll('#ab-list > li[data-reading]').length]")
    # As many as the page holds: all, or its sample (smaller where texts are long: HiringBloomberg's resumes).
    expected = answer_data.gather([answer_data.RunAnswers(doc, "results.json", out.records_path)]).shown
    assert expected == min(records, answer_data.PAGE_ANSWERS) or 0 < expected < answer_data.PAGE_ANSWERS
    assert shown[0] is not None and shown[1] == expected and shown[2] > 0


def _same(cell: dict, expected) -> None:
    if isinstance(expected, dict):
        assert cell["value"] == expected["value"] and cell["low"] == expected["ci_low"], (cell, expected)
    elif isinstance(expected, bool) or expected is None:
        pass
    elif isinstance(expected, (int, float)):
        assert cell["value"] == expected, (cell, expected)
    else:
        assert cell["text"] == str(expected), (cell, expected)


@pytest.mark.parametrize("name", ["levy", "gallery"])
def test_tables_hold_the_values_of_the_results_file(browser, pages, name):
    html, (doc,) = pages[name]
    browser.open(html)
    (metrics,) = browser.js(TABLE_CELLS, "table.metrics")
    assert [row[0]["text"] for row in metrics] == list(doc["metrics"])
    for row, est in zip(metrics, doc["metrics"].values()):
        _same(row[1], est)
    tables = browser.js(TABLE_CELLS, "table.probe-table")
    assert len(tables) == len(doc["tables"])
    for shown, table in zip(tables, doc["tables"]):
        assert len(shown) == len(table["rows"])
        for row, expected in zip(shown, table["rows"]):
            for cell, value in zip(row, expected):
                _same(cell, value)
    numbers = browser.js(TABLE_CELLS, "figure[data-chart-type=forest] table.chart-data")
    forests = [c for c in doc["charts"] if c["type"] == "forest" and c["rows"]]
    for shown, spec in zip(numbers, forests):
        assert [r[0]["text"] for r in shown] == [r["label"] for r in spec["rows"]]
        for row, r in zip(shown, spec["rows"]):
            _same(row[1], r)


def test_comparison_leaderboard_holds_each_runs_values(browser, pages):
    html, docs = pages["compare"]
    browser.open(html)
    cells = browser.js("""return Array.from(document.querySelectorAll('table.leaderboard tbody tr')).map(tr =>
        [tr.dataset.model, Array.from(tr.querySelectorAll('td[data-metric]')).map(td =>
          [td.dataset.metric, JSON.parse(td.dataset.value), td.querySelector('.badge').textContent])]);""")
    assert len(cells) == len(docs)
    by_model_k = {(d["model"], d["parameters"]["probe"]["sample_k"]): d for d in docs}
    groups = browser.js("return Array.from(document.querySelectorAll('.group')).map(g => "
                        "g.querySelectorAll('table.leaderboard tbody tr').length)")
    assert groups == [4, 1]
    for i, (model, metrics) in enumerate(cells):
        doc = by_model_k[(model, 200 if i < 4 else 100)]
        for metric, value, mark in metrics:
            assert value == doc["metrics"][metric]["value"] and mark == doc["marks"][metric]["mark"]
    assert "Parameters differ" in browser.js("return document.querySelector('.mismatch').textContent")


def test_payloads_in_answers_labels_and_cells_run_nothing(browser, tmp_path, monkeypatch):
    monkeypatch.setitem(BACKENDS, "test", ("report_support", "test models"))
    spec = "test:</title><script>window.__pwned = 8</script>"
    path = rs.levy_with_model(tmp_path / "run", spec, 30)
    doc = load_results(path)
    # The same payloads where a probe puts labels and cells: charts, tables, metric names, evidence categories.
    evil = rs.PAYLOADS
    doc["charts"].append(charts.forest("evil", evil[0], {p: Estimate(0.1, 0.0, 0.2, 5) for p in evil}, x_label=evil[1]))
    doc["charts"].append(charts.heatmap("evil-heat", evil[2], list(evil[:2]), list(evil[2:4]), [[1, 2], [3, None]]))
    doc["tables"].append(Table(evil[3], list(evil[:3]), [list(evil[3:6])], note=evil[6]).to_json())
    doc["metrics"][evil[4]] = {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 3}
    doc["evidence"][evil[5]] = [{"prompt": evil[6], "answer": evil[0], "code": evil[1], evil[2]: evil[3]}]
    write_json(path, doc)
    html = tmp_path / "hostile.html"
    write_html(html, render_report([(load_results(path), evil[2])]))

    load = browser.open(html)
    browser.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert browser.open_dialog() is None
    assert browser.js("return window.__pwned === undefined && parent.__pwned === undefined")
    assert load.console_errors == [] and load.requests == []
    assert browser.js("return document.querySelectorAll('script, iframe, img, object, embed, base, textarea').length") == 0
    handlers = browser.js("""return Array.from(document.querySelectorAll('*')).flatMap(e =>
        Array.from(e.attributes).filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name));""")
    assert handlers == []
    assert browser.js("return Array.from(document.querySelectorAll('[href]')).every(e => "
                      "e.getAttribute('href').startsWith('#'))")
    text = browser.js("return document.body.textContent")
    for payload in evil:
        assert payload in text  # shown to the reader, as text
    assert browser.js("return document.title").startswith("relationship-levy on test:</title><script>")
    # Answers that chose an option were parsed as such: the evidence shows both kinds.
    categories = browser.js("return Array.from(document.querySelectorAll('details.evidence')).map(d => d.dataset.category)")
    assert {"male", "female", "undetected", evil[5]} <= set(categories)


def test_screenshots_of_a_report_and_a_comparison(browser, pages):
    for name in ("levy", "gallery", "compare"):
        browser.open(pages[name][0])
        shot = browser.screenshot(f"{name}.png")
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        assert shot.parent == ARTIFACTS


def test_the_suite_leaderboards_fit_1280_pixels(browser, tmp_path):
    """DeMET's four headline metrics and a run that is not ranked made its suite leaderboard 1,506 px
    wide in 1,184: it scrolled sideways at 1280 px (issue 35)."""
    from click.testing import CliRunner

    from genderprobe.interfaces.cli import main

    out = tmp_path / "suite"
    result = CliRunner().invoke(main, ["suite", "--model", "reference:random", "--model", "reference:first-option",
                                       "--probes", "demet,relationship-levy", "--out", str(out), "--resamples",
                                       "100", "--no-cache", "-q"])
    assert result.exit_code == 0, result.output
    load = browser.open(out / "report.html")
    assert load.console_errors == []
    assert browser.js("return window.innerWidth") == 1280
    tables = browser.js("""return Array.from(document.querySelectorAll('table.leaderboard')).map(t => {
        const box = t.closest('.scroll');
        return [t.closest('section').id, box.scrollWidth, box.clientWidth, t.querySelectorAll('tbody tr').length];});""")
    assert len(tables) == 3  # demet, relationship-levy and the suite's own
    for section, needed, shown, rows in tables:
        assert rows == 2 and needed <= shown, (section, needed, shown)
    assert browser.js("return document.documentElement.scrollWidth") <= 1280
    assert "not ranked" in browser.js("return document.querySelector('section[data-probe=demet] table.leaderboard')"
                                      ".textContent")


def test_the_genderbench_card_of_two_calibration_models_in_a_real_browser(browser, tmp_path):
    """GenderBench's 14 probes on two calibration models (small samples): one report with the card, every
    probe's ranking and report 1.0's rows, drawn with no console error and within 1280 pixels (issue 34)."""
    from click.testing import CliRunner

    from genderprobe.analysis.genderbench_card import CHARTED_PROBES
    from genderprobe.interfaces.cli import main

    small = {"hiring-bloomberg": "num_reorders = 2\nsample_k = 4", "relationship-levy": "sample_k = 60",
             "hiring-an": "sample_k = 60"}
    suite_file = tmp_path / "genderbench-small.toml"
    suite_file.write_text(f"[suite]\nprobes = {list(CHARTED_PROBES)!r}\nseed = 123\n".replace("'", '"') + "".join(
        f"[probes.{p}]\n{small.get(p, 'sample_k = 40')}\n" for p in CHARTED_PROBES), encoding="utf-8")
    out = tmp_path / "suite"
    result = CliRunner().invoke(main, ["suite", str(suite_file), "--model", "reference:unbiased", "--model",
                                       "reference:biased", "--out", str(out), "--resamples", "100", "--no-cache", "-q"])
    assert result.exit_code == 0, result.output
    load = browser.open(out / "report.html")
    assert load.console_errors == [] and load.requests == []
    rows = browser.js("""return Array.from(document.querySelectorAll('table.card tbody tr')).map(r =>
        [r.dataset.model, Array.from(r.querySelectorAll('td[data-section]')).map(c => c.dataset.mark)]);""")
    assert len(rows) == 14 and [m for m, _ in rows[:2]] == ["reference:unbiased", "reference:biased"]
    assert all(all(marks) for _, marks in rows)  # every section marked, for the suite's models too
    # The unbiased model passes every section; the biased one is worse in each (Isear's 40 events reach C).
    assert rows[0][1] == ["A"] * 4 and rows[1][1][:3] == ["D"] * 3 and rows[1][1][3] in "CD"
    assert len(browser.js("return document.querySelectorAll('section.probe table.leaderboard')")) == 14
    browser.js("document.querySelectorAll('details.card-charts').forEach(d => d.open = true)")
    drawn = browser.js("""return Array.from(document.querySelectorAll('details.card-charts figure svg')).map(s =>
        s.getBoundingClientRect().width);""")
    assert len(drawn) == 25 and min(drawn) > 300
    assert browser.js("return document.documentElement.scrollWidth") <= 1280
    browser.screenshot("genderbench-card.png")
