"""The comparison as terminal tables (rich): one leaderboard per group of comparable runs."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from genderprobe.report import format
from genderprobe.report.compare import ProbeSection
from genderprobe.terminal import MARK_STYLE


def print_leaderboard(sections: list[ProbeSection], console: Console | None = None) -> None:
    console = console or Console()
    for s in sections:
        if s.mismatches:
            diffs = "; ".join(
                f"{name}: " + " vs ".join(format.plain(v) for v in values) for name, values in s.mismatches
            )
            console.print(f"[bold yellow]{s.probe}: parameters differ, runs shown in "
                          f"{len(s.groups)} groups[/] ({diffs})", highlight=False, soft_wrap=True)
        for i, g in enumerate(s.groups, 1):
            title = f"{s.probe}"
            if len(s.groups) > 1:
                title += f" · group {i}: " + ", ".join(f"{k}={format.plain(v)}" for k, v in g.distinct.items())
            table = Table(title=title, title_justify="left", caption="values with 95% intervals; marks A-D",
                          caption_justify="left")
            table.add_column("#", justify="right")
            table.add_column("model", no_wrap=True, min_width=min(40, max(len(e.label) for e in g.entries)))
            for m in g.headline:
                table.add_column(m, justify="right")
            for col in ("items", "undetected", "errors"):
                table.add_column(col, justify="right")
            for rank, e in enumerate(g.entries, 1):
                cells = []
                for m in g.headline:
                    mark = e.mark(m)
                    styled = f" [{MARK_STYLE.get(mark, '')}]{mark}[/]" if mark else ""
                    cells.append(format.estimate(e.metric(m)) + styled)
                table.add_row(str(rank), e.label, *cells, format.number(e.items),
                              format.number(e.undetected), format.number(e.errors))
            console.print(table)
            for w in g.warnings:
                console.print(f"[yellow]{w}[/]", highlight=False, soft_wrap=True)
