"""The comparison as terminal tables (rich): one leaderboard per group of comparable runs.

Every string here comes from results files (model specs, parameter values such
as system prompts, marks), so it is passed to rich as :class:`Text`, never as
markup: ``[/bold]`` in a system prompt must print as itself, not fail.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from genderprobe.report import format
from genderprobe.report.compare import ProbeSection
from genderprobe.terminal import MARK_STYLE, output_console


def _estimate_cell(estimate: dict, mark: str | None) -> Text:
    cell = Text(format.estimate(estimate))
    if mark:
        cell.append(" ")
        cell.append(str(mark), style=MARK_STYLE.get(str(mark), ""))
    return cell


def print_leaderboard(sections: list[ProbeSection], console: Console | None = None) -> None:
    console = console or output_console()
    for s in sections:
        if s.mismatches:
            diffs = "; ".join(
                f"{name}: " + " vs ".join(format.plain(v) for v in values) for name, values in s.mismatches
            )
            line = Text(f"{s.probe}: parameters differ, runs shown in {len(s.groups)} groups", style="bold yellow")
            line.append(f" ({diffs})", style="")
            console.print(line, highlight=False, soft_wrap=True)
        for i, g in enumerate(s.groups, 1):
            title = f"{s.probe}"
            if len(s.groups) > 1:
                title += f" · group {i}: " + ", ".join(f"{k}={format.plain(v)}" for k, v in g.distinct.items())
            table = Table(title=Text(title), title_justify="left", caption="values with 95% intervals; marks A-D",
                          caption_justify="left", box=box.SIMPLE_HEAD)
            table.add_column("#", justify="right")
            table.add_column("model", overflow="fold", min_width=min(22, max(len(e.label) for e in g.entries)))
            for m in g.headline:
                # Metric names fold rather than being cut to "diff_abs_…": a reader must see which metric it is.
                table.add_column(Text(m), justify="right", overflow="fold")
            for col in ("items", "undetected", "errors"):
                table.add_column(col, justify="right", overflow="fold")
            for rank, e in enumerate(g.entries, 1):
                cells = [_estimate_cell(e.metric(m), e.mark(m)) for m in g.headline]
                table.add_row(str(rank), Text(e.label), *cells, format.number(e.items),
                              format.number(e.undetected), format.number(e.errors))
            console.print(table)
            for w in g.warnings:
                console.print(Text(w, style="yellow"), highlight=False, soft_wrap=True)
