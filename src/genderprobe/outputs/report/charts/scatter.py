"""Scatter plot, with the identity line (model = human) when the spec asks for it."""

from __future__ import annotations

from typing import Any

from genderprobe.outputs.report import svg
from genderprobe.outputs.report.charts.common import (
    WIDTH,
    Figure,
    label_of,
    malformed,
    need_list,
    x_axis,
    y_axis,
)
from genderprobe.outputs.report.svg import Linear, el, text

PLOT = 400.0


def draw(spec: dict[str, Any]) -> Figure:
    raw = need_list(spec, "points")
    if any(not isinstance(p, list) or len(p) != 2 for p in raw):
        raise malformed(spec, "each point must be an [x, y] pair")
    labels = spec.get("labels")
    if labels is not None and (not isinstance(labels, list) or len(labels) != len(raw)):
        raise malformed(spec, "'labels' must hold one label per point")
    x_label, y_label = str(spec.get("x_label") or ""), str(spec.get("y_label") or "")
    columns = ([] if labels is None else ["label"]) + [x_label or "x", y_label or "y"]
    table = [([] if labels is None else [label_of(labels[i])]) + list(p) for i, p in enumerate(raw)]
    title = str(spec.get("title", ""))
    points = [(svg.finite(x), svg.finite(y), i) for i, (x, y) in enumerate(raw)]
    points = [(x, y, i) for x, y, i in points if x is not None and y is not None]
    if not points:
        return Figure(svg.no_data(WIDTH, "No points to show.", title), columns, table)

    xs, ys = [p[0] for p in points], [p[1] for p in points]
    identity = bool(spec.get("identity_line"))
    if identity:  # one domain on both axes, so the identity line is the diagonal
        lo, hi = min(xs + ys), max(xs + ys)
        x0, x1, xticks = svg.nice_domain(lo, hi)
        y0, y1, yticks = x0, x1, xticks
    else:
        x0, x1, xticks = svg.nice_domain(min(xs), max(xs))
        y0, y1, yticks = svg.nice_domain(min(ys), max(ys))
    left, top = 70.0, 10.0
    sx = Linear(x0, x1, left, left + PLOT)
    sy = Linear(y0, y1, top + PLOT, top)
    parts = [*x_axis(sx, xticks, top, top + PLOT, x_label), *y_axis(sy, yticks, left, left + PLOT, y_label)]
    if identity:
        parts.append(el("line", {"x1": sx(x0), "y1": sy(x0), "x2": sx(x1), "y2": sy(x1), "class": "reference"}))
        parts.append(text(sx(x1) - 4, sy(x1) + 14, "y = x", anchor="end", cls="muted small"))
    for x, y, i in points:
        tip = (f"{label_of(labels[i])}: " if labels is not None else "") + f"({x:.3g}, {y:.3g})"
        parts.append(el("circle", {"cx": sx(x), "cy": sy(y), "r": 3.5, "class": "pt dot"},
                        [el("title", {}, tip)]))
    notes = []
    if len(points) < len(raw):
        notes.append(f"{len(raw) - len(points)} point(s) without a value are not drawn.")
    return Figure(svg.svg(WIDTH, top + PLOT + 44, parts, label=title), columns, table, notes)
