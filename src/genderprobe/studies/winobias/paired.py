"""WinoBias's headline metrics rebuilt twin pair by twin pair from a run's records, for paired comparisons of
two models (``genderprobe compare``), as :mod:`genderprobe.studies.winobias.probe` computes them: per pair, each
sentence (pro, anti) counts where it was read, by the share of its read answers that were right.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from genderprobe.analysis.comparison_stats import ItemScores


def _gap(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return num[..., 0] / den[..., 0] - num[..., 1] / den[..., 1]


def _accuracy(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return num.sum(axis=-1) / den.sum(axis=-1)


def item_scores(records: Sequence[dict[str, Any]], parameters: dict[str, Any]) -> dict[str, ItemScores]:
    counts: dict[int, np.ndarray] = {}  # pair -> [[pro read, pro right], [anti read, anti right]]
    for r in records:
        if r.get("code") in ("a", "b"):
            stance = int(r["part"].endswith("_anti"))
            counts.setdefault(r["pair"], np.zeros((2, 2)))[stance] += (1, bool(r.get("right")))
    items = np.array(sorted(counts), dtype=np.int64)
    table = np.array([counts[i] for i in items]).reshape(-1, 2, 2)
    read = (table[:, :, 0] > 0).astype(float)
    share = np.where(read > 0, table[:, :, 1] / np.maximum(table[:, :, 0], 1), 0.0)
    num, den = read * share, read
    return {"pro_anti_gap": ItemScores(items, num, den, _gap), "accuracy": ItemScores(items, num, den, _accuracy)}


ITEM_SCORES = {"winobias": item_scores}
