"""Is model A less biased than model B? Every headline metric, tested between every two runs of a probe.

Two runs asked the same items when their probe parameters (less the view
parameters) and seed are equal. Where both runs' records rebuild the metric
item by item (the study's ``paired`` module, found by
:func:`genderprobe.registry.item_score_functions`), the difference is tested
by a paired bootstrap over items: one resample of the items scores both runs,
so what the items share cancels out. Runs on different items are resampled
each on their own (unpaired). Without per-item scores, the difference is read
from the two runs' intervals as independent normal ones (unpaired too). Each
test says which it is and why. The p-values of one probe are Holm-adjusted
together, across its pairs and metrics.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from genderprobe.comparison_stats import (
    ItemScores,
    normal_difference,
    paired_choices_test,
    paired_difference,
    paired_rows,
    resampled_row_sums,
    unpaired_difference,
)
from genderprobe.stats import Estimate, holm

RESAMPLES = 5_000
SEED = 0
# Results agree with their records to rounding error.
_SAME_VALUE = 1e-9


@dataclass
class Run:
    """A run as a pair test sees it. records: a list of record dicts, a records file, or None."""

    label: str
    doc: dict[str, Any]
    items: dict[str, Any]  # what decides the items asked: probe parameters (less views) and seed
    records: Any = None
    _scores: dict[str, ItemScores] | str | None = field(default=None, repr=False)

    def estimate(self, metric: str) -> Estimate:
        m = self.doc["metrics"].get(metric)
        if not isinstance(m, dict):
            return Estimate(None)
        return Estimate(*(m.get(k) if isinstance(m.get(k), (int, float)) else None for k in ("value", "ci_low", "ci_high")))

    def scores(self) -> dict[str, ItemScores] | str:
        """The headline metrics rebuilt from the records, or why they cannot be."""
        if self._scores is None:
            self._scores = _item_scores(self)
        return self._scores


@dataclass
class PairTest:
    a: str
    b: str
    metric: str
    ratio: bool  # A / B (a metric best at 1) rather than A - B
    difference: dict[str, Any]  # the difference as an estimate's JSON
    p_value: float | None
    test: str  # "paired bootstrap", "unpaired bootstrap", "normal approximation" or "none"
    paired: bool
    note: str  # over how many items, or why unpaired
    exact_p: float | None = None  # McNemar's exact test, where one fits
    exact_note: str = ""
    p_holm: float | None = None

    @property
    def sign(self) -> str:
        return "/" if self.ratio else "−"

    def shown(self, which: str) -> str:
        """A p-value as the report prints it: "p_value" or "p_holm"."""
        return p_text(getattr(self, which))

    @property
    def exact(self) -> str:
        """``McNemar p = 0.003``, or "" where no exact test fits."""
        return "" if self.exact_p is None else f"McNemar {p_phrase(self.exact_p)}"


def compare_pairs(runs: list[Run], headline: list[str], better: dict[str, str]) -> list[PairTest]:
    """Every headline metric of every two runs, A before B as listed, with Holm's correction over all."""
    sums: dict[tuple, Any] = {}  # a pair's resampled sums, shared by the metrics built from the same parts
    tests = [_test(a, b, m, better.get(m) == "one", sums)
             for a, b in itertools.combinations(runs, 2) for m in headline]
    for t, adjusted in zip(tests, holm([t.p_value for t in tests]), strict=True):
        t.p_holm = adjusted
    return tests


