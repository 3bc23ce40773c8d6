"""Self-contained HTML reports and model comparisons over results files.

Charts are drawn here as inline SVG and every value is escaped: the page loads
nothing and runs no script, so it opens offline and model answers stay text.
"""

from __future__ import annotations

from genderprobe.outputs.report.compare import compare
from genderprobe.outputs.report.render import render_comparison, render_report, write_html

__all__ = ["compare", "render_comparison", "render_report", "write_html"]
