"""What a closed-choice probe keeps of its answers for its validity guards (genderprobe.analysis.validity).

Per answer, in the order the probe planned them: the letter read (the position guard: how the
chosen positions fall, and whether an item asked in both orders was answered by position); per
answer that came back: its group and item, and whether it was unread or refused (the losses by
group); the answers the probe's two readers read differently (the readers check); and the first
answers of each kind as evidence (the unread and failed ones all, up to a bound, for the report's
reading check). WinoBias, StereoSet and the pair choices of Winogender and CrowS-Pairs
(:mod:`genderprobe.reading.pair_choice`) keep them alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from genderprobe.analysis.losses import LossReport, loss_report
from genderprobe.contract import PositionEvidence, ReaderComparison

EVIDENCE = 5  # answers of each kind kept as evidence
UNREAD_EVIDENCE = 1000  # unread and failed answers kept as evidence, for the reading check
DISAGREEMENTS = 20  # answers the two readers read differently, kept as evidence


class ChoiceTally:
    """``letters``: the options' letters, first position first."""

    def __init__(self, letters: str):
        self.letters = letters
        self.chosen: list[int] = []  # per planned answer: the position read, -1 where none was
        self.groups: list[str] = []  # per answer that came back: its group, item, and how it was lost
        self.items: list[Any] = []
        self.undetected: list[bool] = []
        self.refused: list[bool] = []
        self.errors = 0
        self.either = self.disagree = 0  # answers either reader read; those the two read differently
        self.examples: list[dict] = []

    def compare(self, record: dict, readings: Mapping[str, str | None], example: Mapping[str, Any]) -> None:
        """Both readers' readings of one answer (reader name -> letter or None): an answer they read
        differently keeps both readings in its record, and the first few are evidence with ``example``."""
        if not any(readings.values()):
            return
        self.either += 1
        if len(set(readings.values())) > 1:
            self.disagree += 1
            record["readers"] = {k: v or "undetected" for k, v in readings.items()}
            if len(self.examples) < DISAGREEMENTS:
                self.examples.append({**example, **record["readers"]})

    def read(self, group: str, item: Any, letter: str | None, refused: bool) -> None:
        """An answer that came back, read as ``letter`` (None: unread)."""
        self.groups.append(group)
        self.items.append(item)
        self.undetected.append(letter is None)
        self.refused.append(refused)

    def planned(self, letter: str | None) -> None:
        """Every planned answer, failed ones too, in the plan's order: the letter read, or None."""
        self.chosen.append(self.letters.index(letter) if letter else -1)

    @staticmethod
    def keep(evidence: dict[str, list[dict]], kind: str, record: dict, keys: Sequence[str], unread: bool) -> None:
        """The record's ``keys`` as evidence of ``kind``, while there is room for it."""
        bucket = evidence[kind]
        if len(bucket) < (UNREAD_EVIDENCE if unread else EVIDENCE):
            bucket.append({k: record[k] for k in keys if k in record})

    def losses(self, by: str, order: Sequence[str]) -> LossReport:
        """Unread and refused answers by group (a refusal is one way of being unread)."""
        losses = loss_report(self.groups, {"undetected": self.undetected, "refusal": self.refused}, by=by,
                             order=order, items=self.items)
        losses.within = {"refusal": "undetected"}
        return losses

    def counts(self, items: int) -> dict[str, int]:
        """``items``: the unit of paired comparisons (contexts, twin pairs)."""
        return {"items": items, "attempts": len(self.groups), "undetected": int(sum(self.undetected)),
                "refusals": int(sum(self.refused)), "errors": self.errors}

    def position(self, orders: int, repetitions: int, scored: bool) -> PositionEvidence:
        """The positions chosen, and of the items asked in consecutive orders (the plan asks an item's orders in
        turn, repetitions innermost) with both answers read, how many chose the same position in both."""
        grid = np.array(self.chosen)
        chosen = [int((grid == k).sum()) for k in range(len(self.letters))]
        if orders < 2:
            return PositionEvidence(chosen, None, None, scored)
        grid = grid.reshape(-1, orders, repetitions)
        first, second = grid[:, :-1], grid[:, 1:]
        both = (first >= 0) & (second >= 0)
        return PositionEvidence(chosen, int((both & (first == second)).sum()), int(both.sum()), scored)

    def comparison(self, faithful: str, careful: str, used: str, headlines: dict) -> ReaderComparison:
        return ReaderComparison(faithful, careful, used, self.either, self.disagree, headlines)
