"""Tables and charts shared by the word and pronoun probes (disparate impact by class and word)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from genderprobe import charts
from genderprobe.analysis.stats import Estimate
from genderprobe.contract import Table
from genderprobe.studies.multilingual.dataset import LANGUAGE_NAMES, WORD_CLASSES

OVERALL = "all"


def class_table(
    title: str,
    per_language: Mapping[str, Mapping[str, Estimate]],
    note: str,
    labels: Mapping[str, str] | None = None,
) -> Table:
    """Rows: word classes; columns: languages then language groups (``labels`` names
    the columns that are not a single language)."""
    columns = list(per_language)
    rows = [[c] + [per_language[lang].get(c) for lang in columns] for c in WORD_CLASSES]
    return Table(title, ["word class"] + [_column(lang, labels) for lang in columns], rows, note)


def class_heatmap(
    chart_id: str,
    title: str,
    per_language: Mapping[str, Mapping[str, Estimate]],
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    columns = list(per_language)
    values = [[_value(per_language[lang].get(c)) for lang in columns] for c in WORD_CLASSES]
    return charts.heatmap(chart_id, title, list(WORD_CLASSES), [_column(lang, labels) for lang in columns], values,
                          center=1.0, value_label="disparate impact (female / male)")


def skewed_words(
    language: str,
    words: Sequence[str],
    classes: Sequence[str],
    estimates: Sequence[Estimate],
    female: Sequence[int],
    male: Sequence[int],
    *,
    labels: tuple[str, str],
    limit: int = 10,
) -> Table:
    """The words furthest from parity: defined ratios by |log DI|, then one-sided words by count."""
    rows = []
    for i, est in enumerate(estimates):
        if female[i] + male[i] == 0:
            continue
        if est.value is not None and est.value > 0:
            key = abs(math.log(est.value))
        else:
            key = math.inf  # chosen for one gender only: as skewed as it gets
        rows.append((key, female[i] + male[i], i))
    rows.sort(key=lambda r: (-r[0], -r[1]))
    body = [[words[i], classes[i], estimates[i], int(female[i]), int(male[i])] for _, _, i in rows[:limit]]
    return Table(
        f"{_column(language)}: the {limit} words furthest from parity",
        ["word", "class", "disparate impact [95% CI]", labels[0], labels[1]],
        body,
        "Undefined: the word never came with the denominator gender.",
    )


def _column(language: str, labels: Mapping[str, str] | None = None) -> str:
    if labels and language in labels:
        return labels[language]
    return "all languages" if language == OVERALL else LANGUAGE_NAMES[language]


def _value(est: Estimate | None) -> float | None:
    return est.value if est is not None else None
