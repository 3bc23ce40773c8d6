"""A suite shows each run's marks as its verdict has them (issue 44): a run that failed validity never
shows a plain mark, in the terminal or in the report's overview, GenderBench card and leaderboards
(read in headless Chromium); a value on too few answers has no interval; an undecided mark is "A…C";
the terminal ends with the GenderBench card."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from browser_support import shared_browser
from click.testing import CliRunner

from genderprobe.interfaces.cli import main

INVALID = "reference:first-option"  # always the first option: fails the position guard on relationship-levy
BIASED = "reference:biased"  # decided marks, a control that plain badges are found where they belong
UNDECIDED = "reference:biased?p=0.7"  # on 40 items its relationship-levy intervals reach A to C
MODELS = (INVALID, BIASED, UNDECIDED)
# direct on 12 stereotypes: fail_rate rests on too few answers, for every model.
SUITE = (f"[suite]\nmodels = {json.dumps(list(MODELS))}\nprobes = [\"relationship-levy\", \"direct\"]\n"
         "[probes.relationship-levy]\nsample_k = 40\n[probes.direct]\nsample_k = 12\n")


def _suite(*args: str):
    # Wide enough that each ranking is one row per model, as a terminal of 250 columns shows it.
    return CliRunner().invoke(main, ["suite", "--resamples", "200", *args], env={"COLUMNS": "250"})


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("suite-verdict")
    (base / "suite.toml").write_text(SUITE, encoding="utf-8")
    result = _suite(str(base / "suite.toml"), "--out", str(base / "out"), "--no-cache")
    assert result.exit_code == 0, result.output
    return base / "out", result.output


def _rows_of(output: str, model: str) -> list[str]:
    """The terminal lines that speak of one model's runs: its run lines and its ranking rows."""
    return [line for line in output.splitlines()
            if re.search(rf"(on {re.escape(model)}: done|^\s+[–\d]+\s+{re.escape(model)}(?![?\w]))", line)]


# A mark letter after a value, an interval or a metric's name, not struck (struck: "A ✗ invalid: position").
PLAIN = re.compile(r"(?:\]|\)|_rate) ([A-D])(?! ✗)\b")


def test_the_terminal_strikes_every_mark_of_an_invalid_run(ran):
    _, output = ran
    lines = _rows_of(output, INVALID)
    assert len(lines) == 4  # two run lines, two ranking rows
    for line in lines:
        assert not PLAIN.search(line) and " ✗ " in line, line
    # The control: its relationship-levy marks are plain (run line, ranking row); its direct run stands on too few.
    assert [len(PLAIN.findall(line)) for line in _rows_of(output, BIASED)] == [2, 0, 2, 0]
    levy = next(line for line in lines if "relationship-levy on" in line)
    assert "diff_success_rate A ✗ invalid: position" in levy and levy.endswith("validity FAIL: position")
    direct = next(line for line in lines if "direct on" in line)
    assert "fail_rate D ✗ too few answers" in direct
    # The direct ranking row: the value without its interval.
    row = next(line for line in lines if re.match(r"\s+–\s+", line) and "1.000 (too few answers) D ✗" in line)
    assert not re.search(r"1\.000 \[", row)
    # Controls: a decided mark is plain, an undecided one is a range.
    assert re.search(rf"relationship-levy on {re.escape(BIASED)}: done \(diff_abs_success_rate D, diff_success_rate D\)$",
                     output, re.M)
    assert re.search(rf"relationship-levy on {re.escape(UNDECIDED)}: done \(diff_abs_success_rate A…C undecided, "
                     r"diff_success_rate A…C undecided\); validity WARN: mark$", output, re.M)
    assert re.search(r"0\.225 \[0\.000, 0\.450\] A…C ", output)  # its ranking row: the range alone


def test_the_terminal_ends_with_the_genderbench_card(ran):
    _, output = ran
    tail = output.rstrip("\n").split("\n")
    start = next(i for i, line in enumerate(tail) if line.startswith("GenderBench report card"))
    assert tail[start - 1].startswith("Report: ")
    card = tail[start + 1:]
    assert len(card) == len(MODELS) * 5  # each model, then its four sections
    assert [card[i] for i in range(0, len(card), 5)] == list(MODELS)
    sections = {card[i]: card[i + 1:i + 5] for i in range(0, len(card), 5)}
    for model in MODELS:
        titles = [re.match(r"  (\S.*?)  ", line).group(1).strip() for line in sections[model]]
        assert titles == ["Decision-making", "Creative writing", "Manifested opinions", "Affective computing"]
    # Every model's opinion section rests on its direct run, which stands on too few answers: struck.
    for model in MODELS:
        opinion = sections[model][2]
        assert re.search(r"Manifested opinions\s+[A-D] ✗: rests on marks that do not stand \(", opinion), opinion
        assert "direct fail_rate: too few answers" in opinion
    assert "relationship-levy diff_success_rate: invalid: position" in sections[INVALID][2]
    assert all(line.rstrip().endswith("–") for line in sections[BIASED][:2])  # no charted probe ran there


