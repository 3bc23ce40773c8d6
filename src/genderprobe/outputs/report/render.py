"""Render reports and comparisons to HTML with jinja2 (autoescape on) and write them safely."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from genderprobe.errors import UserError
from genderprobe.outputs.report import document, format
from genderprobe.outputs.report.answer_browser import Browser, browser
from genderprobe.outputs.report.answer_data import RunAnswers
from genderprobe.outputs.report.charts import forest
from genderprobe.outputs.report.compare import ProbeSection, compare, ranking_note
from genderprobe.outputs.report.document import FigureView, mark_bands
from genderprobe.outputs.report.paired import FAMILY_TEXT
from genderprobe.outputs.results import atomic_write_text
from genderprobe.version import __version__


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("genderprobe", "outputs/report/templates"),
        autoescape=True,  # every value is escaped unless it is Markup we built (the SVG)
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(number=format.number, estimate=format.estimate, exact=format.exact, plain=format.plain,
                       when=format.when, estimate_parts=format.estimate_parts)
    env.tests["estimate"] = format.is_estimate
    env.tests["p_value"] = format.is_p_value
    return env


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def answers_of(docs: Sequence[tuple[Any, ...]]) -> Browser:
    """The answer browser of (document, source[, records]) runs: records are a path or a list of records."""
    return browser([RunAnswers(doc, source, *records[:1]) for doc, source, *records in docs])


def render_report(docs: Sequence[tuple[Any, ...]]) -> str:
    """One HTML page for one or more (results document, source name) pairs; a third element,
    the run's records (their file, or a list), puts its answers in the page's answer browser."""
    if not docs:
        raise UserError("Give at least one results file to report on.")
    runs = [document.build(doc, source) for doc, source, *_ in docs]
    return environment().get_template("report.html.j2").render(
        runs=runs, version=__version__, generated=_now(), browser=answers_of(docs),
        samples_per_category=document.SAMPLES_PER_CATEGORY,
    )


def headline_figure(section: ProbeSection, group_index: int, metric: str) -> FigureView:
    """A forest plot of one headline metric across the runs of a group, over its mark ranges."""
    group = section.groups[group_index]
    rows = [{"label": e.label, **e.metric(metric)} for e in group.entries]
    bands = []
    for e in group.entries:
        m = e.doc["marks"].get(metric)
        if isinstance(m, dict):
            bands = mark_bands(m.get("ranges"))
            break
    spec: dict[str, Any] = {"type": "forest", "id": f"compare-{group_index}-{metric}", "title": metric,
                            "rows": rows, "reference": None, "x_label": metric}
    if bands:
        spec["x_range"] = [min(b[0] for b in bands), max(b[1] for b in bands)]
    return FigureView(spec["id"], metric, "forest", forest.draw(spec, bands))


def render_comparison(docs: Sequence[tuple[Any, ...]], equivalence_margin: float | None = None) -> str:
    if len(docs) < 2:
        raise UserError("Give at least two results files to compare.")
    sections = compare(docs, equivalence_margin)
    figures = {
        (s_i, g_i): [headline_figure(s, g_i, m) for m in g.headline]
        for s_i, s in enumerate(sections) for g_i, g in enumerate(s.groups)
    }
    return environment().get_template("compare.html.j2").render(
        sections=sections, figures=figures, count=len(docs), version=__version__, generated=_now(),
        ranking_note=ranking_note, family_text=FAMILY_TEXT, browser=answers_of(docs),
    )


def write_html(path: Path, html: str) -> None:
    """Write atomically (a failure leaves no half-written file), with one-sentence errors."""
    if path.is_dir():
        raise UserError(f"{path} is a folder; give the report a file name such as {path / 'report.html'}.")
    try:
        atomic_write_text(path, html)
    except OSError as exc:
        raise UserError(f"Cannot write {path} ({exc.strerror or exc.__class__.__name__}).") from None
