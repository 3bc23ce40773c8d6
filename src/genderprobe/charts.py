"""Chart specs: what a probe asks the report to draw, as plain JSON.

A probe puts these dicts in ``ProbeResult.charts``; the report draws each type
and shows its numbers as a table beside it, so a new probe needs no report
code. Every spec has ``type``, ``id`` (unique within a result) and ``title``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genderprobe.analysis.stats import Estimate


def forest(
    chart_id: str,
    title: str,
    rows: Mapping[str, Estimate],
    *,
    reference: float | None = 0.0,
    x_label: str = "",
    x_range: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Point estimates with intervals, one row per group; ``reference`` draws a line."""
    return {
        "type": "forest",
        "id": chart_id,
        "title": title,
        "x_label": x_label,
        "reference": reference,
        "x_range": list(x_range) if x_range else None,
        "rows": [{"label": k, **e.to_json()} for k, e in rows.items()],
    }


def bar(
    chart_id: str,
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float | Estimate | None]],
    *,
    y_label: str = "",
    reference: float | None = None,
) -> dict[str, Any]:
    """Grouped bars: one bar per category and series, optional intervals."""

    def point(v: float | Estimate | None) -> dict[str, Any]:
        if isinstance(v, Estimate):
            return v.to_json()
        return {"value": v, "ci_low": None, "ci_high": None, "n": None}

    return {
        "type": "bar",
        "id": chart_id,
        "title": title,
        "y_label": y_label,
        "reference": reference,
        "categories": list(categories),
        "series": [{"name": name, "points": [point(v) for v in vals]} for name, vals in series.items()],
    }


def heatmap(
    chart_id: str,
    title: str,
    rows: Sequence[str],
    columns: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    center: float | None = None,
    value_label: str = "",
) -> dict[str, Any]:
    """A matrix of values; ``center`` marks the neutral value (diverging colours)."""
    return {
        "type": "heatmap",
        "id": chart_id,
        "title": title,
        "rows": list(rows),
        "columns": list(columns),
        "values": [list(r) for r in values],
        "center": center,
        "value_label": value_label,
    }


def scatter(
    chart_id: str,
    title: str,
    points: Sequence[tuple[float, float]],
    *,
    x_label: str = "",
    y_label: str = "",
    identity_line: bool = False,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    return {
        "type": "scatter",
        "id": chart_id,
        "title": title,
        "x_label": x_label,
        "y_label": y_label,
        "identity_line": identity_line,
        "points": [[float(x), float(y)] for x, y in points],
        "labels": list(labels) if labels else None,
    }


def histogram(
    chart_id: str,
    title: str,
    edges: Sequence[float],
    series: Mapping[str, Sequence[int | float]],
    *,
    x_label: str = "",
) -> dict[str, Any]:
    """Counts per bin (len(edges) - 1 per series)."""
    return {
        "type": "histogram",
        "id": chart_id,
        "title": title,
        "x_label": x_label,
        "edges": [float(e) for e in edges],
        "series": [{"name": k, "counts": list(v)} for k, v in series.items()],
    }