def test_the_card_json_says_which_sections_do_not_stand(ran):
    folder, _ = ran
    card = {m["model"]: m["sections"] for m in json.loads((folder / "genderbench_card.json").read_text())["models"]}
    opinion = card[INVALID]["opinion"]
    assert opinion["state"] == "struck" and "does not stand" in opinion["text"]
    levy = next(c for c in opinion["charted"] if c["metric"] == "diff_success_rate")
    assert (levy["mark"], levy["struck"]) == ("A", "invalid: position")
    assert card["gpt-4o (report 1.0)"]["opinion"]["state"] == "decided"


@pytest.fixture(scope="module")
def page(ran):
    folder, _ = ran
    browser = shared_browser()
    load = browser.open(folder / "report.html")
    assert load.console_errors == [] and load.requests == []
    browser.screenshot("suite-invalid-run.png")
    return browser


# Each cell (or row) of a selector: its visible text, and how many plain (unstruck) mark badges it shows.
CELLS = """return Array.from(document.querySelectorAll(arguments[0])).map(el => ({
  text: el.innerText, plain: el.querySelectorAll('.badge:not(.struck)').length,
  struck: Array.from(el.querySelectorAll('.mark-struck')).map(s => s.title)}));"""


def _cells(browser, selector: str) -> list[dict]:
    found = browser.js(CELLS, selector)
    assert found, selector
    return found


def test_the_overview_never_shows_an_invalid_runs_mark_plain(page):
    cells = _cells(page, f'table.overview td[data-model="{INVALID}"]')
    assert len(cells) == 3  # two relationship-levy headlines, direct's fail_rate
    for cell in cells:
        assert cell["plain"] == 0 and "does not stand" in cell["text"], cell
    levy = [c for c in cells if "invalid: position" in c["text"]]
    assert len(levy) == 2 and all(c["struck"] == ["A does not stand: invalid: position"] for c in levy)
    # A value on too few answers: the words, and no interval.
    direct = page.js(CELLS, 'table.overview tr[data-probe="direct"] td[data-model]')
    assert len(direct) == 3
    for cell in direct:
        assert "too few answers (n = 12)" in cell["text"] and "[" not in cell["text"] and cell["plain"] == 0
    # Controls: the biased run's decided D is a plain badge; the undecided run shows A…C.
    biased = _cells(page, f'table.overview tr[data-probe="relationship-levy"] td[data-model="{BIASED}"]')
    assert all(c["plain"] == 1 and c["text"].rstrip().endswith("D") for c in biased)
    undecided = _cells(page, f'table.overview tr[data-probe="relationship-levy"] td[data-model="{UNDECIDED}"]')
    assert all(c["text"].rstrip().endswith("A…C") and c["plain"] == 2 for c in undecided)


def test_the_card_strikes_a_section_resting_on_a_mark_that_does_not_stand(page):
    for model in MODELS:
        (opinion,) = _cells(page, f'table.card tr[data-model="{model}"] td[data-section="opinion"]')
        assert opinion["plain"] == 0 and "does not stand: rests on" in opinion["text"], (model, opinion)
    (invalid,) = _cells(page, f'table.card tr[data-model="{INVALID}"] td[data-section="opinion"]')
    assert "relationship-levy (invalid: position)" in invalid["text"]
    published = _cells(page, 'table.card tr.published td[data-section="creative"]')
    assert len(published) == 12 and all(c["plain"] >= 1 for c in published)  # report 1.0's rows keep their marks


def test_the_leaderboards_never_show_an_invalid_runs_mark_plain(page):
    (row,) = _cells(page, f'table.suite-leaderboard tr[data-model="{INVALID}"]')
    assert row["plain"] == 0 and "not counted, invalid: relationship-levy, direct" in row["text"]
    ranked = _cells(page, f'section.probe table.leaderboard tr[data-model="{INVALID}"]')
    assert len(ranked) == 2
    for r in ranked:
        assert r["plain"] == 0 and "not ranked" in r["text"] and "does not stand" in r["text"], r
    page.js("document.querySelectorAll('details.run-metrics').forEach(d => d.open = true)")
    every_metric = _cells(page, f'section.probe details.run-metrics[data-model="{INVALID}"] table.metrics tbody tr')
    assert all(r["plain"] == 0 for r in every_metric)
    assert any("does not stand: invalid: position" in r["text"] for r in every_metric)
    # The undecided run counts, shown as its range.
    (undecided,) = _cells(page, f'table.suite-leaderboard tr[data-model="{UNDECIDED}"]')
    assert re.search(r"A\s*…\s*C\s*×2", undecided["text"]), undecided


def test_fail_on_mark_names_the_marks_that_do_not_stand(ran, tmp_path):
    folder, _ = ran
    copy = Path(shutil.copytree(folder, tmp_path / "copy"))
    (tmp_path / "suite.toml").write_text(SUITE, encoding="utf-8")
    result = _suite(str(tmp_path / "suite.toml"), "--out", str(copy), "--fail-on-mark", "D", "-q")
    assert result.exit_code == 3, result.output
    assert f"relationship-levy on {INVALID} marks do not stand (invalid: position)" in result.output
    assert f"direct on {BIASED} marks do not stand (invalid: sample)" in result.output
