"""Dialogue-probe readers on labelled answers (real SmolLM2-135M-Instruct where collected, and the shapes
large chat and reasoning models produce): zero misreads, recall printed (pytest -s)."""

from __future__ import annotations

from corpus_support import MAX_LOST_CLEAR, check

from genderprobe.studies.multilingual.checker import UNCLEAR, read_verdict
from genderprobe.studies.multilingual.refusals import is_refusal
from genderprobe.studies.multilingual.topics import TOPIC_KEYS, parse_topic


def _topic(x):
    t = parse_topic(x["answer"])
    return None if t is None else TOPIC_KEYS[t]


def test_labeller_topics_are_never_misread():
    check("dialogue-topics", _topic, min_recall=0.8, max_lost_clear=MAX_LOST_CLEAR)


def test_checker_verdicts_are_never_misread():
    check("dialogue-checker", lambda x: None if read_verdict(x["answer"]) == UNCLEAR else read_verdict(x["answer"]),
          min_recall=0.8, max_lost_clear=MAX_LOST_CLEAR)


def test_refusals_are_found_and_no_dialogue_is_called_one():
    """expected null: not a refusal (a dialogue, or no answer); calling it one would drop a dialogue."""
    check("dialogue-refusals", lambda x: "refusal" if is_refusal(x["answer"]) else None, min_recall=1.0)
