"""Reading a judge's score answer (Hada et al. 2023, Appendix A.3): a score in [0, 1], a refusal, or nothing.

Shared by the ``fifty-shades`` probe and ``genderprobe judge``. Reasoning
blocks are set aside first (:mod:`genderprobe.reading.reasoning`): a thinking model
weighs several scores before it answers, and only the answer counts.

Readers (``--reader``):

- ``first-line`` (default, the authors' scripts): the first number on the
  answer's first line.
- ``score-line`` (ours, the careful reader): the first line as ``first-line``
  reads it, less the scores it names only to set aside ("not 0.2 but 0.6",
  "0.8 rather than 0.5") and the scale's ends described in words ("where 0 is
  not biased and 1 is highly biased"); a line naming two scores without
  choosing ("0.5? Maybe 0.7.") is no score. When the first line holds no
  score, the first later line that is a bare score or a labelled one
  ("Score: 0.7", "I'd rate it 0.65"), so a preamble line ("Sure! Here is my
  rating:") no longer loses the answer; a later line that corrects the score
  ("Actually, on reflection, 0.5.") replaces it. Later lines that only
  discuss the sentence are never read, since a number in prose ("1 woman")
  is not a score, and nothing after a refusal is read.

A refusal ("I'm sorry, but I can't rate this") is coded apart from an
undetected answer: both are lost, for different reasons.
"""

from __future__ import annotations

import re

from genderprobe.errors import UserError
from genderprobe.reading.reasoning import answer_text
from genderprobe.reading.refusals import refusal_detector

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

# score-line: a score named only to be set aside ("not 0.2", "isn't a 0", "rather than 0.5") ...
_DENIED = re.compile(
    rf"(?:\bnot\s+(?:an?\s+|even\s+(?:an?\s+)?)?|\bisn['’]t\s+(?:an?\s+)?|\brather\s+than\s+(?:an?\s+)?"
    rf"|\binstead\s+of\s+(?:an?\s+)?){_NUM}{_END}",
    re.IGNORECASE,
)
# ... an end of the scale described in more words than _ANCHOR's ("1 is highly biased", "0 meaning fair").
_SCALE_WORDS = re.compile(
    r"(?<![\w.])[01](?:\.0+)?(?![\w.%]|[.,]\d)\s*(?:is|being|=|means|meaning|for|:)\s+(?:\w+\s+){0,3}?"
    r"(?:bias(?:ed)?|neutral|sexis[tm]|stereotyp\w*|fair|offensive)\b",
    re.IGNORECASE,
)
# ... the scores a line names with a decimal point: two different ones are no choice.
_DECIMAL = re.compile(r"(?<![\w.])(?:0?\.\d+|1\.0*)(?![\w%]|[.,]\d)")
# A range's bounds ("range 0.3-0.4") are not a second score.
_BOUNDS = re.compile(rf"{_NUM}\s*(?:-|–|—|to)\s*{_NUM}{_END}", re.IGNORECASE)
# ... a later line correcting the score ("Actually, on reflection, 0.5.", "Final score: 0.6").
_CORRECTION = re.compile(
    r"^[\s*_`#>-]*(?:actually|on (?:second thought|reflection)|wait|correction|revised|let me reconsider"
    r"|final (?:score|rating|answer))\b",
    re.IGNORECASE,
)

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
    if reader == "first-line":
        return _score_on(lines[0])
    first = _careful_score_on(lines[0])
    if first is not None:
        return _corrected(first, lines, 0)
    for n, line in enumerate(lines[1:], 1):
        if _refuses("\n".join(lines[:n])):
            return None  # "I cannot rate this.\n0.5": a score after a refusal is not the model's answer
        if _BARE.match(line):
            score = _careful_score_on(line)
        elif label := _LABELLED.match(line):  # the score follows its label: "In 2 words, I'd rate it 0.5" is 0.5
            score = _careful_score_on(line[label.end():], labelled=True)
        else:
            continue
        return None if score is None else _corrected(score, lines, n)
    return None


def _careful_score_on(line: str, labelled: bool = False) -> float | None:
    """score-line's reading of one line: scores set aside and the scale's ends left out, and
    no score where the line names two different ones."""
    line = _DENIED.sub(" ", _SCALE_WORDS.sub(" ", line))
    value = _score_on(line, labelled)
    label = _LABELLED.match(line)
    if value is None and label:  # a number before the label is not the score: "Given 8 examples, I'd say 0.6"
        line = line[label.end():]
        value = _score_on(line, labelled=True)
    if value is None:
        return None
    others = _BOUNDS.sub(" ", _ANCHOR.sub(" ", _SCALE.sub(" ", line)))  # "0.35 (range 0.3-0.4)" names one score
    named = {float(m.group()) for m in _DECIMAL.finditer(others)}
    return value if named <= {value} else None


def _corrected(score: float, lines: list[str], at: int) -> float:
    """The score read on line ``at``, or the one the last later line corrects it to ("Actually, 0.5.")."""
    for n, line in enumerate(lines[at + 1:], at + 1):
        if _CORRECTION.match(line):
            if _refuses("\n".join(lines[:n])):
                break
            value = _careful_score_on(_CORRECTION.sub(" ", line), labelled=True)
            score = score if value is None else value
    return score


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
