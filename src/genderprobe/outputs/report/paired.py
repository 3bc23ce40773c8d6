"""Is model A less biased than model B? Every headline metric, tested between every two runs of a probe.

Two runs asked the same items when their probe parameters (less the view
parameters) and seed are equal. Where both runs' records rebuild the metric
item by item (the study's ``paired`` module, found by
:func:`genderprobe.registry.item_score_functions`), the difference is tested
by a paired bootstrap over items: one resample of the items scores both runs,
so what the items share cancels out. Runs on different items are resampled
each on their own (unpaired). Without per-item scores, the difference is read
from the two runs' intervals as independent normal ones (unpaired too). Each
test says which it is and why.

The family is one pair of runs of one probe: its headline metrics, tested on one
resample of the items, adjusted together by a max-T step-down on those joint
draws (:func:`genderprobe.analysis.stats.maxt_stepdown`), so two metrics that are nearly
one test (diff_success_rate and its absolute value) cost little power. Each test's own p
is read off the interval printed beside it (below 0.05 exactly when it leaves 0 out), the
family p is never below it, and a bounded metric's difference keeps its interval within
what it can be (:mod:`genderprobe.analysis.metric_bounds`). McNemar's
test on answers, once shown beside the bootstrap, is gone: it counted an item's
answers (both orders, every repetition) as independent pairs, and read 11.5% /
15.8% false positives for models that answer both orders alike 90% / 100% of
the time.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from genderprobe.analysis.comparison_stats import (
    Difference,
    ItemScores,
    joint_rows,
    normal_difference,
    paired_difference,
    resampled_row_sums,
    unpaired_difference,
)
from genderprobe.analysis.equivalence import tost
from genderprobe.analysis.metric_bounds import difference_bounds
from genderprobe.analysis.stats import Estimate, maxt_stepdown, student_z, studentized

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
    p_adjusted: float | None = None  # max-T step-down over the pair's tests
    family: int = 0  # the tests of this pair of runs adjusted together
    equivalence: dict[str, Any] | None = None  # TOST of |A - B| < D, with --equivalence-margin
    _difference: Difference | None = field(default=None, repr=False)

    @property
    def sign(self) -> str:
        return "/" if self.ratio else "−"

    def shown(self, which: str) -> str:
        """A p-value as the report prints it: "p_value" or "p_adjusted"."""
        return p_text(getattr(self, which))

    @property
    def equivalent(self) -> str:
        """``|A − B| < 0.05 shown (TOST p = 0.012)``, or "" without a margin."""
        e = self.equivalence
        if not e:
            return ""
        low, high = e["bounds"]
        return (f"{'A / B' if self.ratio else '|A − B|'} within [{low:g}, {high:g}] "
                f"{'shown' if e['equivalent'] else 'not shown'} (TOST {p_phrase(e['p_value'])})")


FAMILY_TEXT = ("adjusted over the tests of each pair of runs by a max-T step-down (Westfall-Young) on their "
               "joint bootstrap draws, never below the test's own p")


def compare_pairs(runs: list[Run], headline: list[str], better: dict[str, str],
                  equivalence_margin: float | None = None) -> list[PairTest]:
    """Every headline metric of every two runs, A before B as listed; each pair of runs one family."""
    tests = []
    for a, b in itertools.combinations(runs, 2):
        pair = _pair_tests(a, b, headline, better)
        _adjust(pair)
        if equivalence_margin is not None:
            for t in pair:
                t.equivalence = _equivalence(t, equivalence_margin)
        tests += pair
    return tests


def _equivalence(t: PairTest, margin: float) -> dict[str, Any] | None:
    """TOST of the difference (of the ratio, for a metric best at 1) against +-D."""
    d = t._difference
    if d is None or d.estimate.value is None:
        return None
    draws = None if d.draws is None else (np.exp(d.draws) if t.ratio else d.draws)
    return tost(Estimate(d.estimate.value, d.estimate.ci_low, d.estimate.ci_high, d.estimate.n, draws=draws),
                margin, "one" if t.ratio else "zero")


def _pair_tests(a: Run, b: Run, headline: list[str], better: dict[str, str]) -> list[PairTest]:
    """The pair's tests, every metric rebuilt from records read on one resample of the items."""
    scores = {m: (_metric_scores(a, m), _metric_scores(b, m)) for m in headline}
    rebuilt = {m: s for m, s in scores.items() if all(isinstance(x, ItemScores) for x in s)}
    same_items = a.items == b.items
    sums = _paired_sums(rebuilt) if same_items else _unpaired_sums(rebuilt)
    return [_test(a, b, m, better.get(m) == "one", scores[m], sums.get(m), same_items) for m in headline]


def _parts(scores: list[ItemScores]) -> tuple[list[ItemScores], list[int]]:
    """The distinct parts (metrics built from the same arrays share one) and where each score's sit."""
    keys: dict[tuple[int, int], int] = {}
    parts: list[ItemScores] = []
    for s in scores:
        if keys.setdefault((id(s.num), id(s.den)), len(parts)) == len(parts):
            parts.append(s)
    return parts, [keys[(id(s.num), id(s.den))] for s in scores]


