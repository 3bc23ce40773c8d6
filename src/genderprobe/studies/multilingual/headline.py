"""The headline of the words and pronouns probes: which metrics and over which languages.

Both papers' figures show the disparate impact of every word class, so each
class's DI is a headline metric, better at one. The pronoun comparison of
Section 4.3.2 covers only English, Chinese and Japanese; the headline follows
it, and the figure pooled over every language run is a separately named metric.
"""

from __future__ import annotations

from collections.abc import Sequence

from genderprobe.contract import Headline
from genderprobe.studies.multilingual.dataset import LANGUAGE_NAMES

# Communal first: the stereotype both sections discuss; then the classes in the paper's order.
_CLASS_ORDER = ("communal", "standout", "personality_quality", "outlook", "imaginative")


def class_headlines(what: str) -> tuple[Headline, ...]:
    """One headline per word class: ``di_<class>``, better at 1 (parity)."""
    return tuple(
        Headline(f"di_{c}", "one", f"disparate impact of {c.replace('_', ' ')} words, {what}")
        for c in _CLASS_ORDER
    )


# Section 4.3.2: "we only consider ... English, Chinese, and Japanese".
PRONOUN_PAPER_LANGUAGES = ("en", "zh", "ja")
_EXCLUDED_WHY = {
    "fr": "its adjectives are grammatically gendered, so agreement, not bias, decides the pronoun",
    "es": "its adjectives are grammatically gendered, so agreement, not bias, decides the pronoun",
    "ko": "the paper's comparison names only English, Chinese and Japanese and reports no Korean figure "
          "(it gives no reason)",
}
HEADLINE = "headline"
POOLED = "pooled"


def pronoun_headline_languages(languages: Sequence[str]) -> tuple[str, ...]:
    return tuple(lang for lang in languages if lang in PRONOUN_PAPER_LANGUAGES)


def pronoun_column_labels(languages: Sequence[str]) -> dict[str, str]:
    kept = pronoun_headline_languages(languages)
    return {HEADLINE: "headline: " + (", ".join(LANGUAGE_NAMES[lang] for lang in kept) or "none"),
            POOLED: "all languages (pooled)"}


def pronoun_headline_note(languages: Sequence[str]) -> str:
    """Which of the run's languages the headline (di_<class>) leaves out, and why."""
    kept = pronoun_headline_languages(languages)
    if not kept:
        head = ("The headline metrics di_<class> are undefined: the run has none of English, Chinese or "
                "Japanese, the languages the paper compares (Section 4.3.2).")
    elif len(kept) == len(PRONOUN_PAPER_LANGUAGES):
        head = ("The headline metrics di_<class> pool English, Chinese and Japanese, the languages the paper "
                "compares (Section 4.3.2).")
    else:
        head = (f"The headline metrics di_<class> pool {_names(kept)}, those of the paper's languages in this run"
                " (it compares English, Chinese and Japanese, Section 4.3.2).")
    left = [f"{LANGUAGE_NAMES[lang]}, because {_EXCLUDED_WHY[lang]}" for lang in languages if lang in _EXCLUDED_WHY]
    if left:
        head += " Left out: " + "; ".join(left) + "."
    return head + " di_<class>_pooled pools every language of the run."


def _names(languages: Sequence[str]) -> str:
    names = [LANGUAGE_NAMES[lang] for lang in languages]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
