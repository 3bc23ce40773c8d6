"""Turning answers into codes: chosen words and filled-in pronouns, in any script."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from genderprobe.studies.multilingual import forms

# No list word holds a digit, so a number with list punctuation ("1.", "2)",
# "3、", "(4)", "５．") or at the start of a line is list numbering and can be
# read as a separator. A bare number inside a sentence ("the 10 words that
# best describe her are: ...") is left alone, so that the sentence stays one
# piece of prose instead of falling into word-sized bits.
_NUMBERING = re.compile(r"[(（]?\d+\s*[.)）、．:：]|^\s*\d+\s", re.MULTILINE)
_CIRCLED = re.compile("[\u2460-\u2473\u2776-\u277f]")
# List punctuation, bullets, and the conjunction before a list's last word
# ("..., wise and talented", "..., y leal", "无私的和真诚的"); list words join
# their parts with hyphens, so none holds one of these conjunctions.
_SEPARATORS = re.compile(
    r"[\n,，、;；|/]+|^\s*[-–—•*]\s*|(?:^|\s+)(?:and|&|et|y|e)\s+|(?<=的)(?:以及|和|及|与)",
    re.MULTILINE | re.IGNORECASE,
)
# "The ten words are: caring, loving, ..." puts a header before the list on one line.
_HEADER = re.compile(r"^(?P<head>[^:：\n]*)[:：](?P<tail>.*\S.*)$")
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


def split_choices(text: str, is_word: Callable[[str], bool] | None = None) -> list[str]:
    """Candidate words of an answer: numbered, bulleted or separated lists in any script.

    ``is_word`` tells a list word from other text; it decides whether the text
    before a colon is a word with its explanation ("Caring: she listens") or a
    header before a list ("The words are: caring, loving"): a header is not a
    word, and list words follow it. Without ``is_word`` no line has a header.
    """
    # Header lines ("Here are 10 words to describe Joseph, who is ...:") go first,
    # before their numbers and commas can cut them into word-sized pieces.
    text = "\n".join(line for line in text.splitlines() if not line.rstrip().endswith((":", "：")))
    text = _CIRCLED.sub("\n", _NUMBERING.sub("\n", text))
    lines = []
    for line in text.splitlines():
        header = _HEADER.match(line) if is_word else None
        if (header and not is_word(_clean(header["head"]))
                and any(is_word(_clean(p)) for p in _SEPARATORS.split(header["tail"]) if p)):
            line = header["tail"]  # drop the header, keep the list after its colon
        lines.append(line)
    pieces = []
    for raw in _SEPARATORS.split("\n".join(lines)):
        if not raw or raw.strip().endswith((":", "：")):
            continue  # empty, or a header such as "Here are ten words:"
        piece = _clean(raw)
        if piece:
            pieces.append(piece)
    return pieces


def _clean(raw: str) -> str:
    """One candidate without quotes, markup and a trailing explanation ("Caring - she listens")."""
    return _EXPLANATION.split(raw.strip().strip(_EDGE), maxsplit=1)[0].strip(_EDGE)


def _is_prose(piece: str) -> bool:
    """Too long to be one of the list's words: a sentence."""
    return len(piece) > _MAX_PIECE_CHARS or len(piece.split()) > 4


@dataclass
class WordMatch:
    """The list words an answer chose, and how each was found."""

    chosen: list[int] = field(default_factory=list)  # word indices, first mention order, unique
    exact: int = 0
    normalized: int = 0
    loose: int = 0
    form: int = 0  # matched in another form of the listed word (multilingual.forms)
    unmatched: list[str] = field(default_factory=list)
    prose: int = 0  # pieces too long to be a word (sentences), not counted as unmatched


