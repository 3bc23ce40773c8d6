"""Forest plot: one row per group, a point with its 95% interval, a reference line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from genderprobe.outputs.report import format, svg
from genderprobe.outputs.report.charts.common import (
    AXIS_HEIGHT,
    ROW_HEIGHT,
    TALL,
    WIDTH,
    Figure,
    estimate_parts,
    label_of,
    label_width,
    malformed,
    need_list,
    x_axis,
)
from genderprobe.outputs.report.svg import Linear, el, text

Band = tuple[float, float, str, str]  # low, high, colour, name (mark ranges behind a comparison)


def draw(spec: dict[str, Any], bands: Sequence[Band] = (), *, width: float = WIDTH) -> Figure:
    """``width``: the SVG's width in pixels (narrower for the mark scales in the summary cards)."""
    rows = need_list(spec, "rows")
    for r in rows:
        if not isinstance(r, dict):
            raise malformed(spec, "each of its rows must be an object with a label and a value")
    labels = [label_of(r.get("label")) for r in rows]
    table = [[label, {k: r.get(k) for k in ("value", "ci_low", "ci_high", "n")}, r.get("n")]
             for label, r in zip(labels, rows)]
    columns = ["group", "value [95% CI]", "n"]
    title = str(spec.get("title", ""))
    if not rows:
        return Figure(svg.no_data(width, "No groups to show.", title), columns, table)

    points = [estimate_parts(r) for r in rows]
    reference = svg.finite(spec.get("reference"))
    x_range = spec.get("x_range")
    if isinstance(x_range, list) and len(x_range) == 2 and all(svg.finite(v) is not None for v in x_range):
        d0, d1, ticks = svg.nice_domain(float(x_range[0]), float(x_range[1]))
    else:
        seen = [v for p in points for v in p if v is not None]
        if reference is not None:
            seen.append(reference)
        d0, d1, ticks = svg.nice_domain(min(seen, default=0.0), max(seen, default=1.0))

    left = label_width(labels)
    readings = [_reading(p) for p in points]
    value_col = max(svg.text_width(r) for r in readings) * 1.08 + 18
    # Band letters sit in a strip above the rows, clear of the points and intervals.
    top = 8.0 + (16.0 if ROW_HEIGHT * len(rows) > TALL else 0.0) + (12.0 if bands else 0.0)
    bottom = top + ROW_HEIGHT * len(rows)
    x = Linear(d0, d1, left, width - value_col)
    parts = []
    for lo, hi, colour, name in bands:
        a, b = x(max(d0, lo)), x(min(d1, hi))
        if b > a:
            parts.append(el("rect", {"x": a, "y": top, "width": b - a, "height": bottom - top,
                                     "fill": colour, "class": "band"}, [el("title", {}, name)]))
            if b - a >= 14:
                parts.append(text((a + b) / 2, top - 3, name[-1:], anchor="middle", cls="band-label"))
    parts += x_axis(x, ticks, top, bottom, str(spec.get("x_label") or ""))
    if reference is not None and d0 <= reference <= d1:
        parts.append(el("line", {"x1": x(reference), "x2": x(reference), "y1": top, "y2": bottom,
                                 "class": "reference"}))

    def clamp(v: float) -> float:
        return min(d1, max(d0, v))

    for i, (label, (value, lo, hi)) in enumerate(zip(labels, points)):
        y = top + ROW_HEIGHT * (i + 0.5)
        parts.append(text(left - 8, y + 4, svg.truncate(label, left - 12), anchor="end", full=label))
        reading = readings[i]
        if value is None:
            parts.append(text((x.r0 + x.r1) / 2, y + 4, "undefined", anchor="middle", cls="muted"))
        else:
            if lo is not None and hi is not None:
                parts.append(el("line", {"x1": x(clamp(lo)), "x2": x(clamp(hi)), "y1": y, "y2": y, "class": "ci"}))
                for end in (lo, hi):
                    parts.append(el("line", {"x1": x(clamp(end)), "x2": x(clamp(end)), "y1": y - 4, "y2": y + 4,
                                             "class": "ci"}))
            parts.append(el("circle", {"cx": x(clamp(value)), "cy": y, "r": 4.5, "class": "pt"},
                            [el("title", {}, f"{label}: {reading}")]))
        parts.append(text(width - value_col + 10, y + 4, reading, cls="reading"))
    height = bottom + AXIS_HEIGHT
    return Figure(svg.svg(width, height, parts, label=title), columns, table)


def _reading(point: tuple[float | None, float | None, float | None]) -> str:
    value, lo, hi = point
    if value is None:
        return "undefined"
    return format.estimate({"value": value, "ci_low": lo, "ci_high": hi})
