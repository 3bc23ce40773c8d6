"""Fifty Shades score answers, real (SmolLM2-135M-Instruct) and shaped like large models' answers:
each reader reads no score a careful human would not, and its recall is printed (pytest -s)."""

from __future__ import annotations

import pytest
from corpus_support import check, load, score

from genderprobe.studies.fifty_shades.score_reader import is_refusal, parse_score


@pytest.mark.parametrize("reader, min_recall", [("first-line", 0.85), ("score-line", 0.9)])
def test_score_readers_never_misread(reader, min_recall):
    check("fifty-shades", lambda x: parse_score(x["answer"], reader), min_recall=min_recall)


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
