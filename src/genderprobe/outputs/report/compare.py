"""Comparing runs: group them by probe and parameters, find mismatches, rank within a group.

Pure functions over results documents, shared by the terminal leaderboard and
the HTML comparison.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from genderprobe.analysis import verdict as verdicts
from genderprobe.outputs.report.document import check, flatten, sample_size
from genderprobe.outputs.report.paired import PairTest, Run, compare_pairs
from genderprobe.outputs.report.secrets import redact

MARK_ORDER = {"A": 0, "B": 1, "C": 2, "D": 3}
MAX_UNMARKED_HEADLINES = 3
# What in a run's decoding makes two runs different measurements (a dtype is the model's own).
DECODING_KEYS = ("method", "temperature", "top_p", "constrained")


@dataclass
class Entry:
    doc: dict[str, Any]
    source: str
    label: str = ""
    records: Any = None  # the run's records (a list, or the path of its records file), for paired tests

    def metric(self, name: str) -> dict[str, Any]:
        est = self.doc["metrics"].get(name)
        return est if isinstance(est, dict) else {"value": None, "ci_low": None, "ci_high": None, "n": None}

    def mark(self, name: str) -> str | None:
        """GenderBench's letter, for ranking; what a surface shows of it is :meth:`mark_state`."""
        m = self.doc["marks"].get(name)
        return m.get("mark") if isinstance(m, dict) else None

    @cached_property
    def verdict(self) -> dict[str, Any]:
        """What the run may claim (genderprobe.analysis.verdict): every surface renders marks from it."""
        return verdicts.of(self.doc)

    def mark_state(self, name: str) -> dict[str, Any] | None:
        """The metric's mark as the verdict has it (decided, undecided or struck); None where it has no mark."""
        return self.verdict["marks"].get(name)

    def too_few(self, name: str) -> bool:
        """The metric rests on too few answers for an interval (the verdict's headlines and marks say which)."""
        state = self.mark_state(name) or {}
        return state.get("reason") == "too few answers" or any(
            h["metric"] == name and h["too_few"] for h in self.verdict["headlines"])

    @property
    def items(self) -> int | None:
        return sample_size(self.doc)

    @property
    def invalid(self) -> str:
        """'invalid: position, sample' when the run failed a validity check (it is then not ranked), else ''."""
        failed = self.verdict["failed"]
        return f"invalid: {', '.join(failed)}" if failed else ""

    @property
    def undetected(self) -> int | None:
        return self.doc["counts"].get("undetected")

    @property
    def errors(self) -> int | None:
        return self.doc["run"].get("errors")

    @property
    def lost_by_group(self) -> str:
        """ "undetected female 30% / male 5% (p < 0.001)" for each kind of loss the run had, else ""."""
        losses = self.doc.get("losses")
        if not isinstance(losses, dict):
            return ""
        parts = []
        for kind, entry in (losses.get("kinds") or {}).items():
            groups = entry.get("groups") or {}
            if not any(g.get("lost") for g in groups.values()):
                continue
            shares = " / ".join(f"{name} {g['value']:.0%}" for name, g in groups.items()
                                if isinstance(g.get("value"), (int, float)))
            p = (entry.get("test") or {}).get("p_value")
            test = "" if p is None else (" (p < 0.001)" if p < 0.001 else f" (p = {p:.3f})")
            parts.append(f"{kind} {shares}{test}")
        return "; ".join(parts)


@dataclass
class Group:
    """Runs of one probe with identical parameters: these may be ranked together."""

    probe: str
    parameters: dict[str, Any]
    entries: list[Entry]
    headline: list[str] = field(default_factory=list)
    better: dict[str, str] = field(default_factory=dict)  # headline metric -> "zero", "one", "lower", "higher"
    distinct: dict[str, Any] = field(default_factory=dict)  # the parameters that set it apart
    warnings: list[str] = field(default_factory=list)


@dataclass
class ProbeSection:
    probe: str
    groups: list[Group]
    mismatches: list[tuple[str, list[Any]]]  # parameter -> its value in each group
    # Each headline metric between every two runs, Holm-adjusted together (genderprobe.outputs.report.paired).
    pairs: list[PairTest] = field(default_factory=list)


def declared_headline(doc: dict[str, Any]) -> dict[str, Any]:
    """The probe's own declaration of its headline metrics (results written since it existed)."""
    declared = doc.get("headline")
    return declared if isinstance(declared, dict) else {}


