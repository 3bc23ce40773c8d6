"""Other spellings of a list word that still name that word: the "form" matching tier.

Models answer with the list's words in forms the list does not print:

- French and Spanish without accents ("carismatica", "elegante" for "élégante");
- French and Spanish plurals ("intelligentes", "loyaux", "leales", "audaces");
- the masculine of a French adjective the paper lists only in the feminine
  ("éloquent" for "éloquente", "amical" for "amicale"). Losing those loses
  one gender's agreement, so it skews the word's and the class's ratio;
- Chinese adjectives without 的 ("聪明" for "聪明的") and Japanese ones without
  な or の ("知的" for "知的な", "無私" for "無私の").

Every form maps to one listed word of the same lemma, so to the same class. A
form that could name two list words names none (the matcher checks that).
"""

from __future__ import annotations

import re
import unicodedata

# French adjectives the paper's Table 14 lists in the feminine only, with their
# masculine. Every other gendered French and Spanish adjective has both forms
# listed, and the rest are epicene ("sage", "fiable", "inteligente"); a test
# checks that this table names every lone gendered word.
OTHER_GENDER = {"fr": {"éloquent": "éloquente", "amical": "amicale"}}

_CJK_PARTICLES = {"zh": "的", "ja": "なの"}
_WORD_CHARS = re.compile(r"^[^\W\d_]+$")


def fold_accents(text: str) -> str:
    """Without diacritics: "élégante" -> "elegante" (œ and ñ's tilde: ñ folds to n)."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


def list_keys(language: str, word: str, key) -> set[str]:
    """The form keys of one list word; ``key`` is the matcher's loose key."""
    base = key(word)
    keys = {base}
    if language in ("fr", "es"):
        keys.add(fold_accents(base))
    if language in _CJK_PARTICLES and len(base) > 1 and base[-1] in _CJK_PARTICLES[language]:
        keys.add(base[:-1])
    return keys


def extra_list_forms(language: str) -> dict[str, str]:
    """Unlisted forms that name a listed word: {form: listed word}."""
    return dict(OTHER_GENDER.get(language, {}))


def piece_keys(language: str, piece: str, key) -> set[str]:
    """The keys an answer's piece may match in the form tier: itself, accent-free, singular, bare."""
    base = key(piece)
    keys = {base}
    if language in ("fr", "es"):
        for singular in _singulars(language, base):
            keys.update((singular, fold_accents(singular)))
        keys.add(fold_accents(base))
    if language in _CJK_PARTICLES and len(base) > 1 and base[-1] in _CJK_PARTICLES[language]:
        keys.add(base[:-1])
    return keys


def _singulars(language: str, word: str) -> list[str]:
    """Candidate singulars of one plural word (none for compounds or non-words)."""
    if not _WORD_CHARS.match(word) or len(word) < 4:
        return []
    out = []
    if language == "fr":
        if word.endswith("aux"):
            out.append(word[:-3] + "al")  # loyaux -> loyal
        if word.endswith("s"):
            out.append(word[:-1])
    else:
        if word.endswith("ces"):
            out.append(word[:-3] + "z")  # audaces -> audaz
        if word.endswith("es"):
            out.append(word[:-2])  # leales -> leal
        if word.endswith("s"):
            out.append(word[:-1])
    return out
