"""DeMET's headline metrics rebuilt unit by unit from a run's records, for paired
comparisons of two models (``genderprobe compare``).

As the probe computes them (:mod:`genderprobe.studies.demet.scores`): a unit
is a scenario and a slot (with ``--bootstrap-by scenario``, a whole scenario),
holding per relationship type the sum of its answers' scores (-1 NAME1, +1
NAME2) and how many were answered; every score is a function of the nine
type means. A prompt's answer is the record whose code names a person (one
per prompt, whichever rewording round got it). mixed_gender_bias is the mean
of the three pair biases' absolute values, which are its signed parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from genderprobe.analysis.comparison_stats import ItemScores
from genderprobe.studies.demet.scores import OVERALL, PAIR_NAMES, PAIRS, TYPES, score_samples

SCORE = {"name1": -1.0, "name2": 1.0}


def _metric_key(pair: tuple[str, str]) -> str:
    return f"bias_{pair[0].lower()}_{pair[1].lower()}"


def _combine(name: str):
    return lambda sums, counts: score_samples(sums, counts)[name]


def item_scores(records: Sequence[dict[str, Any]], parameters: dict[str, Any]) -> dict[str, ItemScores]:
    by_scenario = parameters.get("bootstrap_by") == "scenario"
    units: dict[Any, int] = {}
    # A null-baseline record (two people of one group, marked "null_for") is no prompt of the study's.
    answered = [r for r in records if r.get("code") in SCORE and "null_for" not in r]
    rows = [units.setdefault(r["scenario"] if by_scenario else (r["scenario"], r["slot"]), len(units))
            for r in answered]
    sums, counts = np.zeros((len(units), len(TYPES))), np.zeros((len(units), len(TYPES)))
    types = [TYPES.index(r["type"]) for r in answered]
    np.add.at(sums, (rows, types), [SCORE[r["code"]] for r in answered])
    np.add.at(counts, (rows, types), 1.0)
    items = np.array([f"{u[0]}/{u[1]}" if isinstance(u, tuple) else u for u in units], dtype=object)
    out = {OVERALL: ItemScores(items, sums, counts, _combine(OVERALL), signed=_pair_biases,
                               weights=(1 / len(PAIR_NAMES),) * len(PAIR_NAMES))}
    for pair, name in zip(PAIRS, PAIR_NAMES):
        out[_metric_key(pair)] = ItemScores(items, sums, counts, _combine(name))
    return out


def _pair_biases(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The three pair biases (last axis), whose absolute values mixed_gender_bias averages."""
    scores = score_samples(sums, counts)
    return np.stack([scores[name] for name in PAIR_NAMES], axis=-1)


ITEM_SCORES = {"demet": item_scores}
