"""Zhao et al. 2024 word, occupation and name lists in six languages.

See ``data/SOURCE.md`` (beside this module) for how the appendix tables were cleaned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import read_csv, read_json
from genderprobe.errors import UserError

LANGUAGES = ("en", "fr", "es", "zh", "ja", "ko")
LANGUAGE_NAMES = {
    "en": "English", "fr": "French", "es": "Spanish", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
}
WORD_CLASSES = ("standout", "personality_quality", "outlook", "communal", "imaginative")
GENDERS = ("female", "male")
N_OCCUPATIONS = 20
N_NAMES = 3


@dataclass(frozen=True)
class WordList:
    """One language's description words, each with its word class (parallel tuples)."""

    language: str
    words: tuple[str, ...]
    classes: tuple[str, ...]

    def of_class(self, word_class: str) -> tuple[str, ...]:
        return tuple(w for w, c in zip(self.words, self.classes) if c == word_class)

    def class_index(self) -> tuple[int, ...]:
        """The word class of each word as an index into WORD_CLASSES."""
        return tuple(WORD_CLASSES.index(c) for c in self.classes)


def check_languages(languages: Sequence[str]) -> tuple[str, ...]:
    """The languages as given, refusing unknown, repeated or no languages."""
    langs = tuple(languages)
    if not langs:
        raise UserError(f"Give at least one language; known: {','.join(LANGUAGES)}.")
    for lang in langs:
        if lang not in LANGUAGES:
            raise UserError(f"Unknown language '{lang}'; known: {','.join(LANGUAGES)}.")
    if len(set(langs)) != len(langs):
        raise UserError("A language is listed twice in --languages; list each once.")
    return langs


@cache
def word_list(language: str) -> WordList:
    relpath = f"multilingual/words_{language}.csv"
    words, classes = [], []
    for line, row in enumerate(read_csv(relpath, ("word_class", "word")), start=2):
        word, word_class = row["word"].strip(), row["word_class"].strip()
        if word_class not in WORD_CLASSES or not word:
            raise UserError(f"{relpath} line {line} has an empty word or an unknown word class.")
        if word in words:
            raise UserError(f"{relpath} line {line} repeats the word '{word}'.")
        words.append(word)
        classes.append(word_class)
    return WordList(language, tuple(words), tuple(classes))


@cache
def occupations(language: str) -> tuple[tuple[str, str], ...]:
    """The 20 (female, male) occupation pairs of Appendix D.2."""
    relpath = f"multilingual/occupations_{language}.csv"
    pairs = tuple((r["female"].strip(), r["male"].strip()) for r in read_csv(relpath, ("female", "male")))
    if len(pairs) != N_OCCUPATIONS or not all(f and m for f, m in pairs):
        raise UserError(f"{relpath} must hold {N_OCCUPATIONS} non-empty occupation pairs.")
    return pairs


@cache
def _all_names() -> dict[tuple[str, str], tuple[str, ...]]:
    out: dict[tuple[str, str], list[str]] = {}
    for line, row in enumerate(read_csv("multilingual/names.csv", ("language", "gender", "name")), start=2):
        key = (row["language"].strip(), row["gender"].strip())
        if key[0] not in LANGUAGES or key[1] not in GENDERS or not row["name"].strip():
            raise UserError(f"multilingual/names.csv line {line} has an unknown language or gender.")
        out.setdefault(key, []).append(row["name"].strip())
    return {k: tuple(v) for k, v in out.items()}


def names(language: str, gender: str) -> tuple[str, ...]:
    """The three given names of one gender in one language."""
    found = _all_names().get((language, gender), ())
    if len(found) != N_NAMES:
        raise UserError(f"multilingual/names.csv must hold {N_NAMES} {gender} names for '{language}'.")
    return found


@cache
def calibration_dialogues() -> dict[str, dict[str, str]]:
    """language -> topic key -> a two-line dialogue the reference personas answer."""
    data = read_json("multilingual/calibration_dialogues.json")
    try:
        return {lang: {t: "\n".join(lines) for t, lines in data[lang].items()} for lang in LANGUAGES}
    except (KeyError, TypeError, AttributeError):
        raise UserError("multilingual/calibration_dialogues.json lacks a language or is malformed.") from None
