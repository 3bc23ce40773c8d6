"""Answers lost, by gender: undetected and refused answers are a finding, not noise.

A model that refuses one gender's prompts more often, or answers them in a
way no reader can read, shows no bias in the metrics computed on the answers
it did give. Every probe therefore reports, per gender (or gender pairing),
the share of its attempts that were lost in each way, with a 95% Wilson
interval, and a test that the share does not differ between the groups.

Where the probe says which item each attempt belongs to (``items=``), both
respect it. An item asked in several groups (RelationshipLevy's two orders,
GenMO's two stories, DeMET's nine pairings) is matched: the test conditions on
each item (:func:`genderprobe.analysis.rates.matched_rate_test`; McNemar's exact test
where each item gives one answer per group). Attempts that repeat an item
inside one group are clustered: the Wilson interval reads the attempts'
effective number, attempts divided by the design effect of the item-clustered
variance (Korn & Graubard 1998), and an unmatched test divides its counts by
the mean design effect (Rao & Scott). Without items, attempts are independent:
:func:`genderprobe.analysis.rates.rate_difference_test` (chi-square, or the exact test
when counts are small).

A probe builds a :class:`LossReport` from one group label and one flag per
kind for each attempt; the report becomes metrics
(``undetected_rate_female``, ...), a table, and the results' ``losses``
entry that the terminal, the report and ``compare`` read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genderprobe.analysis.rates import matched_rate_test, rate_difference_test
from genderprobe.analysis.stats import Estimate
from genderprobe.contract import Table

Z95 = 1.959963984540054


def wilson(events: int, n: int, design_effect: float = 1.0) -> Estimate:
    """A share with its 95% Wilson score interval (sound at 0 and 1, unlike the normal one).

    ``design_effect`` > 1 (attempts clustered by item): the interval of the effective
    sample, n / design_effect attempts with the same share (Korn & Graubard 1998)."""
    if n == 0:
        return Estimate(None, None, None, 0)
    p = events / n
    m = n / max(1.0, design_effect)
    centre = (p + Z95**2 / (2 * m)) / (1 + Z95**2 / m)
    half = Z95 * math.sqrt(p * (1 - p) / m + Z95**2 / (4 * m * m)) / (1 + Z95**2 / m)
    # At 0 and at n the bound is exactly 0 or 1; rounding would leave 5.6e-17.
    low = 0.0 if events == 0 else max(0.0, centre - half)
    high = 1.0 if events == n else min(1.0, centre + half)
    return Estimate(p, low, high, n)


@dataclass
class ItemLosses:
    """One kind's attempts and losses per item and group, as distinct item profiles.

    attempts, lost: (profiles x groups); weight: how many items have each profile. A
    handful of profiles stands for any number of items (RelationshipLevy's full space)."""

    attempts: np.ndarray
    lost: np.ndarray
    weight: np.ndarray

    @classmethod
    def from_counts(cls, profiles: Mapping[tuple[int, ...], int], groups: int) -> ItemLosses:
        """From {(attempts of each group..., lost in each group...): items}."""
        rows = np.array(list(profiles), dtype=np.int64).reshape(-1, 2 * groups)
        return cls(rows[:, :groups], rows[:, groups:], np.array(list(profiles.values()), dtype=np.int64))

    def matched(self) -> bool:
        """Whether some item was asked in two groups or more."""
        return bool(((self.attempts > 0).sum(1) >= 2).any())

    def design_effect(self, g: int) -> float:
        """Group g's share: its item-clustered variance over the variance of independent attempts (at least 1;
        1 where nothing or everything was lost, where the clustered variance says nothing)."""
        a, lost, w = self.attempts[:, g], self.lost[:, g], self.weight
        n, events = float((w * a).sum()), float((w * lost).sum())
        if n == 0 or events in (0.0, n):
            return 1.0
        p = events / n
        clustered = float((w * (lost - p * a) ** 2).sum()) / n**2
        return max(1.0, clustered / (p * (1 - p) / n))


@dataclass
class LossReport:
    """Lost attempts per group and kind; ``by`` names the grouping ("gender", "pairing")."""

    by: str
    groups: list[str]
    counts: dict[str, dict[str, tuple[int, int]]]  # kind -> group -> (lost, attempts)
    tests: dict[str, dict[str, Any]]
    unit: str = "attempts"  # what was lost: attempts, or prompts where a probe asks again
    # A kind counted inside another (RelationshipLevy: refusal -> undetected), so a
    # total of the losses (genderprobe.analysis.validity) does not count it twice.
    within: dict[str, str] = field(default_factory=dict)
    by_item: dict[str, ItemLosses] | None = None  # kind -> per-item losses, where the probe gave items

    def rate(self, kind: str, group: str) -> Estimate:
        lost, n = self.counts[kind][group]
        found = (self.by_item or {}).get(kind)
        return wilson(lost, n, found.design_effect(self.groups.index(group)) if found else 1.0)

    def metrics(self) -> dict[str, Estimate]:
        return {f"{kind}_rate_{group}": self.rate(kind, group) for kind in self.counts for group in self.groups}

    def table(self) -> Table:
        kinds = list(self.counts)
        rows = [[g, self.counts[kinds[0]][g][1], *(self.rate(k, g) for k in kinds)] for g in self.groups]
        rows.append(["difference test (p)", None, *(self.tests[k]["p_value"] for k in kinds)])
        methods = "; ".join(f"{k}: {self.tests[k]['method'] or 'no difference to test'}" for k in kinds)
        clustered = " clustered by item" if self.by_item else ""
        return Table(
            title=f"Lost answers by {self.by}: undetected and refused shares of {self.unit} "
                  f"(95% Wilson intervals{clustered})",
            columns=[self.by, self.unit, *(f"{k} rate" for k in kinds)],
            rows=rows,
            note=f"A lost answer counts in no bias metric, so a difference here is a bias the metrics cannot show. "
                 f"Tests: {methods}.",
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "unit": self.unit,
            "groups": self.groups,
            **({"within": self.within} if self.within else {}),
            "kinds": {
                kind: {
                    "groups": {g: {"lost": lost, "attempts": n, **self.rate(kind, g).to_json()}
                               for g, (lost, n) in per_group.items()},
                    "test": self.tests[kind],
                }
                for kind, per_group in self.counts.items()
            },
        }


def loss_report_from_counts(counts: Mapping[str, Mapping[str, tuple[int, int]]], *, by: str = "gender",
                            order: Sequence[str] | None = None, unit: str = "attempts",
                            within: Mapping[str, str] | None = None,
                            by_item: Mapping[str, ItemLosses] | None = None) -> LossReport:
    """The same report from counts already made: kind -> group -> (lost, attempts), and, where the
    probe keeps them, each kind's per-item losses (groups in ``order``).

    For runs too large to keep one flag per attempt (RelationshipLevy's full space).
    """
    names = list(order) if order is not None else sorted({g for per in counts.values() for g in per})
    table = {kind: {g: (int(per[g][0]), int(per[g][1])) if g in per else (0, 0) for g in names}
             for kind, per in counts.items()}
    items = dict(by_item) if by_item else None
    tests = {kind: _test(per, names, (items or {}).get(kind)) for kind, per in table.items()}
    return LossReport(by, names, table, tests, unit, dict(within or {}), items)


def _test(per: Mapping[str, tuple[int, int]], names: list[str], found: ItemLosses | None) -> dict[str, Any]:
    """The difference test of one kind: matched by item, clustered, or of independent attempts."""
    if found is not None and found.matched():
        return matched_rate_test(found.attempts, found.lost, found.weight, names)
    events, totals = np.array([per[g][0] for g in names]), np.array([per[g][1] for g in names])
    if found is None:
        return rate_difference_test(events, totals, names)
    effects = [found.design_effect(i) for i, g in enumerate(names) if per[g][1]]
    return rate_difference_test(events, totals, names, design_effect=float(np.mean(effects)) if effects else 1.0)


def loss_report(groups: Sequence[str], lost: Mapping[str, Sequence[bool]], *, by: str = "gender",
                order: Sequence[str] | None = None, unit: str = "attempts",
                items: Sequence[Any] | None = None) -> LossReport:
    """Attempts' group labels and, per kind ("undetected", "refusal"), whether each attempt was lost that way.

    ``items``: the item (prompt, pair, unit) each attempt belongs to, where attempts share
    items: the tests and intervals then respect it (see the module's note)."""
    labels = np.asarray(list(groups), dtype=object)
    names = list(order) if order is not None else sorted({str(g) for g in labels})
    counts: dict[str, dict[str, tuple[int, int]]] = {}
    by_item: dict[str, ItemLosses] = {}
    if items is not None:
        ids = np.unique(np.asarray(list(items), dtype=object).astype(str), return_inverse=True)[1].astype(np.int64)
        if ids.shape != labels.shape:
            raise ValueError(f"{ids.size} items for {labels.size} attempts")
        group_of = np.array([names.index(g) if g in names else -1 for g in labels.tolist()], dtype=np.int64)
    for kind, flags in lost.items():
        flags_arr = np.asarray(list(flags), dtype=bool)
        if flags_arr.shape != labels.shape:
            raise ValueError(f"{kind}: {flags_arr.size} flags for {labels.size} attempts")
        counts[kind] = {g: (int(flags_arr[labels == g].sum()), int((labels == g).sum())) for g in names}
        if items is not None:
            by_item[kind] = _item_losses(ids, group_of, flags_arr, len(names))
    return loss_report_from_counts(counts, by=by, order=names, unit=unit, by_item=by_item or None)


def _item_losses(ids: np.ndarray, group_of: np.ndarray, flags: np.ndarray, groups: int) -> ItemLosses:
    """Per-item attempts and losses by group, compressed to distinct profiles."""
    keep = group_of >= 0
    items = int(ids.max()) + 1 if ids.size else 0
    cell = ids[keep] * groups + group_of[keep]
    attempts = np.bincount(cell, minlength=items * groups).reshape(items, groups)
    lost = np.bincount(cell, weights=flags[keep], minlength=items * groups).reshape(items, groups).astype(np.int64)
    profiles, weight = np.unique(np.hstack([attempts, lost]), axis=0, return_counts=True)
    return ItemLosses(profiles[:, :groups], profiles[:, groups:], weight)


def unread_warnings(losses: dict[str, Any] | None, *, supports_option_scoring: bool, scored: bool,
                    max_tokens: int | None, supports_reader_judge: bool = False,
                    reader_judged: bool = False) -> list[str]:
    """What helps, when more answers were lost than the validity guard allows
    (genderprobe.analysis.validity.LOSS_WARN): every kind of loss counted together."""
    from genderprobe.analysis.validity import LOSS_WARN, lost_by_group

    if not losses:
        return []
    lost_by, attempts_by = lost_by_group(losses)
    lost, n = sum(lost_by.values()), sum(attempts_by.values())
    if not n or lost / n <= LOSS_WARN:
        return []
    kinds = ", ".join(f"{sum(g.get('lost', 0) for g in (entry.get('groups') or {}).values()):,} {kind}"
                      for kind, entry in (losses.get("kinds") or {}).items())
    helps = []
    if supports_option_scoring and not scored:
        helps.append("--score-options (the options are scored by log-probability, so no answer needs reading)")
    if supports_reader_judge and not reader_judged and not scored:
        helps.append("--reader-judge SPEC (a judge model reads the answers the rules cannot)")
    helps.append(f"a larger --max-tokens if answers were cut off (this run: {max_tokens or 'the backend default'})")
    helps.append("a look at the lost answers in the report's evidence")
    return [f"{lost:,} of {n:,} answers ({lost / n:.0%}) could not be used ({kinds}), so every metric rests on "
            f"the {n - lost:,} that were read. What helps: " + "; ".join(helps) + "."]
