"""Heatmap: a matrix of values; a diverging scale around ``center`` (e.g. parity at 1.0)."""

from __future__ import annotations

import math
from typing import Any

from genderprobe.outputs.report import format, svg
from genderprobe.outputs.report.charts.common import (
    WIDTH,
    Figure,
    label_of,
    label_width,
    malformed,
    need_list,
)
from genderprobe.outputs.report.svg import el, text

CELL_H = 22.0
LOW, MID, HIGH = (33, 102, 172), (247, 247, 247), (178, 24, 43)
STEPS = 11


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> str:
    r, g, bl = (round(x + (y - x) * t) for x, y in zip(a, b))
    return f"#{r:02x}{g:02x}{bl:02x}"


def _scale(values: list[float], center: float | None):
    """(value -> (fill colour, strength 0..1), legend low end, legend high end, whether the scale is a ratio's).

    Diverging when a centre is given. Centred on 1.0 with only positive values,
    the values are ratios (disparate impact, parity at 1.0): there the colours are
    symmetric in log space, so 1/3 and 3 (equal bias either way) are equally
    strong, and the scale never reaches impossible values below zero.
    """
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    if center == 1.0 and values and lo > 0:
        spread = max(abs(math.log(hi / center)), abs(math.log(center / lo))) or math.log(2)

        def colour(v: float) -> tuple[str, float]:
            t = max(-1.0, min(1.0, math.log(max(v, 1e-300) / center) / spread))
            return (_mix(MID, HIGH, t) if t >= 0 else _mix(MID, LOW, -t)), abs(t)

        return colour, center / math.exp(spread), center * math.exp(spread), True
    if center is not None:
        spread = max(abs(hi - center), abs(center - lo)) or 1.0

        def colour(v: float) -> tuple[str, float]:
            t = max(-1.0, min(1.0, (v - center) / spread))
            return (_mix(MID, HIGH, t) if t >= 0 else _mix(MID, LOW, -t)), abs(t)

        return colour, center - spread, center + spread, False
    span = (hi - lo) or 1.0

    def colour(v: float) -> tuple[str, float]:
        t = (v - lo) / span
        return _mix(MID, LOW, t), t

    return colour, lo, lo + span, False


def draw(spec: dict[str, Any]) -> Figure:
    rows = [label_of(r) for r in need_list(spec, "rows")]
    cols = [label_of(c) for c in need_list(spec, "columns")]
    values = need_list(spec, "values")
    if len(values) != len(rows) or any(not isinstance(r, list) or len(r) != len(cols) for r in values):
        raise malformed(spec, f"'values' must hold {len(rows)} rows of {len(cols)} values")
    value_label = str(spec.get("value_label") or "")
    table = [[r, *vals] for r, vals in zip(rows, values)]
    columns = ["", *cols]  # the first column holds the row labels; the values' name is in the legend
    title = str(spec.get("title", ""))
    if not rows or not cols:
        return Figure(svg.no_data(WIDTH, "No cells to show.", title), columns, table)

    center = svg.finite(spec.get("center"))
    nums = [svg.finite(v) for r in values for v in r]
    colour, d0, d1, ratio = _scale([v for v in nums if v is not None], center)
    left = label_width(rows, 200)
    cell_w = max(16.0, min(64.0, (WIDTH - left - 10) / len(cols)))
    head = min(110.0, max(svg.text_width(c) for c in cols) * 0.75 + 16)
    show_values = cell_w >= 40
    top = head
    width = max(WIDTH, left + cell_w * len(cols) + 110)
    parts = []
    for j, c in enumerate(cols):
        cx = left + cell_w * (j + 0.5)
        parts.append(text(cx, top - 6, svg.truncate(c, 140), full=c,
                          transform=f"rotate(-40 {svg.coord(cx)} {svg.coord(top - 6)})"))
    for i, r in enumerate(rows):
        y = top + CELL_H * i
        parts.append(text(left - 8, y + CELL_H / 2 + 4, svg.truncate(r, left - 12), anchor="end", full=r))
        for j, raw in enumerate(values[i]):
            v = svg.finite(raw)
            x = left + cell_w * j
            tip = f"{r} · {cols[j]}: " + ("n/a" if v is None else f"{v:.3g}")
            if v is None:
                parts.append(el("rect", {"x": x, "y": y, "width": cell_w - 1, "height": CELL_H - 1,
                                         "class": "cell empty"}, [el("title", {}, tip)]))
                parts.append(text(x + cell_w / 2, y + CELL_H / 2 + 4, "–", anchor="middle", cls="muted"))
                continue
            fill, strength = colour(v)
            parts.append(el("rect", {"x": x, "y": y, "width": cell_w - 1, "height": CELL_H - 1,
                                     "fill": fill, "class": "cell"}, [el("title", {}, tip)]))
            if show_values:
                parts.append(text(x + cell_w / 2, y + CELL_H / 2 + 4, format.number(v, 2), anchor="middle",
                                  cls="cell-value light" if strength > 0.6 else "cell-value"))
    bottom = top + CELL_H * len(rows) + 14
    parts += _legend(colour, d0, d1, center, left, bottom, value_label, ratio)
    return Figure(svg.svg(width, bottom + 44, parts, label=title), columns, table)


def _legend(colour, d0: float, d1: float, center: float | None, x: float, y: float, label: str,
            ratio: bool = False) -> list:
    """A stepped colour key with its ends and the neutral centre marked (log-spaced steps for a ratio)."""
    step_w = 18.0
    parts = []
    for k in range(STEPS):
        f = k / (STEPS - 1)
        v = d0 * (d1 / d0) ** f if ratio else d0 + (d1 - d0) * f
        parts.append(el("rect", {"x": x + step_w * k, "y": y, "width": step_w, "height": 10, "fill": colour(v)[0]}))
    end = x + step_w * STEPS
    parts.append(text(x, y + 24, _end_label(d0), anchor="start", cls="tick"))
    parts.append(text(end, y + 24, _end_label(d1), anchor="end", cls="tick"))
    if center is not None:
        mid = x + step_w * STEPS / 2
        parts.append(el("line", {"x1": mid, "x2": mid, "y1": y - 3, "y2": y + 13, "class": "reference"}))
        parts.append(text(mid, y + 24, svg.tick_label(center), anchor="middle", cls="tick"))
    if label:
        note = " (log scale)" if ratio else ""
        parts.append(text(end + 12, y + 9, svg.truncate(label + note, 300), full=label + note, cls="axis-title"))
    return parts


def _end_label(v: float) -> str:
    return svg.tick_label(float(f"{v:.3g}"))
