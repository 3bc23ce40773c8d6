"""The answer browser without a browser: how records read, the stratified sample, the inert data
block, the script's hash in the content policy, and `genderprobe answers`, which exports the rest."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections import Counter
from pathlib import Path

import pytest
import report_support as rs
from click.testing import CliRunner

from genderprobe.interfaces.api import RunConfig, execute, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.models import BACKENDS
from genderprobe.outputs.records import read_records
from genderprobe.outputs.report import render_report
from genderprobe.outputs.report.answer_browser import json_block, script
from genderprobe.outputs.report.answer_data import RunAnswers, gather
from genderprobe.outputs.report.answer_reading import read
from genderprobe.outputs.report.answer_sample import allocate, stratified
from genderprobe.outputs.results import load_results
from genderprobe.studies.relationship_levy.probe import RelationshipLevy


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """RelationshipLevy answered by report_support.MixedModel, which is also its reader judge."""
    out = tmp_path_factory.mktemp("mixed") / "run"
    config = RunConfig(model="test:mixed", use_cache=False, out_dir=out, n_resamples=100,
                       reader_judge="test:mixed", reader_judge_sample=0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(BACKENDS, "test", ("report_support", "test models"))
        execute(RelationshipLevy(sample_k=150), config)
    return out


def records_of(run: Path) -> list[dict]:
    return list(read_records(run / "records.jsonl"))


# -- how a record reads ---------------------------------------------------------------


@pytest.mark.parametrize("record, expected", [
    # RelationshipLevy: the code names the person, man_option says which option the man was.
    ({"man_option": "(a)", "code": "male"}, ("(a)", "rules", "male first")),
    ({"man_option": "(b)", "code": "male"}, ("(b)", "rules", "female first")),
    ({"man_option": "(b)", "code": "female"}, ("(a)", "rules", "female first")),
    ({"man_option": "(a)", "code": "undetected", "reader_judge": "NONE"}, ("undetected", None, "male first")),
    ({"man_option": "(a)", "code": "female", "reader_judge": "(b)"}, ("(b)", "judge", "male first")),
    ({"man_option": "(a)", "code": "undetected", "refusal": True}, ("refusal", None, "male first")),
    ({"man_option": "(a)", "code": "error", "error": "timeout: no answer"}, ("error", None, "male first")),
    # Its null items: two men or two women, x_option says which option x was.
    ({"null": "two women", "x_option": "(b)", "code": "x"}, ("(b)", "rules", "two women")),
    # DeMET: name1 is option 1; the pair type says who comes first.
    ({"type": "W-M", "code": "name2", "read_by": "number"}, ("2", "rules", "female first")),
    ({"type": "N-W", "code": "name1", "read_by": "judge"}, ("1", "judge", "neutral first")),
    ({"type": "M-W", "code": "refusal"}, ("refusal", None, "male first")),
    # GenMO: a stance, and the protagonist's gender.
    ({"gender": "female", "stance": "cant_say"}, ("cant_say", "rules", "female")),
    ({"gender": "male", "stance": "undetected"}, ("undetected", None, "male")),
    # Multilingual dialogue: the pairing; topics the judges could not settle are not read.
    ({"pairing": "FM", "code": "Appearance"}, ("Appearance", "rules", "female first")),
    ({"pairing": "MM", "code": "unresolved"}, ("undetected", None, "male first")),
    # DeMET's name check: the list the name comes from.
    ({"list": "women", "vote": "male"}, ("male", "rules", "female")),
    # Pronouns name no one; a record of no known shape keeps its code, or is unread.
    ({"word": "witty", "code": "she"}, ("she", "rules", None)),
    ({"answer": "x"}, ("undetected", None, None)),
])
def test_each_record_shape_reads_as_its_study_reads_it(record, expected):
    r = read(record)
    assert (r.reading, r.read_by, r.gender) == expected


@pytest.mark.parametrize("record, chose", [
    ({"man_option": "(b)", "code": "male"}, "the man"),  # RelationshipLevy: the man is in the right
    ({"man_option": "(a)", "code": "undetected"}, None),
    ({"stereotype_gender": "male", "code": "neither", "option": "c"}, "neither"),  # GEST
    ({"trait": "is gentle", "code": "female"}, "the woman"),  # a story's character, a resume picked
    ({"type": "M-W", "code": "name2"}, "the woman"),  # DeMET: option 2 of a man-woman pair
    ({"type": "N-M", "code": "name1"}, "the neutral name"),
    ({"type": "W-W", "code": "name1"}, None),  # two women: no gender was chosen
    ({"category": "ambiguous", "code": "c", "chosen": "anti-stereotypical"}, "the other person"),  # BBQ
    ({"list": "women", "vote": "female"}, None),  # a name's gender is a reading, not a person chosen
    ({"source": "sbic", "code": "yes"}, None),
])
def test_a_read_answer_says_whom_it_chose_where_the_record_says(record, chose):
    assert read(record).chose == chose


def test_an_answer_the_readers_read_differently_carries_both_readings():
    record = {"code": "female", "option": "b", "readers": {"genderbench": "b", "improved": "undetected"}}
    assert read(record).readers == (("genderbench", "b"), ("improved", "undetected"))
    assert read({"code": "female"}).readers is None
    # Rare disagreements are a stratum of their own, so a sample keeps them all.
    records = [{"code": "male", "i": i} for i in range(2_000)] + [{**record, "i": i} for i in range(7)]
    sample = stratified(iter(records), 100)
    assert sample.read_differently == 7 and sum(1 for _, _, r in sample.kept if r.readers) == 7


def test_a_real_runs_readings_agree_with_its_codes(mixed):
    """(a) for a female-first prompt is the woman chosen; the judge's readings are the records it read."""
    for record in records_of(mixed):
        r = read(record)
        if record["code"] in ("male", "female"):
            chose_first = (record["code"] == "male") == (record["man_option"] == "(a)")
            assert r.reading == ("(a)" if chose_first else "(b)")
        assert (r.read_by == "judge") == ("reader_judge" in record and record["code"] != "undetected")
    readings = Counter((read(r).reading, read(r).read_by) for r in records_of(mixed))
    assert {("(a)", "rules"), ("(b)", "rules"), ("(a)", "judge"), ("undetected", None), ("refusal", None)} \
        <= set(readings)


