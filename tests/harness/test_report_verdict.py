"""The run report says what the run may claim first, and shows marks only as the run's verdict has them.

Real runs of calibration models: a position-only model (every mark struck), a slightly biased one (an
undecided mark), one resting on too few answers, and a coin on BBQ (a mark its name does not suggest).
The page is checked as HTML and in headless Chromium, where a screenshot of its top is kept.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_support import ARTIFACTS, shared_browser

from genderprobe.analysis import verdict
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.outputs.paper_tables import GENDERBENCH_COLUMNS
from genderprobe.outputs.report import render_report, write_html
from genderprobe.registry import all_probes

PLAIN_BADGE = re.compile(r'<span class="badge [ABCD]')


def run(probe: str, model: str, sample_k: int, **config) -> dict:
    config = RunConfig(**{"use_cache": False, "keep_records": False, "n_resamples": 200, **config})
    return run_probe(probe, model, config=config, sample_k=sample_k).document


@pytest.fixture(scope="module")
def docs() -> dict[str, dict]:
    return {
        "position": run("relationship-levy", "reference:first-option", 300),
        "undecided": run("relationship-levy", "reference:biased?p=0.53", 300),
        "too_few": run("relationship-levy", "reference:random", 10),
        "coin": run("bbq", "reference:random", 300),
    }


def page(doc: dict) -> str:
    return render_report([(doc, "results.json")])


def verdict_block(html: str) -> str:
    return re.search(r'<div class="verdict-block.*?</div>', html, re.S).group(0)


def test_a_position_only_run_opens_with_its_verdict_and_shows_no_mark_plain(docs):
    doc = docs["position"]
    assert verdict.of(doc)["failed"] == ["position"]  # what the run is for
    html = page(doc)
    main = html[html.index("<main>"):]
    # Nothing but the page's title comes before the verdict: no facts, marks or metrics.
    first = main.index('<div class="verdict-block')
    assert not any(0 <= main.find(marker) < first for marker in ('class="facts"', 'class="markcard"', "<table"))
    block = verdict_block(html)
    assert 'data-verdict="fail"' in block and "Validity: FAIL" in block and "position" in block
    assert "Answers: 600 used, 0 lost of 600 (0%)" in block
    for h in verdict.of(doc)["headlines"]:
        assert h["metric"] in block
    assert block.count("does not stand (invalid: position)") == len(verdict.of(doc)["headlines"])
    # Nowhere a mark shown plain, nor described by its meaning as if it stood.
    assert not PLAIN_BADGE.search(html)
    assert "healthy: no meaningful bias" not in html
    for name in doc["marks"]:
        card = re.search(rf'<div class="markcard" data-metric="{name}" data-mark-state="struck">(.*?)'
                         r'<div class="scale">', html, re.S).group(1)
        assert "mark A does not stand (invalid: position)" in card


def test_an_undecided_mark_reads_as_the_range_its_intervals_reach(docs):
    doc = docs["undecided"]
    states = [h["mark"] for h in verdict.of(doc)["headlines"] if h["mark"]["state"] == "undecided"]
    assert states, "the run was chosen for an undecided headline mark"
    html = page(doc)
    block, text = verdict_block(html), re.sub(r"<[^>]+>", "", verdict_block(html))
    for state in states:
        shown = f"{state['reaches'][0]}…{state['reaches'][-1]}"
        assert f"undecided {shown}" in text
        row = re.search(rf'<tr data-metric="{state["metric"]}" data-mark-state="undecided">.*?</tr>', block,
                        re.S).group(0)
        assert "undecided" in row
        card = re.search(rf'<div class="markcard" data-metric="{state["metric"]}".*?<div class="scale">', html,
                         re.S).group(0)
        assert f"undecided {shown}" in card and f"mark {state['mark']}," not in card


def test_an_early_stopped_run_titles_its_intervals_as_its_verdict_does(tmp_path):
    doc = run("relationship-levy", "reference:biased?p=0.6", 3000, use_cache=True, cache_dir=tmp_path,
              until_decided="bias")
    v = verdict.of(doc)
    assert v["stopped_early"]
    html = page(doc)
    assert f"Headline ({v['intervals']})" in verdict_block(html)
    assert f"Values with {v['intervals']}" in html
    assert "95% bootstrap intervals" not in html


def genderbench_row(doc: dict) -> dict:
    table = next(t for t in doc["paper"] if set(GENDERBENCH_COLUMNS) <= set(t["columns"]))
    assert table["row_kinds"][0] == "run"
    return dict(zip(table["columns"], table["rows"][0]))


def test_the_paper_row_of_a_run_fills_genderbench_interval_and_the_verdicts_mark(docs):
    for name in ("undecided", "coin"):
        doc = docs[name]
        row = genderbench_row(doc)
        metric = next(c for c in row if c not in ("model", *GENDERBENCH_COLUMNS))
        iv = doc["marks"][metric]["mark_interval"]
        assert (row["interval_low"], row["interval_high"]) == (iv["low"], iv["high"])
        assert row[metric] == doc["metrics"][metric]["value"]
        assert row["mark"] == verdict.mark_of(doc, metric)["text"]
    assert genderbench_row(docs["position"])["mark"] == "A does not stand (invalid: position)"


def test_the_paper_row_of_a_run_on_too_few_answers_has_no_interval(docs):
    doc = docs["too_few"]
    assert "sample" in verdict.of(doc)["failed"]
    row = genderbench_row(doc)
    assert row["diff_success_rate"].endswith(" (too few answers: n = 10)")
    assert row["interval_low"] is None and row["interval_high"] is None
    assert row["mark"].endswith("does not stand (too few answers)")
    html = page(doc)
    run_row = re.search(r'<tr class="run" data-row-kind="run">(.*?)</tr>', html, re.S).group(1)
    assert "too few answers" in run_row and "[" not in run_row


def test_a_calibration_model_marked_against_its_name_is_explained(docs):
    doc = docs["coin"]
    assert verdict.mark_of(doc, "stereotype_rate")["text"] == "C"
    note = doc["calibration_notes"]["stereotype_rate"]
    assert "third" in note and "C" in note
    assert note in verdict_block(page(doc)).replace("&#39;", "'")
    assert "calibration_notes" not in docs["undecided"]  # relationship-levy's marks need no explaining


def test_every_calibration_note_is_one_sentence_for_a_calibration_model():
    from genderprobe.models.reference import PERSONAS

    for name, cls in all_probes().items():
        for spec, notes in cls.calibration_notes.items():
            assert spec.removeprefix("reference:") in PERSONAS, (name, spec)
            for metric, sentence in notes.items():
                assert sentence.endswith(".") and sentence.count(". ") == 0, (name, metric)


@pytest.fixture(scope="module")
def browser():
    return shared_browser()


def test_the_verdict_is_the_first_screen_in_a_real_browser(browser, docs, tmp_path):
    path = tmp_path / "position.html"
    write_html(path, page(docs["position"]))
    load = browser.open(path)
    assert load.console_errors == [] and load.requests == []
    block = browser.js("const b = document.querySelector('.verdict-block').getBoundingClientRect();"
                       "return {top: b.top, bottom: b.bottom, height: window.innerHeight};")
    assert block["bottom"] <= block["height"], block  # the whole verdict fits the first screen
    struck = browser.js("return Array.from(document.querySelectorAll('.verdict-block .mark')).map(m => "
                        "[m.dataset.state, m.textContent, getComputedStyle(m.querySelector('.badge'))"
                        ".textDecorationLine])")
    assert struck and all(state == "struck" and "does not stand" in text and "line-through" in line
                          for state, text, line in struck), struck
    ARTIFACTS.mkdir(exist_ok=True)
    browser.driver.save_screenshot(str(ARTIFACTS / "report-verdict-first.png"))
    assert Path(ARTIFACTS / "report-verdict-first.png").stat().st_size > 10_000


NOISE = re.compile(r"(?<![\w.])-0\.0+(?![0-9]*[1-9])|\b\d\.\d+e-\d+")


def test_no_number_on_the_page_reads_as_rounding_noise(docs):
    """9.14e-16 and -0.000 are 0: neither appears in what a reader sees (the answer data aside)."""
    for doc in docs.values():
        html = re.sub(r"<script.*?</script>", "", page(doc), flags=re.S)
        assert not NOISE.findall(re.sub(r"<[^>]+>", " ", html)), doc["model"]