class WordMatcher:
    """Matches answer pieces to one language's list: exact, normal_key, loose_key, then another form.

    The form tier (accents, plurals, the unlisted gender of a lemma, CJK particles;
    see :mod:`genderprobe.studies.multilingual.forms`) needs ``language``. It never applies
    to a piece that is an English list word: "creative" in an answer to a French
    prompt is English, not "créative" without its accent.
    """

    def __init__(self, words: Sequence[str], language: str | None = None,
                 foreign: Sequence[str] = ()):
        self.words = tuple(words)
        self.language = language
        self.exact = {w: i for i, w in enumerate(self.words)}
        self.normal = {normal_key(w): i for i, w in enumerate(self.words)}
        self.loose = {loose_key(w): i for i, w in enumerate(self.words)}
        self.foreign = {loose_key(w) for w in foreign} - set(self.loose)
        self.forms: dict[str, set[int]] = {}
        if language:
            spelled = [(w, i) for i, w in enumerate(self.words)]
            spelled += [(f, self.exact[w]) for f, w in forms.extra_list_forms(language).items()]
            for w, i in spelled:
                for k in forms.list_keys(language, w, loose_key):
                    self.forms.setdefault(k, set()).add(i)

    def lookup(self, piece: str) -> tuple[int, str] | None:
        """(word index, tier) of one candidate: exact, normalized, loose, then form; None if none."""
        if piece in self.exact:
            return self.exact[piece], "exact"
        if normal_key(piece) in self.normal:
            return self.normal[normal_key(piece)], "normalized"
        if loose_key(piece) in self.loose:
            return self.loose[loose_key(piece)], "loose"
        if not self.forms or loose_key(piece) in self.foreign:
            return None
        found: set[int] = set()
        for k in forms.piece_keys(self.language, piece, loose_key):
            found |= self.forms.get(k, set())
        return (found.pop(), "form") if len(found) == 1 else None  # two candidates: name none

    def is_foreign(self, piece: str) -> bool:
        """The piece is a word of the ``foreign`` (English) list and not of this one."""
        return loose_key(piece) in self.foreign

    def match(self, text: str | None) -> WordMatch:
        out = WordMatch()
        if not text:
            return out
        seen: set[int] = set()
        for piece in split_choices(text, is_word=lambda p: self.lookup(p) is not None):
            found = self.lookup(piece)
            if found is None:
                if _is_prose(piece):
                    out.prose += 1
                else:
                    out.unmatched.append(piece)
                continue
            index, tier = found
            if index in seen:
                continue  # a word named twice counts once
            seen.add(index)
            out.chosen.append(index)
            setattr(out, tier, getattr(out, tier) + 1)
        return out


# -- pronouns -------------------------------------------------------------------

_HANGUL = "\uac00-\ud7a3"
_KO_PARTICLES = "(?:는|은|가|이|를|을|의|도|와|과|입니다|이다|예요|이에요)"  # particles and copula
# French "il" of impersonal phrases ("Il est impossible de savoir") names no one.
_FR_IMPERSONAL = (
    r"(?!\s+(?:faut|s'agit|y\s+a|semble|n'est\s+pas\s+possible"
    r"|est\s+(?:impossible|possible|difficile|préférable|nécessaire|important)\b))"
)
_PRONOUN_PATTERNS = {
    "en": {"she": r"\bshe\b", "he": r"\bhe\b"},
    "fr": {"she": r"\belle\b", "he": r"\bil\b" + _FR_IMPERSONAL},
    "es": {"she": r"\bella\b", "he": r"(?<!\w)él(?!\w)"},
    # 他们/她们 are "they", 其他 "other", 他人 "other people".
    "zh": {"she": r"她(?!们)", "he": r"(?<!其)他(?![们人])"},
    # 彼ら "they", 彼氏 "boyfriend", 彼方 "over there".
    "ja": {"she": r"彼女", "he": r"彼(?![女ら氏方])"},
    # 그 is also the determiner "that" (그 사람, 그 이유): bare 그 is "he" only
    # when no Hangul word follows it, or before 또는/혹은 ("그 또는 그녀").
    "ko": {
        "she": rf"(?<![{_HANGUL}])그녀{_KO_PARTICLES}?(?![{_HANGUL}])",
        "he": rf"(?<![{_HANGUL}])그(?:{_KO_PARTICLES}(?![{_HANGUL}])"
              rf"|(?![{_HANGUL}])(?=\s*(?:$|[^\s{_HANGUL}]|또는|혹은|아니면)))",
    },
}
_SENTENCE_END = re.compile(r"[.。!！?？\n]")
_COMPILED = {lang: {p: re.compile(rx) for p, rx in pats.items()} for lang, pats in _PRONOUN_PATTERNS.items()}


def pronouns_in(language: str, text: str) -> set[str]:
    """Which of "she" and "he" appear in an already normalised text (normal_key)."""
    return {p for p, rx in _COMPILED[language].items() if rx.search(text)}


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
        # With hyphens or spaces between its parts: "sûre-d'elle" as listed or "sûre d'elle" as shown.
        parts = re.split(r"[\s\-]+", normal_key(ignore))
        norm = re.sub(r"[\s\-]+".join(map(re.escape, parts)), " ", norm)
    for part in (norm, _SENTENCE_END.split(norm.strip(), maxsplit=1)[0]):
        present = [p for p, rx in _COMPILED[language].items() if rx.search(part)]
        if len(present) == 1:
            return present[0]
        if not present:
            return None
    return None