# -- the sample ---------------------------------------------------------------------------


def test_the_sample_is_bounded_keeps_rare_strata_whole_and_is_the_same_each_time():
    records = ([{"man_option": "(a)", "code": "male", "i": i} for i in range(9_000)]
               + [{"man_option": "(b)", "code": "male", "i": i} for i in range(900)]
               + [{"man_option": "(a)", "code": "undetected", "i": i} for i in range(40)])
    sample = stratified(iter(records), 1_000)
    assert sample.total == 9_940 and len(sample.kept) == 1_000 and not sample.complete
    kept = Counter(r.reading for _, _, r in sample.kept)
    assert kept == {"undetected": 40, "(a)": 480, "(b)": 480}  # the rare one whole, the rest shared evenly
    assert sample.readings == {"(a)": 9_000, "(b)": 900, "undetected": 40}  # counted over the whole run
    assert [i for i, _, _ in sample.kept] == sorted(i for i, _, _ in sample.kept)  # in run order
    again = stratified(iter(records), 1_000)
    assert [i for i, _, _ in again.kept] == [i for i, _, _ in sample.kept]
    # Within a stratum every record is as likely: the kept (a) answers spread over the whole run.
    positions = [i for i, _, r in sample.kept if r.reading == "(a)" and i < 9_000]
    assert min(positions) < 1_000 and max(positions) > 8_000
    assert allocate({"x": 3, "y": 10}, 100) == {"x": 3, "y": 10}


def test_a_smaller_sample_is_drawn_from_the_kept_one_with_the_quotas_of_a_fresh_draw():
    """A run of long texts gets a smaller sample without its records being read a second time."""
    records = ([{"man_option": "(a)", "code": "male", "i": i} for i in range(9_000)]
               + [{"man_option": "(b)", "code": "male", "i": i} for i in range(900)]
               + [{"man_option": "(a)", "code": "undetected", "i": i} for i in range(40)])
    sample = stratified(iter(records), 1_000)
    for budget in (600, 90, 1):
        smaller, fresh = sample.smaller(budget), stratified(iter(records), budget)
        assert Counter(r.reading for _, _, r in smaller.kept) == Counter(r.reading for _, _, r in fresh.kept)
        assert {id(rec) for _, rec, _ in smaller.kept} <= {id(rec) for _, rec, _ in sample.kept}
        assert (smaller.total, smaller.readings) == (sample.total, sample.readings)
        assert [i for i, _, _ in smaller.kept] == sorted(i for i, _, _ in smaller.kept)
    # Still even within a stratum: the (a) answers kept at 600 spread over the whole run.
    positions = [i for i, _, r in sample.smaller(600).kept if r.reading == "(a)" and i < 9_000]
    assert min(positions) < 1_500 and max(positions) > 7_500


def test_a_page_shares_its_answers_between_its_runs(mixed):
    records = records_of(mixed)
    doc = load_results(mixed / "results.json")
    answers = gather([RunAnswers(doc, "a", records), RunAnswers(doc, "b", mixed / "records.jsonl")], budget=400)
    assert [r.shown for r in answers.runs] == [200, 200] and [r.total for r in answers.runs] == [300, 300]
    assert answers.runs[1].folder == str(mixed)
    assert "run" in [f.key for f in answers.facets]  # the same probe and model twice: told apart by run
    reading = next(f for f in answers.facets if f.key == "reading")
    assert sum(reading.counts) == 400


