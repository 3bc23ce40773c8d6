"""The report of a suite, in one page: an overview, each probe's section, a leaderboard.

It is built from the suite's folder (suite.json and the results files it lists),
so it can be written again at any time. Within a probe, models are grouped and
ranked as ``genderprobe compare`` ranks them (genderprobe.outputs.report.compare), with
its forest plots; the leaderboard orders the models by their marks across all
probes, then by their mean rank within the probes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genderprobe.errors import UserError
from genderprobe.outputs.records import records_beside
from genderprobe.outputs.report import genderbench_card
from genderprobe.outputs.report.compare import (
    MARK_ORDER,
    Entry,
    ProbeSection,
    compare,
    ranking_note,
)
from genderprobe.outputs.report.document import FigureView
from genderprobe.outputs.report.render import (
    _now,
    answers_of,
    environment,
    headline_figure,
    write_html,
)
from genderprobe.outputs.report.secrets import redact
from genderprobe.outputs.results import load_results, write_json
from genderprobe.version import __version__

# A suite's folder: its manifest, and this report beside it.
SUITE_JSON = "suite.json"
REPORT_HTML = "report.html"
CARD_JSON = "genderbench_card.json"  # GenderBench's report card, where the suite ran a probe it charts


@dataclass
class Cell:
    """One run's value of one headline metric (no estimate when the run is not done)."""

    run: dict[str, Any]  # the run's entry in suite.json
    estimate: dict[str, Any] | None = None
    mark: dict[str, Any] | None = None  # the verdict's mark state; None where the metric has no mark
    too_few: bool = False  # the value rests on too few answers: shown without its interval


@dataclass
class Row:
    """One headline metric of one probe, across the models."""

    probe: str
    metric: str | None  # None: no run of the probe is done
    better: str | None
    cells: list[Cell]


@dataclass
class ProbeView:
    name: str
    summary: str
    section: ProbeSection | None
    figures: dict[int, list[FigureView]]
    unfinished: list[dict[str, Any]]  # suite.json entries of its runs not done


@dataclass
class Standing:
    model: str
    marks: list[dict[str, Any]] = field(default_factory=list)  # the verdict's states of its marks that stand
    ranks: dict[str, tuple[int, int]] = field(default_factory=dict)  # probe -> (rank, out of)
    invalid: list[str] = field(default_factory=list)  # probes whose run failed a validity check: not counted

    @property
    def mean_mark(self) -> float | None:
        """Over the marks that stand; an undecided one counts as GenderBench's letter (the best it touches)."""
        return sum(MARK_ORDER[m["mark"]] for m in self.marks) / len(self.marks) if self.marks else None

    @property
    def tally(self) -> list[tuple[dict[str, Any], int]]:
        """Each distinct mark shown (A, or A…C where undecided) with how many of the model's marks it is, best first."""
        shown: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for m in self.marks:  # marks that stand: decided ones reach one letter, undecided ones several
            shown.setdefault(tuple(m["reaches"]), []).append(m)
        return sorted(((ms[0], len(ms)) for ms in shown.values()),
                      key=lambda t: [MARK_ORDER[letter] for letter in t[0]["reaches"]])

    @property
    def mean_rank(self) -> float | None:
        return sum(r for r, _ in self.ranks.values()) / len(self.ranks) if self.ranks else None


def render(manifest: dict[str, Any], documents: dict[str, dict[str, Any]], folder: Path | None = None) -> str:
    """The page for suite.json's contents and the results of its finished runs, by their path in it.

    ``folder``: the suite's folder, where each run's records are found (for paired comparisons and
    the answer browser)."""
    return environment().get_template("suite.html.j2").render(**_page(manifest, documents, folder))