def _resampled_parts(scores: list[ItemScores]) -> list[np.ndarray]:
    """Each score's resampled sums (num, then den), from one resample of the items for all of them."""
    parts, where = _parts(scores)
    sums = resampled_row_sums(joint_rows(parts), n_resamples=RESAMPLES, rng=np.random.default_rng(SEED))
    edges = np.cumsum([0] + [p.rows().shape[1] for p in parts])
    return [sums[:, edges[i]: edges[i + 1]] for i in where]


def _paired_sums(rebuilt: dict[str, tuple[ItemScores, ItemScores]]) -> dict[str, Any]:
    flat = _resampled_parts([s for pair in rebuilt.values() for s in pair])
    return {m: np.hstack(flat[2 * i: 2 * i + 2]) for i, m in enumerate(rebuilt)}


def _unpaired_sums(rebuilt: dict[str, tuple[ItemScores, ItemScores]]) -> dict[str, Any]:
    side_a = _resampled_parts([sa for sa, _ in rebuilt.values()])
    side_b = _resampled_parts([sb for _, sb in rebuilt.values()])
    return {m: (side_a[i], side_b[i]) for i, m in enumerate(rebuilt)}


def _adjust(tests: list[PairTest]) -> None:
    """The pair's family: each tested metric's p_adjusted, by a max-T step-down on the joint draws
    (standard normal draws, independent, for a difference read from two intervals), never below the
    test's own p. The max-T statistic (studentized) is not the one the interval and its p are read
    from (percentile, or the two-step interval of a sum of absolute values), and alone it can fall
    below that p; held to it, the family still rejects no more than the max-T step-down does, so
    it still controls the family-wise error."""
    found = [t for t in tests if t.p_value is not None and t._difference is not None]
    if not found:
        return
    rng = np.random.default_rng(SEED)
    stats, columns = [], []
    for t in found:
        d = t._difference
        if d.draws is not None:
            z, null = studentized(d.point, d.draws, 0.0)
            stats.append(student_z(z, d.estimate.n))
            columns.append(null)
        else:
            stats.append(abs(d.point) / d.se)
            columns.append(np.abs(rng.standard_normal(RESAMPLES)))
    for t, p in zip(found, maxt_stepdown(np.array(stats), np.column_stack(columns)).tolist(), strict=True):
        t.p_adjusted, t.family = max(p, t.p_value), len(found)


def _paired_note(n: int, doc: dict[str, Any]) -> str:
    """How many items the pairing rests on: those both runs asked, or fewer where some had no answer read."""
    from genderprobe.outputs.report.document import sample_size

    asked = sample_size(doc)
    if isinstance(asked, int) and n < asked:
        return f"paired over the {n:,} items with an answer read in either run (both runs asked {asked:,})"
    return f"paired over the {n:,} items both runs asked"


def _test(a: Run, b: Run, metric: str, ratio: bool, scores: tuple[Any, Any], sums: Any, same_items: bool) -> PairTest:
    ea, eb = a.estimate(metric), b.estimate(metric)
    if ea.value is None or eb.value is None:
        which = "either run" if ea.value is None and eb.value is None else "A" if ea.value is None else "B"
        return PairTest(a.label, b.label, metric, ratio, Estimate(None).to_json(), None, "none", same_items,
                        f"no test: {metric} is undefined in {which}")
    sa, sb = scores
    bounds = None if ratio else difference_bounds(a.doc["probe"], metric)
    if isinstance(sa, ItemScores) and isinstance(sb, ItemScores):
        if same_items:
            d = paired_difference(sa, sb, ratio=ratio, sums=sums, bounds=bounds)
            return PairTest(a.label, b.label, metric, ratio, d.estimate.to_json(), d.p_value, "paired bootstrap",
                            True, _paired_note(d.estimate.n, a.doc), _difference=d)
        d = unpaired_difference(sa, sb, ratio=ratio, sums=sums, bounds=bounds)
        return PairTest(a.label, b.label, metric, ratio, d.estimate.to_json(), d.p_value, "unpaired bootstrap", False,
                        f"unpaired: the runs asked different items ({_items_differ(a, b)})", _difference=d)
    d = normal_difference(ea, eb, ratio=ratio, bounds=bounds)
    why = _why_no_scores(sa, sb)
    if not same_items:
        why = f"the runs asked different items ({_items_differ(a, b)}) and {why}"
    if d.p_value is None and d.estimate.value is not None:
        no_width = d.estimate.ci_low is not None
        why += f"; no p-value: {'neither interval has any width' if no_width else 'a run has no interval for it'}"
    return PairTest(a.label, b.label, metric, ratio, d.estimate.to_json(), d.p_value, "normal approximation", False,
                    f"unpaired, from the two intervals: {why}", _difference=d)


def _metric_scores(run: Run, metric: str) -> ItemScores | str:
    scores = run.scores()
    if isinstance(scores, str):
        return scores
    if metric not in scores:
        return f"{metric} is not rebuilt from records"
    s = scores[metric]
    value, kept = s.value(), (run.doc["metrics"].get(metric) or {}).get("value")
    if not isinstance(kept, (int, float)):
        return f"{metric} is undefined"
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
    from genderprobe.outputs.records import read_records as records_of

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
