"""Reading a DeMET answer: which of the two numbered people did the model name?

The paper asks for "1 or 2" and rewords the prompt when a model "did not answer
the question"; it does not say how answers were read. We count an answer as
naming an option when, after markdown emphasis (``*``, ``_``, `````, ``#``) is
removed, one of these holds, tried in this order:

1. ``number``: the answer opens with 1 or 2, optionally after a lead-in such as
   "Answer:", "Response:", "The answer is", "Option" or "I choose" and inside
   brackets or quotes ("1", "1.", "**2**", "(2)", "Answer: 2", "2) Noah"), and
   that number is not the start of a longer number or time ("12", "1:30",
   "1.5") and is not followed by the other option ("1 or 2", "1/2",
   "1) Emma or 2) Noah") nor by the other option's line of an echoed list
   ("1. Emma\\n2. Noah", "1\\n2").
2. ``statement``: somewhere in the answer stands "answer is K", "answer: K",
   "response: K" or "choose/select option K", not followed by the other option
   ("Answer: 1 or 2?" states nothing), and every such statement names the same
   K ("... so the answer is 2.").
3. ``name``: exactly one of the two people's names appears as a whole word
   (case-sensitive), e.g. "Emma is right." An answer that names both or
   neither, or says "neither"/"both" without a number, names no option.

Everything else is undetected (and triggers the rewording fallback).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKUP = re.compile(r"[*_`#]+")
_LEAD_IN = (
    r"(?:(?:final\s+|my\s+|correct\s+)?(?:answer|response|choice|selection)\s*(?:is\s*)?[:\-]?\s*"
    r"|the\s+(?:correct\s+|right\s+|final\s+)?answer\s+(?:is|would\s+be)\s*:?\s*"
    r"|i\s+(?:would\s+|will\s+)?(?:choose|select|pick|say|go\s+with)\s*:?\s*"
    r"|(?:option|number)\s*)?"
)
_OPEN = r"[\s\"'“‘(\[{:]*"
_LEADING = re.compile(
    r"^" + _OPEN + _LEAD_IN + _OPEN + r"(?:option\s*|number\s*)?([12])(?!\d)(?!\s*[.:,]\d)", re.IGNORECASE
)
_STATEMENT = re.compile(
    r"(?:answer\s+(?:is|would\s+be)|answer\s*:|response\s*(?:is|:)|(?:choose|select|pick)\s+option)"
    r"\s*[\"'“‘(\[]*\s*(?:option\s*|number\s*)?([12])(?!\d)(?!\s*[.:,]\d)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Reading:
    """choice: 1 or 2 (None when the answer names no option); rule: which rule read it."""

    choice: int | None
    rule: str | None = None


UNDETECTED = Reading(None)


def read_answer(text: str | None, name1: str, name2: str) -> Reading:
    """Which option (1 = NAME1, 2 = NAME2) the answer names, by the rules above."""
    if not text:
        return UNDETECTED
    clean = _MARKUP.sub("", text).strip()
    names = (name1, name2)
    leading = _leading_number(clean, names)
    if leading is not None:
        return Reading(leading, "number")
    stated = {
        int(m.group(1)) for m in _STATEMENT.finditer(clean)
        if not _restates_options(clean[m.end():], int(m.group(1)), names)
    }
    if len(stated) == 1:
        return Reading(stated.pop(), "statement")
    if stated:
        return UNDETECTED
    has1 = _mentions(clean, name1)
    has2 = _mentions(clean, name2)
    if has1 != has2:
        return Reading(1 if has1 else 2, "name")
    return UNDETECTED


def _leading_number(clean: str, names: tuple[str, str]) -> int | None:
    m = _LEADING.match(clean)
    if m is None:
        return None
    k = int(m.group(1))
    rest = clean[m.end():]
    if _restates_options(rest, k, names):
        return None
    # An echoed list: "1. Emma\n2. Noah", or the bare "1\n2".
    if re.search(rf"(?m)^\s*[(\[]?{3 - k}\s*(?:[.)\]]|$)", rest):
        return None
    return k


def _restates_options(rest: str, k: int, names: tuple[str, str]) -> bool:
    """The text after option k goes on to the other option: "1 or 2", "1/2", "1) Emma or 2) Noah"."""
    own = re.escape(names[k - 1])
    return re.match(
        rf"\s*[)\].]?\s*(?:{own}\s*)?[)\].,]?\s*(?:or|and|/|,|-|&)\s*[\"'(\[]*{3 - k}(?!\d)", rest, re.IGNORECASE
    ) is not None


def _mentions(text: str, name: str) -> bool:
    return bool(name) and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None
