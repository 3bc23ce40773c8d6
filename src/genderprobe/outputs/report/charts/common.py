"""What every chart drawer shares: the Figure it returns, spec checks, axes and legends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from genderprobe.errors import UserError
from genderprobe.outputs.report import svg
from genderprobe.outputs.report.svg import Linear, el, text

WIDTH = 760.0
ROW_HEIGHT = 22.0
AXIS_HEIGHT = 42.0
MAX_LABEL_PX = 230.0


@dataclass
class Figure:
    """A drawn chart and the numbers behind it (cells as in probe tables)."""

    svg: Markup
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)


def malformed(spec: dict[str, Any], problem: str) -> UserError:
    return UserError(f"Chart '{spec.get('id', '?')}' in the results file is malformed: {problem}.")


def need_list(spec: dict[str, Any], key: str) -> list[Any]:
    value = spec.get(key)
    if not isinstance(value, list):
        raise malformed(spec, f"'{key}' must be a list")
    return value


def label_of(value: Any) -> str:
    """Any JSON label as display text (None shows as a dash)."""
    return "–" if value is None else str(value)


def label_width(labels: Sequence[str], limit: float = MAX_LABEL_PX) -> float:
    widest = max((svg.text_width(s) for s in labels), default=0.0)
    return min(limit, widest) + 20


# Charts taller than this many pixels repeat their tick labels above the plot.
TALL = 500.0


def x_axis(scale: Linear, ticks: Sequence[float], top: float, bottom: float, label: str) -> list[Markup]:
    """Vertical grid lines with tick labels under the plot (and over it when tall), and the axis title."""
    parts = []
    for t in ticks:
        x = scale(t)
        parts.append(el("line", {"x1": x, "x2": x, "y1": top, "y2": bottom, "class": "grid"}))
        parts.append(text(x, bottom + 15, svg.tick_label(t), anchor="middle", cls="tick"))
        if bottom - top > TALL:
            parts.append(text(x, top - 4, svg.tick_label(t), anchor="middle", cls="tick"))
    parts.append(el("line", {"x1": scale.r0, "x2": scale.r1, "y1": bottom, "y2": bottom, "class": "axis"}))
    if label:
        mid = (scale.r0 + scale.r1) / 2
        parts.append(text(mid, bottom + 33, svg.truncate(label, scale.r1 - scale.r0), anchor="middle",
                          cls="axis-title", full=label))
    return parts


def y_axis(scale: Linear, ticks: Sequence[float], left: float, right: float, label: str) -> list[Markup]:
    """Horizontal grid lines with tick labels left of the plot, and the axis title."""
    parts = []
    for t in ticks:
        y = scale(t)
        parts.append(el("line", {"x1": left, "x2": right, "y1": y, "y2": y, "class": "grid"}))
        parts.append(text(left - 6, y + 4, svg.tick_label(t), anchor="end", cls="tick"))
    parts.append(el("line", {"x1": left, "x2": left, "y1": scale.r0, "y2": scale.r1, "class": "axis"}))
    if label:
        mid = (scale.r0 + scale.r1) / 2
        short = svg.truncate(label, abs(scale.r0 - scale.r1))
        parts.append(text(14, mid, short, anchor="middle", cls="axis-title", full=label,
                          transform=f"rotate(-90 14 {svg.coord(mid)})"))
    return parts


def legend(names: Sequence[str], x: float, y: float, max_width: float) -> tuple[list[Markup], float]:
    """Colour keys for series, wrapped over lines; returns the parts and the height used."""
    parts: list[Markup] = []
    cx, cy = x, y
    for i, name in enumerate(names):
        label = svg.truncate(name, 180)
        w = 18 + svg.text_width(label) + 16
        if cx > x and cx + w > x + max_width:
            cx, cy = x, cy + 18
        colour = svg.PALETTE[i % len(svg.PALETTE)]
        parts.append(el("rect", {"x": cx, "y": cy, "width": 12, "height": 12, "fill": colour, "class": "key"}))
        parts.append(text(cx + 17, cy + 10, label, full=name))
        cx += w
    return parts, (cy - y + 22) if names else 0.0


def estimate_parts(point: Any) -> tuple[float | None, float | None, float | None]:
    """(value, ci_low, ci_high) of an estimate dict or a bare number."""
    if isinstance(point, dict):
        return svg.finite(point.get("value")), svg.finite(point.get("ci_low")), svg.finite(point.get("ci_high"))
    return svg.finite(point), None, None
