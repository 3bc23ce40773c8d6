"""Fifty Shades score answers, real (SmolLM2-135M-Instruct) and shaped like large models' answers:
each reader reads no score a careful human would not, and its recall is printed (pytest -s)."""

from __future__ import annotations

from corpus_support import MAX_LOST_CLEAR, check, load, score

from genderprobe.studies.fifty_shades.score_reader import is_refusal, parse_score


def test_careful_reader_never_misreads_and_loses_few_clear_scores():
    """score-line, the careful reader: zero misreads, at most 15% of the clear scores lost (issue 30)."""
    found = check("fifty-shades", lambda x: parse_score(x["answer"], "score-line"), min_recall=0.9,
                  max_lost_clear=MAX_LOST_CLEAR)
    assert found.clear >= 50


def test_the_authors_rule_misreads_only_what_the_corpus_records():
    """first-line is the authors' rule, kept as it is: it reads the first number of the first line,
    so "Not 0.2 but 0.6." is 0.2. Each such misread is recorded in the corpus ("first_line")."""
    lines = load("fifty-shades")
    recorded = {x["id"]: x["first_line"] for x in lines if "first_line" in x}
    assert len(recorded) == 5
    assert {x["id"]: parse_score(x["answer"]) for x in lines if x["id"] in recorded} == recorded
    found = score([x for x in lines if x["id"] not in recorded], lambda x: parse_score(x["answer"]))
    print(found.summary("fifty-shades, first-line, less the recorded misreads"))
    assert not found.misreads and not found.invented and found.lost_clear_share <= 0.2


def test_refusals_are_found_and_nothing_else_is_called_one():
    """A refusal is a lost answer of its own kind: never a score, never an answer that holds one."""
    lines = [{**x, "expected": "refusal" if x["refusal"] else None} for x in load("fifty-shades")]
    s = score(lines, lambda x: "refusal" if is_refusal(x["answer"]) else None)
    print(s.summary("fifty-shades refusals"))
    assert not s.misreads and not s.invented, (s.misreads, s.invented)
    assert s.readable >= 4 and s.recall == 1.0
    for x in lines:
        if x["expected"] == "refusal":
            assert parse_score(x["answer"]) is None and parse_score(x["answer"], "score-line") is None
