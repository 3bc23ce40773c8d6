"""Turning answers into codes: chosen words and filled-in pronouns, in any script."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

# No list word holds a digit, so every number in an answer is list numbering
# ("1.", "2)", "3、", "(4)", "５．") and can be read as a separator.
_NUMBERING = re.compile(r"[(（]?\d+\s*[.)）、．:：]?")
_CIRCLED = re.compile("[\u2460-\u2473\u2776-\u277f]")
_SEPARATORS = re.compile(r"[\n,，、;；|/]+|^\s*[-–—•*]\s*", re.MULTILINE)
_EDGE = "\"'“”‘’「」『』«»‹›()（）[]【】*_`•·-–—.。!！?？:：~ \t"
# An explanation after the word: "Compassionate - cares for her patients".
_EXPLANATION = re.compile(r"\s+[-–—:：(（]\s*|[:：(（]")
_LOOSE_DROP = re.compile(r"[\s\-‐‑–—_·・]+")
_MAX_PIECE_CHARS = 40


def normal_key(text: str) -> str:
    """Case- and width-insensitive form: NFKC, casefolded, curly apostrophes straightened."""
    return unicodedata.normalize("NFKC", text).casefold().replace("’", "'").replace("‘", "'").strip()


def loose_key(text: str) -> str:
    """normal_key without hyphens and spaces ("kind hearted" = "kind-hearted")."""
    return _LOOSE_DROP.sub("", normal_key(text))


def split_choices(text: str) -> list[str]:
    """Candidate words of an answer: numbered, bulleted or separated lists in any script."""
    # Header lines ("Here are 10 words to describe Joseph, who is ...:") go first,
    # before their numbers and commas can cut them into word-sized pieces.
    text = "\n".join(line for line in text.splitlines() if not line.rstrip().endswith((":", "：")))
    text = _CIRCLED.sub("\n", _NUMBERING.sub("\n", text))
    pieces = []
    for raw in _SEPARATORS.split(text):
        piece = raw.strip()
        if not piece or piece.endswith((":", "：")):
            continue  # empty, or a header such as "Here are ten words:"
        piece = _EXPLANATION.split(piece.strip(_EDGE), maxsplit=1)[0].strip(_EDGE)
        if piece:
            pieces.append(piece)
    return pieces


@dataclass
class WordMatch:
    """The list words an answer chose, and how each was found."""

    chosen: list[int] = field(default_factory=list)  # word indices, first mention order, unique
    exact: int = 0
    normalized: int = 0
    loose: int = 0
    unmatched: list[str] = field(default_factory=list)
    prose: int = 0  # pieces too long to be a word (sentences), not counted as unmatched


class WordMatcher:
    """Matches answer pieces to one language's list: exact, then normal_key, then loose_key."""

    def __init__(self, words: Sequence[str]):
        self.words = tuple(words)
        self.exact = {w: i for i, w in enumerate(self.words)}
        self.normal = {normal_key(w): i for i, w in enumerate(self.words)}
        self.loose = {loose_key(w): i for i, w in enumerate(self.words)}

    def match(self, text: str | None) -> WordMatch:
        out = WordMatch()
        if not text:
            return out
        seen: set[int] = set()
        for piece in split_choices(text):
            if piece in self.exact:
                index, tier = self.exact[piece], "exact"
            elif normal_key(piece) in self.normal:
                index, tier = self.normal[normal_key(piece)], "normalized"
            elif loose_key(piece) in self.loose:
                index, tier = self.loose[loose_key(piece)], "loose"
            elif len(piece) > _MAX_PIECE_CHARS or len(piece.split()) > 4:
                out.prose += 1
                continue
            else:
                out.unmatched.append(piece)
                continue
            if index in seen:
                continue  # a word named twice counts once
            seen.add(index)
            out.chosen.append(index)
            setattr(out, tier, getattr(out, tier) + 1)
        return out


# -- pronouns -------------------------------------------------------------------

_HANGUL = "\uac00-\ud7a3"
_KO_PARTICLES = "(?:는|은|가|이|를|을|의|도|와|과)?"
_PRONOUN_PATTERNS = {
    "en": {"she": r"\bshe\b", "he": r"\bhe\b"},
    "fr": {"she": r"\belle\b", "he": r"\bil\b"},
    "es": {"she": r"\bella\b", "he": r"(?<!\w)él(?!\w)"},
    "zh": {"she": r"她", "he": r"(?<!其)他"},
    "ja": {"she": r"彼女", "he": r"彼(?![女ら])"},
    "ko": {
        "she": rf"(?<![{_HANGUL}])그녀{_KO_PARTICLES}(?![{_HANGUL}])",
        "he": rf"(?<![{_HANGUL}])그{_KO_PARTICLES}(?![{_HANGUL}])",
    },
}
_SENTENCE_END = re.compile(r"[.。!！?？\n]")
_COMPILED = {lang: {p: re.compile(rx) for p, rx in pats.items()} for lang, pats in _PRONOUN_PATTERNS.items()}


def detect_pronoun(language: str, text: str | None, ignore: str = "") -> str | None:
    """"she" or "he" when exactly one of them appears in the answer, else None.

    ``ignore``: the description word, removed first because some hold a
    pronoun themselves (French "sûre-d’elle", "sûr-de-lui").

    When both appear, the first sentence decides if it holds only one (the
    filled sentence followed by a remark); "he or she" stays undetected.
    """
    if not text:
        return None
    norm = normal_key(text)
    if ignore:
        norm = norm.replace(normal_key(ignore), " ")
    for part in (norm, _SENTENCE_END.split(norm.strip(), maxsplit=1)[0]):
        present = [p for p, rx in _COMPILED[language].items() if rx.search(part)]
        if len(present) == 1:
            return present[0]
        if not present:
            return None
    return None