# -- the page -----------------------------------------------------------------------------


def test_the_data_block_cannot_be_closed_by_an_answer():
    hostile = {"texts": [rs.SCRIPT_BREAKER, "<!-- <script>", "a & b > c", "\u2028"]}
    block = str(json_block(hostile))
    assert "<" not in block and ">" not in block and "&" not in block
    assert json.loads(block) == hostile


def test_the_content_policy_runs_only_the_browsers_own_script(mixed):
    doc = load_results(mixed / "results.json")
    page = render_report([(doc, "run/results.json", mixed / "records.jsonl")])
    policy = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1))
    digest = base64.b64encode(hashlib.sha256(script().encode("utf-8")).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in policy and "default-src 'none'" in policy
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.S)
    assert [(attrs, body == script()) for attrs, body in scripts] == [(' type="application/json" id="answer-data"',
                                                                      False), ("", True)]
    assert rs.SCRIPT_BREAKER not in page  # the answer is in the data block, escaped
    data = json.loads(scripts[0][1])
    assert any(rs.SCRIPT_BREAKER in t for t in data["texts"])
    # Without records there is nothing to browse, so nothing runs.
    bare = render_report([(doc, "run/results.json")])
    assert "<script" not in bare and "script-src 'none'" in bare
    assert "its records file was not given to the report" in bare


def test_reasoning_is_set_aside_from_the_answer_but_kept(mixed):
    answers = gather([RunAnswers(load_results(mixed / "results.json"), "run", mixed / "records.jsonl")])
    thought = [r for r in answers.rows if "t" in r]
    assert thought and all(answers.texts[r["t"]] == "Weighing both partners' claims." for r in thought)
    assert all(answers.texts[r["a"]] == "(b)" for r in thought)


# -- genderprobe answers -------------------------------------------------------------------


def answers_cli(*args: str):
    return CliRunner().invoke(main, ["answers", *args])


def test_the_answers_command_exports_every_answer_with_its_reading(mixed, tmp_path):
    records = records_of(mixed)
    out = tmp_path / "answers.jsonl"
    result = answers_cli(str(mixed), "--reading", "(a)", "--gender", "female first", "-o", str(out))
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = [r for r in records if r["man_option"] == "(b)" and r["code"] == "female"]
    assert [{k: v for k, v in line.items() if k != "read"} for line in lines] == expected
    assert all(line["read"]["reading"] == "(a)" and line["read"]["gender"] == "female first" for line in lines)
    result = answers_cli(str(mixed / "results.json"), "--search", rs.PLANTED.upper(), "--group", "topic=Money")
    planted = [json.loads(line) for line in result.output.splitlines()]
    assert planted and all(rs.PLANTED in p["answer"] and p["topic"] == "Money" for p in planted)
    assert len(planted) == sum(rs.PLANTED in r["answer"] for r in records)
    judged = answers_cli(str(mixed), "--read-by", "judge").output.splitlines()
    assert len(judged) == sum("reader_judge" in r and r["code"] != "undetected" for r in records)


def test_the_answers_command_says_in_one_sentence_when_a_run_kept_no_records(tmp_path):
    config = RunConfig(model="reference:random", use_cache=False, out_dir=tmp_path / "run", n_resamples=50,
                       keep_records=False)
    run_probe("relationship-levy", "reference:random", config=config, sample_k=20)
    result = answers_cli(str(tmp_path / "run"))
    assert result.exit_code == 2
    assert result.output.strip().endswith("has no records file: answers are kept by runs with --out and without "
                                          "--no-records.")
    assert answers_cli(str(tmp_path / "run"), "--group", "topic").exit_code == 2


def test_long_texts_are_shortened_and_a_page_of_them_stays_a_few_megabytes(mixed, monkeypatch):
    # HiringBloomberg's prompts hold eight resumes (12,500 characters): 6,000 of them made a 78 MB page.
    from genderprobe.outputs.report import answer_data

    monkeypatch.setattr(answer_data, "PAGE_TEXT_CHARS", 400_000)
    records = [{**r, "prompt": f"{i:05d}" + "resume " * 1_800 + "Who do you hire?"} for i, r in enumerate(records_of(mixed))]
    answers = gather([RunAnswers(load_results(mixed / "results.json"), "a", records)])
    prompts = [answers.texts[row["p"]] for row in answers.rows]
    assert all(len(p) < answer_data.TEXT_CHARS + 120 for p in prompts)
    assert all(p.endswith("Who do you hire?") and "characters left out here; genderprobe answers RUN" in p
               for p in prompts)
    assert sum(map(len, answers.texts)) <= 400_000 * 1.1
    assert 0 < answers.runs[0].shown < answers.runs[0].total == len(records)
    assert answers.sampled
