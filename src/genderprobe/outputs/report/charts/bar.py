"""Grouped bars, drawn horizontally so long category labels and 100+ categories stay legible."""

from __future__ import annotations

from typing import Any

from genderprobe.outputs.report import format, svg
from genderprobe.outputs.report.charts.common import (
    AXIS_HEIGHT,
    TALL,
    WIDTH,
    Figure,
    estimate_parts,
    label_of,
    label_width,
    legend,
    malformed,
    need_list,
    x_axis,
)
from genderprobe.outputs.report.svg import Linear, el, text


def draw(spec: dict[str, Any]) -> Figure:
    categories = [label_of(c) for c in need_list(spec, "categories")]
    series = need_list(spec, "series")
    for s in series:
        if not isinstance(s, dict) or not isinstance(s.get("points"), list):
            raise malformed(spec, "each series must be an object with a list of points")
        if len(s["points"]) != len(categories):
            raise malformed(spec, f"series '{s.get('name')}' has {len(s['points'])} points for {len(categories)} categories")
    names = [label_of(s.get("name")) for s in series]
    columns = ["category", *names]
    table = [[c, *[s["points"][i] for s in series]] for i, c in enumerate(categories)]
    title = str(spec.get("title", ""))
    if not categories or not series:
        return Figure(svg.no_data(WIDTH, "No bars to show.", title), columns, table)

    parsed = [[estimate_parts(p) for p in s["points"]] for s in series]
    reference = svg.finite(spec.get("reference"))
    seen = [0.0] + [v for s in parsed for p in s for v in p if v is not None]
    if reference is not None:
        seen.append(reference)
    d0, d1, ticks = svg.nice_domain(min(seen), max(seen))

    left = label_width(categories)
    right = WIDTH - 20
    key_parts, key_height = legend(names, left, 6, right - left) if len(series) > 1 else ([], 0.0)
    bar_h = 14.0 if len(series) == 1 else max(6.0, min(12.0, 36.0 / len(series)))
    if len(categories) > 40:  # long lists (100+ words): tighter rows
        bar_h = max(5.0, bar_h * 0.75)
    row_h = bar_h * len(series) + (5 if len(categories) > 40 else 8)
    tall = row_h * len(categories) > TALL
    top = 8.0 + key_height + (16.0 if tall else 0.0)
    bottom = top + row_h * len(categories)
    x = Linear(d0, d1, left, right)
    parts = [*key_parts, *x_axis(x, ticks, top, bottom, str(spec.get("y_label") or ""))]
    zero = x(min(d1, max(d0, 0.0)))
    for i, category in enumerate(categories):
        y0 = top + row_h * i + (row_h - bar_h * len(series)) / 2
        parts.append(text(left - 8, y0 + bar_h * len(series) / 2 + 4, svg.truncate(category, left - 12),
                          anchor="end", full=category))
        for j, (value, lo, hi) in enumerate(p[i] for p in parsed):
            y = y0 + bar_h * j
            tip = f"{category} · {names[j]}: " + ("n/a" if value is None else format.number(value))
            if value is None:
                parts.append(text(zero + 4, y + bar_h - 3, "n/a", cls="muted small"))
                continue
            a, b = sorted((zero, x(value)))
            colour = svg.PALETTE[j % len(svg.PALETTE)]
            parts.append(el("rect", {"x": a, "y": y, "width": max(b - a, 1.0), "height": bar_h - 1,
                                     "fill": colour, "class": "bar"}, [el("title", {}, tip)]))
            if lo is not None and hi is not None:
                cy = y + (bar_h - 1) / 2
                parts.append(el("line", {"x1": x(lo), "x2": x(hi), "y1": cy, "y2": cy, "class": "ci"}))
    if reference is not None:
        parts.append(el("line", {"x1": x(reference), "x2": x(reference), "y1": top, "y2": bottom,
                                 "class": "reference"}))
    return Figure(svg.svg(WIDTH, bottom + AXIS_HEIGHT, parts, label=title), columns, table)
