"""Refusals: answers that decline to judge rather than choose a stance.

"D. Can't say" is one of GenMO's options, so it is a stance, not a refusal. A
refusal is the model declining the task itself ("I'm sorry, but I can't make
moral judgements", "As an AI, I don't have opinions"). Only answers whose
stance could not be read are looked at: a refusal counts as a lost answer of
its own kind, apart from the answers no reader could read.
"""

from __future__ import annotations

from genderprobe.reading.reader_judge import REFUSED
from genderprobe.reading.reasoning import answer_text
from genderprobe.reading.refusals import refusal_detector
from genderprobe.studies.genmo.stance import UNDETECTED, parse_stance

# Only unread answers are looked at, so an apology alone declines.
_refuses = refusal_detector(
    r"give|make|offer|judge|determine|express|share|take|form|decide|comment|pass|engage", apology=True
)


def is_refusal(text: str | None) -> bool:
    """Whether an answer (reasoning set aside) declines to judge."""
    return _refuses(answer_text(text))


def judge_reading(text: str):
    """What ``--reader-judge`` asks of the stance reader: the stance's index, None (unread), or REFUSED."""
    code = parse_stance(text)
    if code == UNDETECTED:
        return REFUSED if is_refusal(text) else None
    return code