def _page(manifest: dict[str, Any], documents: dict[str, dict[str, Any]], folder: Path | None) -> dict[str, Any]:
    runs = manifest["runs"]

    def records(path: str) -> Path | None:
        return records_beside(folder / path, documents[path]) if folder is not None else None

    finished = [(documents[r["results"]], r["results"], records(r["results"]))
                for r in runs if r["results"] in documents]
    sections = {s.probe: s for s in compare(finished)} if documents else {}
    entries = {e.source: e for s in sections.values() for g in s.groups for e in g.entries}
    by_pair = {(r["model"], r["probe"]): r for r in runs}
    rows, probes = [], []
    for name in manifest["probes"]:
        section = sections.get(name)
        own = [by_pair[(model, name)] for model in manifest["models"] if (model, name) in by_pair]  # left out: none
        rows += _rows(name, section, own, entries)
        figures = {gi: [headline_figure(section, gi, m) for m in g.headline]
                   for gi, g in enumerate(section.groups)} if section else {}
        summary = next((e.doc.get("summary") or "" for r in own if (e := entries.get(r["results"]))), "")
        probes.append(ProbeView(name, summary, section, figures, [redact(r) for r in own if r["status"] != "done"]))
    done = sum(r["status"] == "done" for r in runs)
    card = genderbench_card.build(redact(manifest), entries) if genderbench_card.shown(manifest["probes"]) else None
    return dict(
        manifest=redact(manifest), models=redact(manifest["models"]), rows=rows, probes=probes,
        standings=standings(manifest, sections, entries), done=done, version=__version__, generated=_now(),
        parameters=json.dumps(redact(manifest.get("parameters") or {}), indent=2, ensure_ascii=False),
        ranking_note=ranking_note, browser=answers_of(finished), card=card,
    )


def _rows(probe: str, section: ProbeSection | None, own: list[dict[str, Any]],
          entries: dict[str, Entry]) -> list[Row]:
    """The probe's headline metrics (those of every group, in order), a cell per model."""
    if section is None:
        return [Row(probe, None, None, [Cell(redact(r)) for r in own])]
    metrics: dict[str, str | None] = {}
    for g in section.groups:
        for m in g.headline:
            metrics.setdefault(m, g.better.get(m))
    rows = []
    for metric, better in metrics.items():
        cells = []
        for r in own:
            e = entries.get(r["results"])
            shown = redact(r)  # model specs and errors reach the page: a key pasted into one must not
            cells.append(Cell(shown, e.metric(metric), e.mark_state(metric), e.too_few(metric)) if e else Cell(shown))
        rows.append(Row(probe, metric, better, cells))
    return rows


def standings(manifest: dict[str, Any], sections: dict[str, ProbeSection],
              entries: dict[str, Entry]) -> list[Standing]:
    """Models best first: by their mean mark over every mark of every probe (A = 0 ... D = 3),
    then by their mean rank within the probes; a model with no marks or ranks comes last.
    Runs that failed a validity check count in neither (their marks do not stand)."""
    table = {model: Standing(redact(model)) for model in manifest["models"]}
    model_of = {r["results"]: r["model"] for r in manifest["runs"]}
    for source, e in entries.items():
        if e.invalid:  # marks a run cannot vouch for do not count
            table[model_of[source]].invalid.append(e.doc["probe"])
            continue
        table[model_of[source]].marks += [s for s in e.verdict["marks"].values() if s["mark"] in MARK_ORDER]
    for probe, section in sections.items():
        for g in section.groups:
            ranked = [e for e in g.entries if not e.invalid]
            for rank, e in enumerate(ranked, 1):
                table[model_of[e.source]].ranks[probe] = (rank, len(ranked))

    def order(s: Standing) -> tuple[float, float]:
        return (math.inf if s.mean_mark is None else s.mean_mark, math.inf if s.mean_rank is None else s.mean_rank)

    return sorted(table.values(), key=order)


def write(out: Path) -> Path:
    """Write ``out/report.html`` from ``out/suite.json`` and the results it lists, and ``out/genderbench_card.json``
    where the suite ran a probe GenderBench charts; returns the report's path."""
    try:
        manifest = json.loads((out / SUITE_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UserError(f"{out} holds no readable {SUITE_JSON}; run 'genderprobe suite --out {out}' first.") from None
    documents = {r["results"]: load_results(out / r["results"]) for r in manifest["runs"] if r["status"] == "done"}
    page = _page(manifest, documents, out)
    if page["card"] is not None:
        try:
            write_json(out / CARD_JSON, page["card"].to_json())
        except OSError as exc:
            raise UserError(f"Cannot write {out / CARD_JSON} ({exc.strerror or exc.__class__.__name__}).") from None
    path = out / REPORT_HTML
    write_html(path, environment().get_template("suite.html.j2").render(**page))
    return path