def comparable_parameters(doc: dict[str, Any]) -> dict[str, Any]:
    """Everything that must match for two runs' headline numbers to be comparable.

    Parameters the probe declares as views (an ablation, extra temperatures)
    add numbers beside the headline but leave it unchanged, so they do not count.
    """
    views = {f"probe.{name}" for name in declared_headline(doc).get("view_parameters") or []}
    params = {k: v for k, v in flatten(redact(doc.get("parameters") or {})) if k not in views}
    # Greedy and sampled answers (or a server's unknown default) are not the same measurement.
    decoding = doc.get("decoding") if isinstance(doc.get("decoding"), dict) else {}
    params.update((f"decoding.{k}", decoding.get(k)) for k in DECODING_KEYS if decoding)
    params["judge"] = doc.get("judge")
    if doc.get("checker") is not None:  # absent from results of probes that have no checker
        params["checker"] = doc.get("checker")
    return params


def _key(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, ensure_ascii=False, default=str)


def item_parameters(doc: dict[str, Any]) -> dict[str, Any]:
    """What decides which items a run asked: the probe's parameters (less views) and the seed."""
    return {k: v for k, v in comparable_parameters(doc).items() if k == "seed" or k.startswith("probe.")}


def compare(docs: Sequence[tuple[Any, ...]], equivalence_margin: float | None = None) -> list[ProbeSection]:
    """Group (document, source) pairs by probe, then by parameters; rank each group;
    test each headline metric between every two runs of a probe.

    A third element, the run's records (a list of record dicts, or the path of
    its records file), lets those tests pair the runs' items. ``equivalence_margin``:
    also test whether each difference is within +-D (genderprobe.analysis.equivalence).
    """
    by_probe: dict[str, dict[str, Group]] = {}
    for doc, source, *records in docs:
        doc = check(doc, source)
        params = comparable_parameters(doc)
        groups = by_probe.setdefault(doc["probe"], {})
        group = groups.setdefault(_key(params), Group(doc["probe"], params, []))
        group.entries.append(Entry(doc, source, records=records[0] if records else None))
    sections = []
    for probe, groups in by_probe.items():
        listed = list(groups.values())
        mismatches = _mismatches(listed)
        for group in listed:
            group.distinct = {name: group.parameters.get(name) for name, _ in mismatches}
            _label(group.entries)
            group.headline, group.better = headline_metrics(group.entries)
            group.entries = rank(group.entries, group.headline, group.better)
            group.warnings = _version_warnings(group.entries)
        sections.append(ProbeSection(probe, listed, mismatches, _pair_tests(listed, equivalence_margin)))
    return sections


def _pair_tests(groups: list[Group], equivalence_margin: float | None = None) -> list[PairTest]:
    """The headline metrics of every two runs of a probe, in leaderboard order, tested."""
    entries = [e for g in groups for e in g.entries]
    if len(entries) < 2:
        return []
    headline, better = headline_metrics(entries)
    labels = section_labels(groups)
    runs = [Run(labels[i], e.doc, item_parameters(e.doc), e.records) for i, e in enumerate(entries)]
    return compare_pairs(runs, headline, better, equivalence_margin)


def section_labels(groups: list[Group]) -> list[str]:
    """The label of each run of a probe (groups in order), told apart across groups by group number."""
    pairs = [(i, e.label) for i, g in enumerate(groups, 1) for e in g.entries]
    labels = [label for _, label in pairs]
    out = [f"{label} (group {i})" if labels.count(label) > 1 else label for i, label in pairs]
    seen: dict[str, int] = {}
    for k, label in enumerate(out):
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            out[k] = f"{label} #{seen[label]}"
    return out


def _mismatches(groups: list[Group]) -> list[tuple[str, list[Any]]]:
    names: list[str] = []
    for g in groups:
        names += [n for n in g.parameters if n not in names]
    out = []
    for name in names:
        values = [g.parameters.get(name) for g in groups]
        if len({_key({"v": v}) for v in values}) > 1:
            out.append((name, values))
    return out


def _label(entries: list[Entry]) -> None:
    """Model specs as labels, told apart by file name when a model appears twice."""
    specs = [e.doc["model"] for e in entries]
    for e in entries:
        e.label = e.doc["model"]
        if specs.count(e.label) > 1:
            e.label = f"{e.label} ({e.source})"
    seen: dict[str, int] = {}
    for e in entries:
        seen[e.label] = seen.get(e.label, 0) + 1
        if seen[e.label] > 1:
            e.label = f"{e.label} #{seen[e.label]}"


