"""Draw any chart spec from :mod:`genderprobe.charts` as inline SVG with its numbers.

One drawer per chart type; a new probe needs no code here as long as it uses
these types. An unknown type (from a newer genderprobe) is shown as a notice
with its numbers left in the results file, rather than failing the report.
"""

from __future__ import annotations

from typing import Any

from genderprobe.outputs.report.charts import bar, forest, heatmap, histogram, scatter
from genderprobe.outputs.report.charts.common import Figure, malformed

DRAWERS = {
    "forest": forest.draw,
    "bar": bar.draw,
    "heatmap": heatmap.draw,
    "scatter": scatter.draw,
    "histogram": histogram.draw,
}


def draw(spec: Any) -> Figure | None:
    """The figure for ``spec``, or None when its type is unknown to this version."""
    if not isinstance(spec, dict):
        raise malformed({}, "a chart must be an object")
    drawer = DRAWERS.get(spec.get("type"))
    return drawer(spec) if drawer else None


__all__ = ["DRAWERS", "Figure", "draw"]
