"""Histogram: counts per bin, one bar per series within each bin."""

from __future__ import annotations

from typing import Any

from genderprobe.outputs.report import svg
from genderprobe.outputs.report.charts.common import (
    WIDTH,
    Figure,
    label_of,
    legend,
    malformed,
    need_list,
    x_axis,
    y_axis,
)
from genderprobe.outputs.report.svg import Linear, el

PLOT_H = 240.0


def draw(spec: dict[str, Any]) -> Figure:
    edges = [svg.finite(e) for e in need_list(spec, "edges")]
    if any(e is None for e in edges) or any(b <= a for a, b in zip(edges, edges[1:])):
        raise malformed(spec, "'edges' must be increasing numbers")
    series = need_list(spec, "series")
    bins = max(0, len(edges) - 1)
    for s in series:
        if not isinstance(s, dict) or not isinstance(s.get("counts"), list) or len(s["counts"]) != bins:
            raise malformed(spec, f"each series must hold {bins} counts, one per bin")
    names = [label_of(s.get("name")) for s in series]
    columns = ["bin", *names]
    table = [[f"[{svg.tick_label(edges[b])}, {svg.tick_label(edges[b + 1])})", *[s["counts"][b] for s in series]]
             for b in range(bins)]
    title = str(spec.get("title", ""))
    counts = [[svg.finite(c) for c in s["counts"]] for s in series]
    if not bins or not series:
        return Figure(svg.no_data(WIDTH, "No bins to show.", title), columns, table)

    top_count = max((c for s in counts for c in s if c is not None), default=0.0)
    c0, c1, cticks = svg.nice_domain(0.0, max(top_count, 1.0))
    left, right = 70.0, WIDTH - 20
    key_parts, key_h = legend(names, left, 6, right - left) if len(series) > 1 else ([], 0.0)
    top = 10.0 + key_h
    sx = Linear(edges[0], edges[-1], left, right)
    sy = Linear(c0, c1, top + PLOT_H, top)
    xticks = edges if bins <= 12 else svg.nice_domain(edges[0], edges[-1])[2]
    xticks = [t for t in xticks if edges[0] <= t <= edges[-1]]
    parts = [*key_parts, *x_axis(sx, xticks, top, top + PLOT_H, str(spec.get("x_label") or "")),
             *y_axis(sy, cticks, left, right, "count")]
    for b in range(bins):
        a, z = sx(edges[b]), sx(edges[b + 1])
        w = (z - a - 2) / len(series)
        for j, s in enumerate(counts):
            c = s[b]
            if c is None or c <= 0:
                continue
            y = sy(c)
            tip = f"{names[j]} [{svg.tick_label(edges[b])}, {svg.tick_label(edges[b + 1])}): {svg.tick_label(c)}"
            parts.append(el("rect", {"x": a + 1 + w * j, "y": y, "width": max(w, 0.5), "height": sy(c0) - y,
                                     "fill": svg.PALETTE[j % len(svg.PALETTE)], "class": "bar"},
                            [el("title", {}, tip)]))
    return Figure(svg.svg(WIDTH, top + PLOT_H + 44, parts, label=title), columns, table)
