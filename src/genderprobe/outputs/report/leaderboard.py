"""The comparison as terminal tables (rich): one leaderboard per group of comparable runs.

Every string here comes from results files (model specs, parameter values such
as system prompts, marks), so it is passed to rich as :class:`Text`, never as
markup: ``[/bold]`` in a system prompt must print as itself, not fail.
"""

from __future__ import annotations

import itertools

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from genderprobe.outputs.report import format
from genderprobe.outputs.report.compare import Entry, Group, ProbeSection, ranking_note
from genderprobe.outputs.report.paired import FAMILY_TEXT, PairTest, p_phrase
from genderprobe.outputs.terminal import MARK_STYLE, mark_cell, output_console


def _table(title: str, g: Group) -> Table:
    return Table(title=Text(title), title_justify="left",
                 caption=Text(f"values with 95% intervals; marks A-D (A…C: undecided; ✗: does not stand); "
                              f"{ranking_note(g)}"),
                 caption_justify="left", box=box.SIMPLE_HEAD)


def _estimate_cell(e: Entry, metric: str) -> Text:
    """The value with its interval (none where it rests on too few answers), and the mark as the run's verdict
    has it: struck with its reason where it does not stand, "A…C" where undecided."""
    est = e.metric(metric)
    if e.too_few(metric) and est["value"] is not None:
        cell = Text(f"{format.number(est['value'])} (too few answers)")  # as wide as an interval: n is beside it
    else:
        cell = Text(format.estimate(est))
    state = e.mark_state(metric)
    if state and state["mark"]:
        cell.append(" ")
        cell.append_text(_range(state["reaches"]) if state["state"] == "undecided" else mark_cell(state))
    return cell


def _range(reaches: list[str]) -> Text:
    """An undecided mark as its range alone ("A…C"): the caption says what it means, and the row stays narrow."""
    return Text.assemble((reaches[0], MARK_STYLE.get(reaches[0], "")), "…", (reaches[-1], MARK_STYLE.get(reaches[-1], "")))


def _rank(rank: int, e: Entry) -> str:
    """A run that failed a validity check is shown, but not ranked."""
    return "–" if e.invalid else str(rank)


def _label(e: Entry, style: str = "") -> Text:
    label = Text(e.label, style=style)
    if e.invalid:
        label.append(f" ({e.invalid}, not ranked)", style="bold red")
    return label


def _wide(g: Group, title: str) -> Table:
    """One row per model, one column per headline metric."""
    table = _table(title, g)
    table.add_column("#", justify="right")
    table.add_column("model")
    for m in g.headline:
        table.add_column(Text(m), justify="right")
    for col in ("items", "undetected", "errors"):
        table.add_column(col, justify="right")
    lost = any(e.lost_by_group for e in g.entries)
    if lost:
        table.add_column("lost by gender")
    for rank, e in enumerate(g.entries, 1):
        cells = [_estimate_cell(e, m) for m in g.headline]
        extra = [Text(e.lost_by_group)] if lost else []
        table.add_row(_rank(rank, e), _label(e), *cells, format.number(e.items),
                      format.number(e.undetected), format.number(e.errors), *extra)
    return table


def _stacked(g: Group, title: str) -> Table:
    """One row per model and metric: three columns, so every metric fits in 60 columns."""
    table = _table(title, g)
    table.add_column("#", justify="right")
    table.add_column("model / metric", overflow="fold")
    table.add_column("value", overflow="fold")
    for rank, e in enumerate(g.entries, 1):
        # Zero counts are left out so the line fits 60 columns; any other count shows.
        counts = ", ".join([f"{format.number(e.items)} items"] + [
            f"{format.number(n)} {what}" for n, what in ((e.undetected, "undetected"), (e.errors, "errors")) if n])
        table.add_row(_rank(rank, e), _label(e, style="bold"), Text(counts, style="dim"))
        if e.lost_by_group:
            table.add_row("", Text("  lost by gender"), Text(e.lost_by_group))
        for i, m in enumerate(g.headline, 1):
            # A section end between models prints as a blank line with this box.
            table.add_row("", Text(f"  {m}"), _estimate_cell(e, m),
                          end_section=i == len(g.headline))
    return table


def _fits(console: Console, table: Table) -> bool:
    """Whether the table fits with every cell on one line.

    Squeezed, rich wraps numbers mid-digit and drops the last columns without a
    word, so a narrower terminal gets the stacked layout instead.
    """
    return console.measure(table, options=console.options.update_width(10_000)).maximum <= console.width


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
            table = _wide(g, title)
            console.print(table if _fits(console, table) else _stacked(g, title))
            for w in g.warnings:
                console.print(Text(w, style="yellow"), highlight=False, soft_wrap=True)
        if s.pairs:
            print_pairs(s, console)


def print_pairs(s: ProbeSection, console: Console) -> None:
    """Model against model: a heading per pair, then each headline metric's difference.

    Lines rather than a table: two labels, a difference with its interval and
    p-values do not fit one row of a narrow terminal. A metric's line breaks
    between its parts, never inside a number.
    """
    console.print(Text(f"{s.probe}: model against model, A vs B", style="bold"), Text(
        f"(each headline metric as A − B, or A / B for a ratio, with its 95% interval; two-sided p, and "
        f"family p: {FAMILY_TEXT})", style="dim"), highlight=False)
    for (a, b), tests in itertools.groupby(s.pairs, key=lambda t: (t.a, t.b)):
        tests = list(tests)
        # The labels open and close the line: the only line with a label between spaces is its leaderboard row.
        line = Text(a, style="bold")
        line.append(" vs ")
        line.append(b, style="bold")
        console.print(line, highlight=False)
        notes = {t.note for t in tests if t.test != "none"}
        shared = notes.pop() if len(notes) == 1 else None
        if shared:
            console.print(Text(f"  {shared}", style="dim" if tests[0].paired else "yellow"), highlight=False)
        for t in tests:
            for text in _wrapped(_pair_parts(t, shared), console.width):
                console.print(text, highlight=False)


def _pair_parts(t: PairTest, shared: str | None) -> list[Text]:
    head = f"{t.metric}, A {t.sign} B"
    if t.test == "none":
        return [Text(f"{t.metric}: ") + Text(t.note, style="dim")]
    significant = t.p_adjusted is not None and t.p_adjusted < 0.05
    parts = [Text(f"{head} = {format.estimate(t.difference)}"),
             Text(f"{p_phrase(t.p_value)} ({p_phrase(t.p_adjusted, 'family p')})", style="bold" if significant else "")]
    if t.equivalent:
        parts.append(Text(t.equivalent))
    if t.note != shared:
        parts.append(Text(t.note, style="dim" if t.paired else "yellow"))
    return parts


def _wrapped(parts: list[Text], width: int) -> list[Text]:
    """Parts joined by "; " on lines of at most ``width``, indented: 2 spaces, then 4."""
    lines = [Text("  ") + parts[0]]
    for part in parts[1:]:
        if lines[-1].cell_len + 2 + part.cell_len <= width:
            lines[-1].append("; ")
            lines[-1].append_text(part)
        else:
            lines.append(Text("    ") + part)
    return lines
