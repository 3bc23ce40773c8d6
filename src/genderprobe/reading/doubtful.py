"""A third signal for the readers check: readings both readers share that rest on a contradicted letter.

Where the paper's rule and the careful reader disagree, the readers check says so. Where
they agree, it is silent, yet both can misread alike: "(c) Incorrect answer: ..." or
"(a) means that the response must contain a letter ..., which is A" are read as (c) and
(a) by both. :func:`rests_on_contradicted_letter` flags such an agreed reading: every
mention of the chosen letter stands beside words that contradict choosing it (a
negation just before it, "wrong"/"incorrect" just after it, or talk about the answer's
format in its sentence). It never changes a reading; it only counts, so a run whose
agreed readings are often of this kind is warned (genderprobe.analysis.validity).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from genderprobe.reading.reasoning import answer_text

# Words that talk about the answer's format, not its choice: "the response must contain a letter in the correct
# alphabetical position, which is A" (SmolLM2's). A letter in such a sentence chooses nothing.
FORMAT_TALK = re.compile(
    r"(?<![\w'])(?:letters?|alphabet\w*|format\w*|parenthes[ie]s|brackets?|capital|lower[- ]?case|upper[- ]?case"
    # "The answer should be (a)" names the choice, not the format.
    r"|(?:respon(?:d|se)|answer|reply)[ \t]+(?:must|should|needs?|has[ \t]+to|contains?)"
    r"(?![ \t]+be[ \t]+[\"'(][a-z][\"')](?![\w'])))(?![\w'])",
    re.IGNORECASE)
# Words right after a letter that call its option wrong: "(c) Incorrect answer: ...", "b) Wrong.", "(a) - not correct".
CALLED_WRONG = re.compile(
    r"[ \t:\-–—.,]*(?:(?:is|was|would[ \t]+be)[ \t]+)?(?:(?:the|an?)[ \t]+)?(?:incorrect|wrong|false|invalid|untrue|mistaken"
    r"|not[ \t]+(?:(?:the|my|an?)[ \t]+)?(?:correct|right|true|valid|answer|case|choice)|eliminated|excluded|ruled[ \t]+out)(?![\w'])",
    re.IGNORECASE)
_MARKUP = re.compile(r"[*_`#]+")
# A negation just before a letter: "not (b)", "rather than (a)", "isn't option B".
_NEGATED_BEFORE = re.compile(
    r"(?<![\w'])(?:not|never|no|nor|n't|rather[ \t]+than|instead[ \t]+of|except|other[ \t]+than)"
    r"[ \t,:]*(?:(?:the|option|answer|choice)[ \t]+)*[\"'(]*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def _mentions(plain: str, letter: str) -> list[re.Match[str]]:
    """Where the letter stands as an option's label: "(b)", "b)" or "b." opening a line, "option b", a capital
    "B" standing alone ("which is B")."""
    low, up = re.escape(letter.lower()), re.escape(letter.upper())
    pattern = (rf"\(\s*(?i:{low})\s*\)|(?m:^[ \t\-•]*)(?i:{low})[.)](?=\s|$)|(?i:option)[ \t]+(?i:{low})(?!\w)"
               rf"|(?<![\w'])\"?{up}\"?(?![\w'])")
    return list(re.finditer(pattern, plain))


def _sentence(plain: str, start: int, end: int) -> str:
    left = max((m.end() for m in _SENTENCE_END.finditer(plain, 0, start)), default=0)
    found = _SENTENCE_END.search(plain, end)
    return plain[left:found.start() if found else len(plain)]


def rests_on_contradicted_letter(text: str | None, letter: str, options: Sequence[str] = ()) -> bool:
    """Whether an answer read as ``letter`` names that letter only beside words contradicting the choice.

    ``options``: the item's option texts, blanked before the format words are looked for (an option may be
    "Capital letters"). False where the answer never names the letter (it was read from an option's text).
    """
    plain = _MARKUP.sub("", answer_text(text))
    found = _mentions(plain, letter)
    if not found:
        return False
    texts = [re.escape(str(t).strip()) for t in options if str(t).strip()]
    blank = re.compile("|".join(texts), re.IGNORECASE) if texts else None

    def contradicted(m: re.Match[str]) -> bool:
        sentence = _sentence(plain, m.start(), m.end())
        if blank is not None:
            sentence = blank.sub(" ", sentence)
        return bool(_NEGATED_BEFORE.search(plain, 0, m.start()) or CALLED_WRONG.match(plain, m.end())
                    or FORMAT_TALK.search(sentence))

    return all(contradicted(m) for m in found)
