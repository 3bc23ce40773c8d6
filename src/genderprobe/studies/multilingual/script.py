"""Which of the six languages a text is written in, from its script and function words.

Appendix A of Zhao et al. 2024: models asked for a Chinese dialogue sometimes
answer in English, and those dialogues are excluded. Scripts separate Korean
(Hangul), Japanese (kana among the Han characters) and Chinese (Han without
kana); English, French and Spanish share the Latin script and are told apart
by their commonest function words and their letters with diacritics.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

_FUNCTION_WORDS = {
    "en": frozenset(
        "the and you i is are to it my your how what this that was for have me do of in so we with "
        "just not can i'm it's don't you're i'll".split()
    ),
    "fr": frozenset(
        "le les et je vous est pas une des du qui ce c'est ne mon ma mes ton ta il elle nous avec "
        "pour dans suis bien oui merci j'ai tu es".split()
    )
    - {"tu", "es"},
    "es": frozenset(
        "el los las y es no mi una por para con estás qué cómo me te lo se yo sí muy gracias "
        "estoy eres del".split()
    ),
}
# Letters only one of the three Latin-script languages uses.
_LETTERS = {"es": "ñ¿¡áíóú", "fr": "çœèêàâûùôîë"}
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def script_counts(text: str) -> Counter:
    """Letters per script: latin, han, kana, hangul."""
    counts: Counter = Counter()
    for ch in text:
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "")
        if name.startswith("HANGUL"):
            counts["hangul"] += 1
        elif name.startswith(("HIRAGANA", "KATAKANA")):
            counts["kana"] += 1
        elif name.startswith("CJK"):
            counts["han"] += 1
        elif name.startswith("LATIN"):
            counts["latin"] += 1
    return counts


def detect_language(text: str | None) -> str | None:
    """en, fr, es, zh, ja or ko; None when the text gives no clue (empty, or Latin without function words)."""
    if not text:
        return None
    counts = script_counts(text)
    total = sum(counts.values())
    if total == 0:
        return None
    cjk = counts["han"] + counts["kana"]
    if counts["hangul"] >= 0.5 * total:
        return "ko"
    if cjk >= 0.5 * total:
        # Japanese writes its particles and endings in kana; Chinese has none.
        return "ja" if counts["kana"] >= 0.05 * cjk else "zh"
    if counts["latin"] >= 0.5 * total:
        return _latin_language(text)
    return None


def _latin_language(text: str) -> str | None:
    lower = unicodedata.normalize("NFC", text).casefold().replace("’", "'")
    words = _WORD.findall(lower)
    score = {lang: sum(w in fw for w in words) for lang, fw in _FUNCTION_WORDS.items()}
    for lang, letters in _LETTERS.items():
        score[lang] += sum(lower.count(ch) for ch in letters)
    best = max(score.values())
    if best == 0:
        return None
    leaders = [lang for lang, s in score.items() if s == best]
    return leaders[0] if len(leaders) == 1 else None


def wrong_language(text: str | None, language: str) -> bool:
    """The text is recognisably written in another language than ``language``."""
    found = detect_language(text)
    return found is not None and found != language