def _test(a: Run, b: Run, metric: str, ratio: bool, cache: dict[tuple, Any]) -> PairTest:
    same_items = a.items == b.items
    ea, eb = a.estimate(metric), b.estimate(metric)
    if ea.value is None or eb.value is None:
        which = "either run" if ea.value is None and eb.value is None else "A" if ea.value is None else "B"
        return PairTest(a.label, b.label, metric, ratio, Estimate(None).to_json(), None, "none", same_items,
                        f"no test: {metric} is undefined in {which}")
    sa, sb = _metric_scores(a, metric), _metric_scores(b, metric)
    if isinstance(sa, ItemScores) and isinstance(sb, ItemScores):
        if same_items:
            key = (id(sa.num), id(sa.den), id(sb.num), id(sb.den))
            if key not in cache:
                cache[key] = resampled_row_sums(paired_rows(sa, sb), n_resamples=RESAMPLES,
                                                rng=np.random.default_rng(SEED))
            d = paired_difference(sa, sb, ratio=ratio, sums=cache[key])
            t = PairTest(a.label, b.label, metric, ratio, d.estimate.to_json(), d.p_value, "paired bootstrap", True,
                         f"paired over the {d.estimate.n:,} items both runs asked")
            if sa.choices is not None and sb.choices is not None:
                found = paired_choices_test(sa.choices, sb.choices)
                if found is not None:
                    t.exact_p = found[0]
                    t.exact_note = f"{found[1] + found[2]:,} discordant answers: {found[1]:,} vs {found[2]:,}"
            return t
        d = unpaired_difference(sa, sb, ratio=ratio, n_resamples=RESAMPLES, seed=SEED)
        return PairTest(a.label, b.label, metric, ratio, d.estimate.to_json(), d.p_value, "unpaired bootstrap", False,
                        f"unpaired: the runs asked different items ({_items_differ(a, b)})")
    d = normal_difference(ea, eb, ratio=ratio)
    why = _why_no_scores(sa, sb)
    if not same_items:
        why = f"the runs asked different items ({_items_differ(a, b)}) and {why}"
    if d.p_value is None and d.estimate.value is not None:
        no_width = d.estimate.ci_low is not None
        why += f"; no p-value: {'neither interval has any width' if no_width else 'a run has no interval for it'}"
    return PairTest(a.label, b.label, metric, ratio, d.estimate.to_json(), d.p_value, "normal approximation", False,
                    f"unpaired, from the two intervals: {why}")


def _metric_scores(run: Run, metric: str) -> ItemScores | str:
    scores = run.scores()
    if isinstance(scores, str):
        return scores
    if metric not in scores:
        return f"{metric} is not rebuilt from records"
    s = scores[metric]
    value, kept = s.value(), run.doc["metrics"][metric].get("value")
    if value is None or not math.isclose(value, kept, rel_tol=_SAME_VALUE, abs_tol=_SAME_VALUE):
        return f"the records do not give the results' {metric} ({value} against {kept})"
    return s


def _why_no_scores(sa: ItemScores | str, sb: ItemScores | str) -> str:
    if isinstance(sa, str) and isinstance(sb, str):
        return sa if sa == sb else f"A: {sa}; B: {sb}"
    return f"A: {sa}" if isinstance(sa, str) else f"B: {sb}"


def _items_differ(a: Run, b: Run) -> str:
    names = [k for k in dict.fromkeys([*a.items, *b.items]) if a.items.get(k) != b.items.get(k)]
    shown = "; ".join(f"{k} {_plain(a.items.get(k))} vs {_plain(b.items.get(k))}" for k in names[:2])
    return shown + ("; ..." if len(names) > 2 else "")


def _plain(v: Any) -> str:
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 24 else text[:21] + "..."


def _item_scores(run: Run) -> dict[str, ItemScores] | str:
    from genderprobe.registry import item_score_functions

    function = item_score_functions().get(run.doc["probe"])
    if function is None:
        return "this probe has no per-item scores"
    records = run.records
    if isinstance(records, (str, Path)):
        records = read_records(Path(records))
    if records is None:
        return "no per-item records (run with --out and keep the records)"
    parameters = run.doc.get("parameters", {}).get("probe") or {}
    return function(records, parameters)


def read_records(path: Path) -> list[dict[str, Any]] | None:
    """A run's records (records.jsonl or records.parquet); None when the file is not there."""
    from genderprobe.records import read_records as records_of

    return list(records_of(path)) if path.exists() else None


def p_text(p: float | None) -> str:
    """``0.002``, ``< 0.001``, or ``–`` where there was no test."""
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def p_phrase(p: float | None, name: str = "p") -> str:
    """``p = 0.002``, ``p < 0.001``, ``p –``."""
    text = p_text(p)
    return f"{name} {text}" if text[0] in "<–" else f"{name} = {text}"
