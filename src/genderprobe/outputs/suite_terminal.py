"""A suite in the terminal: one line per finished run, and GenderBench's report card at the end.

Both render what the runs' verdicts say (genderprobe.analysis.verdict), as the run's own
output does: a mark that does not stand is struck with ✗ and its reason, an undecided one
shows as "A…C", and a run that failed validity says so on its line.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from genderprobe.analysis import verdict
from genderprobe.analysis.genderbench_card import SectionMark
from genderprobe.outputs.terminal import mark_cell


def run_outcome(doc: dict[str, Any]) -> Text:
    """'done (fail_rate D)', or 'done (diff_success_rate A ✗ invalid: position); validity FAIL: position'."""
    v = verdict.of(doc)
    marks = [Text.assemble(f"{name} ", mark_cell(state)) for name, state in v["marks"].items() if state["mark"]]
    line = Text("done")
    if marks:
        line.append(" (")
        line.append_text(Text(", ").join(marks))
        line.append(")")
    if v["validity"] == "fail":
        line.append(f"; validity FAIL: {', '.join(v['failed'])}", style="bold red")
    elif v["validity"] == "warn":
        line.append(f"; validity WARN: {', '.join(dict.fromkeys(r['guard'] for r in v['reasons']))}",
                    style="yellow")
    return line


def _section_cell(section: SectionMark) -> Text:
    """The section mark; where it does not stand, struck (its reason is the first caveat printed beside it)."""
    state = section.state
    if state["state"] == verdict.STRUCK:
        return Text.assemble((state["mark"], "strike"), " ✗")
    return mark_cell(state) if state["mark"] else Text("–", style="dim")


def print_card(rows: list[Any], console: Console) -> None:
    """GenderBench's four section marks of each of the suite's models, each with what limits it."""
    console.print(Text("GenderBench report card", style="bold"), Text(
        "(each section by GenderBench 0.5.0's rule; the report has report 1.0's models beside these)",
        style="dim"), highlight=False)
    width = max(len(s.title) for row in rows for s in row.sections)
    for row in rows:
        console.print(Text(row.model, style="bold"), highlight=False, soft_wrap=True)
        for s in row.sections:
            line = Text(f"  {s.title:<{width}}  ") + _section_cell(s)
            if s.caveats:
                line.append(": " + "; ".join(s.caveats), style="dim")
            console.print(line, highlight=False, soft_wrap=True)
