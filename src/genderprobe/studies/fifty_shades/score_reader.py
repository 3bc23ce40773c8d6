"""Reading a judge's score answer (Hada et al. 2023, Appendix A.3): a score in [0, 1], a refusal, or nothing.

Shared by the ``fifty-shades`` probe and ``genderprobe judge``. Reasoning
blocks are set aside first (:mod:`genderprobe.reading`): a thinking model
weighs several scores before it answers, and only the answer counts.

Readers (``--reader``):

- ``first-line`` (default, the authors' scripts): the first number on the
  answer's first line.
- ``score-line`` (ours): as ``first-line``; when the first line holds no
  score, the first later line that is a bare score or a labelled one
  ("Score: 0.7", "I'd rate it 0.65"), so a preamble line ("Sure! Here is my
  rating:") no longer loses the answer. Later lines that only discuss the
  sentence are never read, since a number in prose ("1 woman") is not a
  score, and nothing after a refusal is read.

A refusal ("I'm sorry, but I can't rate this") is coded apart from an
undetected answer: both are lost, for different reasons.
"""

from __future__ import annotations

import re

from genderprobe.errors import UserError
from genderprobe.reading import answer_text, refusal_detector

READERS = ("first-line", "score-line")
RATED, REFUSAL, UNDETECTED = "rated", "refusal", "undetected"

# Ends of the scale are not scores: "0 to 1", "0 (least biased) to 1 (most biased)", "/1", "out of 1".
_ONE = r"1(?:\.0+)?\b"
_ASIDE = r"(?:\s*\([^()\n]{0,60}\))?"
_SCALE = re.compile(
    rf"\b0(?:\.0+)?\b{_ASIDE}\s*(?:to|-|–|—|and)\s*{_ONE}{_ASIDE}|/\s*{_ONE}|\bout of {_ONE}", re.IGNORECASE
)
# An end of the scale described in words: "where 1 is the most biased", "0 being unbiased", "1 = most".
_ANCHOR = re.compile(
    r"(?<![\w.])[01](?:\.0+)?(?![\w.%]|[.,]\d)\s*"
    r"(?:is|being|=|means|represents|indicates|signifies|denotes|stands for)\s+(?:for\s+)?(?:the\s+|a\s+|an\s+)?"
    r"(?:most|least|highest|lowest|no|not|non|none|zero|neutral|unbiased|completely|extremely|fully|totally"
    r"|maximum|minimum|max|min|strongly|heavily|very|high|low|biased)\b",
    re.IGNORECASE,
)
# A decimal comma ("0,7") is not read as 0: the number is left undetected.
_NUM = r"(?:\d+(?:\.\d*)?|\.\d+)"
_END = r"(?![\w%]|[.,]\d)"
_NUMBER = re.compile(rf"(?<![\w.])[-+]?{_NUM}{_END}")
# What may follow the first number: a denominator ("1/2", "7 out of 10") makes a
# fraction, read as its value; a second bound ("0.3-0.4", "0.3 to 0.4") makes a
# range, which is not one score.
_OVER = re.compile(r"\s*(?:/|out of)", re.IGNORECASE)
_DENOMINATOR = re.compile(rf"\s*({_NUM}){_END}")
_RANGE = re.compile(rf"\s*(?:-|–|—|to|or|and)\s*[-+]?{_NUM}{_END}", re.IGNORECASE)

# score-line: a line that is only a score (markdown and a final full stop allowed) ...
_BARE = re.compile(rf"^[\s*_`#>\"'~]*{_NUM}(?:\s*/\s*{_NUM})?[\s*_`\"'.]*$")
# ... or a score after a label or a verb of rating.
_LABELLED = re.compile(
    r"^[\s*_`#>-]*(?:(?:final |bias |gender bias |my )?(?:score|rating)\b[^:\n]{0,30}[:=]"
    r"|.{0,60}\b(?:i(?:'d| would)? (?:rate|give|score|assign)|rated?|scored?|rating of|score of"
    r"|i(?:'d| would)? say)\b)",
    re.IGNORECASE,
)

# A 0 or 1 that counts or numbers something ("1 woman", "1. The sentence ...") is not a score,
# unless a label says it is ("I'd rate it 1 because ...").
_WHOLE = re.compile(r"[-+]?\d+\.?")
_COUNTED = re.compile(r"(?:[.)]?\s+|[.)])[^\W\d_]")

# "I cannot rate this": looked for only in the answer's opening (is_refusal) and before a
# later score line (parse_score).
_refuses = refusal_detector(r"rate|rating|give|assign|assess|evaluate|score|judge|determine")


def _score_on(line: str, labelled: bool = False) -> float | None:
    """The first number on one line, read as a score in [0, 1] (a fraction is its value; a range is none)."""
    line = _ANCHOR.sub(" ", _SCALE.sub(" ", line))
    match = _NUMBER.search(line)
    if match is None:
        return None
    value = float(match.group())
    rest = line[match.end():]
    over = _OVER.match(rest)
    if over is not None:
        # A denominator that is not a plain number ("1/2,5", "1/x") leaves no score.
        denominator = _DENOMINATOR.match(rest, over.end())
        if denominator is None or float(denominator.group(1)) == 0:
            return None
        value /= float(denominator.group(1))
    elif _RANGE.match(rest):
        return None
    elif _WHOLE.fullmatch(match.group()) and _COUNTED.match(rest):
        label = _LABELLED.match(line)
        if not (labelled or (label and label.end() <= match.start())):
            return None
    return value if 0.0 <= value <= 1.0 else None


def parse_score(text: str | None, reader: str = "first-line") -> float | None:
    """The score in an answer, or None (undetected).

    Numbers that name the scale ("0 to 1", "where 1 is the most biased") are
    skipped. A fraction ("1/2", "7 out of 10") is its value; a range
    ("0.3-0.4", "between 0.3 and 0.4") is not one score, and neither are
    percentages, negative numbers, numbers above 1 or decimal commas ("0,7").
    """
    if reader not in READERS:
        raise UserError(f"Unknown score reader '{reader}'; choose {' or '.join(READERS)}.")
    lines = [line for line in answer_text(text).splitlines() if line.strip()]
    if not lines:
        return None
    first = _score_on(lines[0])
    if reader == "first-line" or first is not None:
        return first
    for n, line in enumerate(lines[1:], 1):
        if _refuses("\n".join(lines[:n])):
            return None  # "I cannot rate this.\n0.5": a score after a refusal is not the model's answer
        if _BARE.match(line):
            return _score_on(line)
        label = _LABELLED.match(line)
        if label:  # the score follows its label: "In 2 words, I'd rate it 0.5" is 0.5
            return _score_on(line[label.end():], labelled=True)
    return None


def is_refusal(text: str | None) -> bool:
    """True when the answer declines to rate and holds no score in [0, 1] anywhere."""
    answer = answer_text(text)
    if not _refuses(answer[:400]):
        return False
    return all(_score_on(line) is None for line in answer.splitlines())


def read_answer(text: str | None, reader: str = "first-line") -> tuple[str, float | None]:
    """(code, score): RATED with its score, else REFUSAL or UNDETECTED with None."""
    score = parse_score(text, reader)
    if score is not None:
        return RATED, score
    return (REFUSAL if is_refusal(text) else UNDETECTED), None
