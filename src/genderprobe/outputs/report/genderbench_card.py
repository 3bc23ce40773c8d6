"""GenderBench's report card in a suite's report: section marks of the suite's models beside report 1.0's.

The card (:mod:`genderprobe.analysis.genderbench_card`) is shown when the suite ran at least one probe
GenderBench charts. Its rows are the suite's models, then report 1.0's twelve models
(packaged as ``genderbench/report_1_0.json``, beside the other report 1.0 tables); its charts are GenderBench's, one forest plot per
charted metric with every row's interval over the metric's mark ranges.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from genderprobe.analysis.genderbench_card import (
    CHARTED_PROBES,
    MALE_VS_FEMALE,
    SECTIONS,
    ChartedMark,
    SectionMark,
    card_json,
    charted_mark,
    section_marks,
)
from genderprobe.data.packaged import data_file
from genderprobe.outputs.report.charts import forest
from genderprobe.outputs.report.compare import Entry
from genderprobe.outputs.report.document import FigureView, mark_bands

PUBLISHED = "genderbench/report_1_0.json"  # in the relationship_levy study's data, GenderBench's prefix
PUBLISHED_LABEL = "report 1.0"


@dataclass
class CardRow:
    model: str
    sections: list[SectionMark]
    published: bool = False

    @property
    def caveats(self) -> list[str]:
        return [f"{s.title}: {c}" for s in self.sections for c in s.caveats]


@dataclass
class Card:
    rows: list[CardRow]
    charts: list[tuple[str, list[FigureView]]]  # (section title, its charts)
    source: str

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": "GenderBench 0.5.0's: the worst three marks averaged and rounded (the sum divided by three "
                    "even where fewer are defined), never better than one step from the worst mark",
            "source_of_published_rows": self.source,
            "models": [{"model": r.model, "published": r.published, "sections": card_json(r.sections)}
                       for r in self.rows],
        }


@cache
def published() -> dict[str, Any]:
    return json.loads(data_file(PUBLISHED).read_text(encoding="utf-8"))


def _touching(interval: list[float], ranges: dict[str, list[list[float]]]) -> list[str]:
    low, high = interval
    return sorted(letter for letter, spans in ranges.items() if any(high >= a and low <= b for a, b in spans))


def _published_rows() -> list[CardRow]:
    doc = published()
    rows = []
    for model in doc["models"]:
        marks = {}
        for chart in doc["charts"]:
            if chart["section"] in {key for key, _, _ in SECTIONS}:
                reached = _touching(chart["intervals"][model], chart["ranges"])
                marks[(chart["probe"], chart["metric"])] = ChartedMark(chart["probe"], chart["metric"],
                                                                       reached[0], reached[-1])
        rows.append(CardRow(f"{model} ({PUBLISHED_LABEL})", section_marks(marks), published=True))
    return rows


def shown(probes: list[str]) -> bool:
    """Whether a suite of these probes gets the card: it ran at least one probe GenderBench charts."""
    return any(p in CHARTED_PROBES for p in probes)


def build(manifest: dict[str, Any], entries: dict[str, Entry]) -> Card:
    """The card of a suite: its models' rows from their finished runs, then report 1.0's rows and charts."""
    by_pair = {(r["model"], r["probe"]): r for r in manifest["runs"]}
    return Card(model_rows(manifest, entries) + _published_rows(), _charts(manifest, by_pair, entries),
                published()["source"])


def model_rows(manifest: dict[str, Any], entries: dict[str, Entry]) -> list[CardRow]:
    """The suite's models' rows, each charted mark as its run's verdict has it."""
    by_pair = {(r["model"], r["probe"]): r for r in manifest["runs"]}
    rows = []
    for model in manifest["models"]:
        marks = {}
        for _, _, charts in SECTIONS:
            for probe, metric in charts:
                run = by_pair.get((model, probe))
                entry = entries.get(run["results"]) if run else None
                status = "not run" if run is None else run["status"]
                marks[(probe, metric)] = charted_mark(probe, metric, entry.verdict if entry else None, status)
        rows.append(CardRow(model, section_marks(marks)))
    return rows


def _charted_interval(entry: Entry, metric: str) -> dict[str, Any]:
    """The run's value with the interval GenderBench charts and marks from (its normal fit), where it has one."""
    est = entry.metric(metric)
    mark = entry.doc["marks"].get(metric)
    iv = mark.get("mark_interval") if isinstance(mark, dict) else None
    if isinstance(iv, dict) and iv.get("low") is not None:
        return {**est, "ci_low": iv["low"], "ci_high": iv["high"]}
    return est


def _charts(manifest: dict[str, Any], by_pair: dict[tuple[str, str], dict[str, Any]],
            entries: dict[str, Entry]) -> list[tuple[str, list[FigureView]]]:
    doc = published()
    charted = {(c["section"], c["probe"], c["metric"]): c for c in doc["charts"]}
    sets = [(title, [(key, p, m) for p, m in charts]) for key, title, charts in SECTIONS]
    sets.append(("Male vs female (no mark: the sign says which gender is favoured)",
                 [("male_vs_female", p, m) for p, m in MALE_VS_FEMALE]))
    out = []
    for title, charts in sets:
        figures = []
        for i, (key, probe, metric) in enumerate(charts):
            published_chart = charted[(key, probe, metric)]
            rows = []
            for model in manifest["models"]:
                run = by_pair.get((model, probe))
                entry = entries.get(run["results"]) if run else None
                if entry is not None:
                    rows.append({"label": model, **_charted_interval(entry, metric)})
            for model in doc["models"]:
                low, high = published_chart["intervals"][model]
                rows.append({"label": f"{model} (1.0)", "value": (low + high) / 2, "ci_low": low, "ci_high": high})
            ranges = published_chart["ranges"] if key != "male_vs_female" else None
            bands = mark_bands(ranges)
            spec = {"type": "forest", "id": f"card-{key}-{i}-{probe}-{metric}", "title": f"{probe}: {metric}",
                    "rows": rows, "reference": 0.0 if key == "male_vs_female" else None, "x_label": metric}
            if bands:
                spec["x_range"] = [min(b[0] for b in bands), max(b[1] for b in bands)]
            figures.append(FigureView(spec["id"], spec["title"], "forest", forest.draw(spec, bands)))
        out.append((title, figures))
    return out

