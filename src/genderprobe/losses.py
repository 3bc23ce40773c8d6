"""Answers lost, by gender: undetected and refused answers are a finding, not noise.

A model that refuses one gender's prompts more often, or answers them in a
way no reader can read, shows no bias in the metrics computed on the answers
it did give. Every probe therefore reports, per gender (or gender pairing),
the share of its attempts that were lost in each way, with a 95% Wilson
interval, and a test that the share does not differ between the groups
(:func:`genderprobe.rates.rate_difference_test`: chi-square, or the exact
test when counts are small).

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

from genderprobe.contract import Table
from genderprobe.rates import rate_difference_test
from genderprobe.stats import Estimate

Z95 = 1.959963984540054


def wilson(events: int, n: int) -> Estimate:
    """A share with its 95% Wilson score interval (sound at 0 and 1, unlike the normal one)."""
    if n == 0:
        return Estimate(None, None, None, 0)
    p = events / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    # At 0 and at n the bound is exactly 0 or 1; rounding would leave 5.6e-17.
    low = 0.0 if events == 0 else max(0.0, centre - half)
    high = 1.0 if events == n else min(1.0, centre + half)
    return Estimate(p, low, high, n)


@dataclass
class LossReport:
    """Lost attempts per group and kind; ``by`` names the grouping ("gender", "pairing")."""

    by: str
    groups: list[str]
    counts: dict[str, dict[str, tuple[int, int]]]  # kind -> group -> (lost, attempts)
    tests: dict[str, dict[str, Any]]
    unit: str = "attempts"  # what was lost: attempts, or prompts where a probe asks again
    # A kind counted inside another (RelationshipLevy: refusal -> undetected), so a
    # total of the losses (genderprobe.validity) does not count it twice.
    within: dict[str, str] = field(default_factory=dict)

    def rate(self, kind: str, group: str) -> Estimate:
        lost, n = self.counts[kind][group]
        return wilson(lost, n)

    def metrics(self) -> dict[str, Estimate]:
        return {f"{kind}_rate_{group}": self.rate(kind, group) for kind in self.counts for group in self.groups}

    def table(self) -> Table:
        kinds = list(self.counts)
        rows = [[g, self.counts[kinds[0]][g][1], *(self.rate(k, g) for k in kinds)] for g in self.groups]
        rows.append(["difference test (p)", None, *(self.tests[k]["p_value"] for k in kinds)])
        methods = "; ".join(f"{k}: {self.tests[k]['method'] or 'no difference to test'}" for k in kinds)
        return Table(
            title=f"Lost answers by {self.by}: undetected and refused shares of {self.unit} (95% Wilson intervals)",
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
                            within: Mapping[str, str] | None = None) -> LossReport:
    """The same report from counts already made: kind -> group -> (lost, attempts).

    For runs too large to keep one flag per attempt (RelationshipLevy's full space).
    """
    names = list(order) if order is not None else sorted({g for per in counts.values() for g in per})
    table = {kind: {g: (int(per[g][0]), int(per[g][1])) if g in per else (0, 0) for g in names}
             for kind, per in counts.items()}
    tests = {kind: rate_difference_test(np.array([per[g][0] for g in names]), np.array([per[g][1] for g in names]),
                                        names) for kind, per in table.items()}
    return LossReport(by, names, table, tests, unit, dict(within or {}))


def loss_report(groups: Sequence[str], lost: Mapping[str, Sequence[bool]], *, by: str = "gender",
                order: Sequence[str] | None = None, unit: str = "attempts") -> LossReport:
    """Attempts' group labels and, per kind ("undetected", "refusal"), whether each attempt was lost that way."""
    labels = np.asarray(list(groups), dtype=object)
    names = list(order) if order is not None else sorted({str(g) for g in labels})
    counts: dict[str, dict[str, tuple[int, int]]] = {}
    for kind, flags in lost.items():
        flags_arr = np.asarray(list(flags), dtype=bool)
        if flags_arr.shape != labels.shape:
            raise ValueError(f"{kind}: {flags_arr.size} flags for {labels.size} attempts")
        counts[kind] = {g: (int(flags_arr[labels == g].sum()), int((labels == g).sum())) for g in names}
    return loss_report_from_counts(counts, by=by, order=names, unit=unit)


def unread_warnings(losses: dict[str, Any] | None, *, supports_option_scoring: bool, scored: bool,
                    max_tokens: int | None, supports_reader_judge: bool = False,
                    reader_judged: bool = False) -> list[str]:
    """What helps, when more answers were lost than the validity guard allows
    (genderprobe.validity.LOSS_WARN): every kind of loss counted together."""
    from genderprobe.validity import LOSS_WARN, lost_by_group

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