def headline_metrics(entries: list[Entry]) -> tuple[list[str], dict[str, str]]:
    """The headline metrics the probe declares, with which way is better.

    Results files written before probes declared them fall back to the marked
    metrics (GenderBench's headline numbers), else the first few metrics, with
    no direction.
    """
    first = entries[0].doc
    declared = [h for h in declared_headline(first).get("metrics") or [] if isinstance(h, dict)]
    if declared:
        present = [h for h in declared if any(h.get("metric") in e.doc["metrics"] for e in entries)]
        return [h["metric"] for h in present], {h["metric"]: str(h.get("better")) for h in present}
    marked = [m for m in first["marks"] if any(m in e.doc["metrics"] for e in entries)]
    if marked:
        return marked, {}
    return list(first["metrics"])[:MAX_UNMARKED_HEADLINES], {}


BETTER_WORDS = {"zero": "closest to 0", "one": "closest to 1", "lower": "lowest", "higher": "highest"}


def ranking_note(group: Group) -> str:
    """One line saying what the ranking rests on."""
    if not group.headline or (not group.better and not any(e.mark(group.headline[0]) for e in group.entries)):
        return "in the order given (these results say nothing about which way is better)"
    first = group.headline[0]
    parts = []
    if any(e.mark(first) for e in group.entries):
        parts.append(f"the mark of {first}")
    parts += [f"{m} ({BETTER_WORDS[group.better[m]]} is best)" for m in group.headline if group.better.get(m) in BETTER_WORDS]
    if not group.better:
        parts.append(f"{first} closest to 0")
    return "ranked by " + ", then ".join(parts)


def distance(value: Any, better: str | None) -> float:
    """How far a value is from the best, for sorting: smaller is better; undefined is last."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        return math.inf
    if better == "one":
        return abs(math.log(value)) if value > 0 else math.inf
    if better == "lower":
        return value
    if better == "higher":
        return -value
    return abs(value)  # "zero", and old results files: a bias, best at 0


def rank(entries: list[Entry], headline: list[str], better: dict[str, str] | None = None) -> list[Entry]:
    """Best first: by the first headline metric's mark, then by its distance from the
    best value in the direction the probe declares, then by the next headline metrics.
    Runs that failed a validity check come after every run that did not, unranked."""
    if not headline:
        return entries
    better = better or {}
    if not better and not any(e.mark(headline[0]) for e in entries):
        return sorted(entries, key=lambda e: bool(e.invalid))  # nothing says which way is better

    def order(e: Entry) -> tuple:
        key: list[Any] = [bool(e.invalid), MARK_ORDER.get(e.mark(headline[0]) or "", 9)]
        key += [distance(e.metric(m).get("value"), better.get(m)) for m in headline]
        return tuple(key)

    return sorted(entries, key=order)


def _version_warnings(entries: list[Entry]) -> list[str]:
    warnings = []
    versions = {str(e.doc["versions"].get("genderprobe")) for e in entries}
    if len(versions) > 1:
        warnings.append(f"These runs were made by different genderprobe versions ({', '.join(sorted(versions))}).")
    data = [e.doc["versions"].get("data") or {} for e in entries]
    files = sorted({f for d in data for f in d if len({json.dumps(x.get(f)) for x in data}) > 1})
    if files:
        shown = ", ".join(files[:3]) + (" and others" if len(files) > 3 else "")
        warnings.append(f"These runs used different versions of the data files {shown}.")
    return warnings


def source_name(path: str | Path) -> str:
    """A short name for a results file: its folder and name."""
    p = Path(path)
    return f"{p.parent.name}/{p.name}" if p.parent.name else p.name


def source_names(paths: Sequence[str | Path]) -> list[str]:
    """Short names that tell the files apart: each file's folder and name, with as many folders
    above as it takes (runs of a suite are all <model>/<probe>/results.json)."""
    full = [Path(p).resolve().parts for p in paths]
    depth = [min(2, len(parts)) for parts in full]
    while True:
        names = [Path(*parts[-d:]).as_posix() for parts, d in zip(full, depth)]
        clashing = [i for i, name in enumerate(names) if depth[i] < len(full[i])
                    and any(names[j] == name and full[j] != full[i] for j in range(len(names)))]
        if not clashing:  # the same file given twice keeps one name (its labels are numbered)
            return names
        for i in clashing:
            depth[i] += 1
