"""Terminal output: the progress bar and the results tables (rich)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress
from rich.table import Table
from rich.text import Text

from genderprobe.engine.accounting import by_role

MARK_STYLE = {"A": "bold green", "B": "bold yellow", "C": "bold dark_orange", "D": "bold red"}


class Progress:
    """done/total, cached, errors, requests per second, tokens, elapsed and ETA.

    The total grows as a probe asks for more rounds. The request rate counts
    requests sent to the model, not answers read from the store. Rendering
    happens on rich's refresh thread; :meth:`advance` only updates numbers, so
    it costs microseconds per request.

    When standard error is not a terminal (a batch job, CI, nohup), a bar
    cannot be redrawn: a plain line is printed every ``every`` seconds instead,
    and one at the end.
    """

    def __init__(self, console: Console | None = None, *, description: str = "requests",
                 bar: RichProgress | None = None, every: float = 5.0):
        self.console = console or Console(stderr=True)
        self.plain = not self.console.is_terminal
        self.every = every
        self._last_line = time.monotonic()
        self.retries = 0
        self.throttled = 0
        self.in_flight: int | None = None  # requests in flight allowed since the last throttle
        self._children: list[Progress] = []
        self._bar = bar or RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:,.0f}/{task.total:,.0f}"),
            TextColumn(
                "cached {task.fields[cached]:,}  errors {task.fields[errors]:,}{task.fields[waits]}  "
                "{task.fields[rate]} req/s  {task.fields[tokens]:,} tokens"
            ),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self.description = description
        self._task: Any = None
        self._started = time.monotonic()
        self.done = 0
        self.total = 0
        self.cached = 0
        self.errors = 0
        self.tokens = 0
        self._sent = 0

    def beside(self, description: str) -> Progress:
        """A second line under the same display (a judge's requests under the model's)."""
        child = Progress(self.console, description=description, bar=self._bar, every=self.every)
        self._children.append(child)
        return child

    def expect(self, n: int) -> None:
        self.total += n
        if self.plain:
            if self._task is None:
                self._task = "plain"
                self._start_heartbeat()
            return
        if self._task is None:
            self._bar.start()
            self._task = self._bar.add_task(
                self.description, total=self.total, cached=0, errors=0, rate="-", tokens=0, waits=""
            )
        else:
            self._bar.update(self._task, total=self.total)

    def advance(self, n: int, *, cached: int = 0, errors: int = 0, tokens: int = 0) -> None:
        if self._task is None:
            self.expect(n)
        self.done += n
        self.cached += cached
        self.errors += errors
        self.tokens += tokens
        self._sent += n - cached
        now = time.monotonic()
        elapsed = max(1e-9, now - self._started)
        if self.plain:
            if now - self._last_line >= self.every:
                self._last_line = now
                self.show(self.line())
            return
        self._bar.update(
            self._task,
            advance=n,
            cached=self.cached,
            errors=self.errors,
            tokens=self.tokens,
            rate=f"{self._sent / elapsed:,.1f}",
            waits=self._waits(),
        )

    def show(self, line: str) -> None:
        """One plain progress line (where a bar cannot be redrawn)."""
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def retried(self, *, throttled: bool = False, in_flight: int | None = None) -> None:
        """One more retry; a throttle is counted, not printed, so a throttling server costs no lines."""
        self.retries += 1
        if throttled:
            self.throttled += 1
            self.in_flight = in_flight

    def _waits(self) -> str:
        if not self.retries:
            return ""
        text = f"  retries {self.retries:,}"
        if self.throttled:
            text += f" (throttled {self.throttled:,}, {self.in_flight} in flight)" if self.in_flight else \
                f" (throttled {self.throttled:,})"
        return text

    def line(self) -> str:
        """The progress as one plain line, for logs that cannot redraw a bar."""
        elapsed = max(1e-9, time.monotonic() - self._started)
        rate = self._sent / elapsed
        left = self.total - self.done
        eta = f"{left / rate:,.0f} s" if rate > 0 and left > 0 else "-"
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        return (f"{self.description} {self.done:,}/{self.total:,}{share}  cached {self.cached:,}  "
                f"errors {self.errors:,}{self._waits() or '  retries 0'}  {rate:,.1f} req/s  "
                f"elapsed {elapsed:,.0f} s  ETA {eta}")

    def _start_heartbeat(self) -> None:
        """A plain line every ``every`` seconds also while no answer arrives (a slow or throttling server),
        so a log is never silent for long; :meth:`advance` prints the lines while answers flow."""
        import weakref

        self._quiet = quiet = threading.Event()
        every, alive = self.every, weakref.ref(self)  # a progress dropped without stop() ends its heartbeat too

        def beat() -> None:
            while not quiet.wait(every):
                progress = alive()
                if progress is None:
                    return
                if time.monotonic() - progress._last_line >= progress.every:
                    progress._last_line = time.monotonic()
                    progress.show(progress.line())
                del progress

        threading.Thread(target=beat, name="progress-heartbeat", daemon=True).start()

    def stop(self) -> None:
        for child in self._children:
            child.stop()
        if self._task is None:
            return
        if self.plain:
            self._quiet.set()
            self.show(self.line())
            self._task = None
            return
        self._bar.stop()


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (where a run's progress goes to the notebook)."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict) and "value" in value:
        v, lo, hi = value.get("value"), value.get("ci_low"), value.get("ci_high")
        if v is None:
            return "undefined"
        if lo is None or hi is None:
            return fmt(v, digits)
        return f"{fmt(v, digits)} [{fmt(lo, digits)}, {fmt(hi, digits)}]"
    if isinstance(value, float):
        # Rounding noise (9.1e-16, -1e-17) prints as the 0 it is, never as "-0.000".
        return f"{value:.{digits}f}" if abs(value) >= 0.5 * 10 ** -digits else f"{0:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def print_verdict(doc: dict[str, Any], console: Console) -> None:
    """What the run may claim, first: probe and model, each headline with its interval and mark (undecided or
    struck where it does not stand), the validity verdict with its reasons, and the answers used and lost."""
    from genderprobe.analysis import verdict

    v = verdict.of(doc)
    console.print(Text.assemble((doc["probe"], "bold"), " on ", (doc["model"], "bold"),
                                f"  ({doc.get('summary') or ''})"), soft_wrap=True)
    if v["validity"] == "fail":
        console.print(f"NOT MEANINGFUL: {v['validity_text']} ({', '.join(v['failed'])}).",
                      style="bold white on red", highlight=False, markup=False)
    table = Table(box=None, title=Text(f"Headline ({v['intervals']})", style="bold"), title_justify="left",
                  pad_edge=False, padding=(0, 2, 0, 0))
    table.add_column("metric")
    table.add_column("value [95% CI]" if not v["stopped_early"] else "value [interval]", justify="right")
    table.add_column("mark")
    for h in v["headlines"]:
        table.add_row(h["metric"], estimate_text(h, h["too_few"]), mark_cell(h["mark"]))
    console.print(table)
    style = {"fail": "bold red", "warn": "bold yellow", "pass": "green"}[v["validity"]]
    console.print(f"Validity: {v['validity'].upper()}, {v['validity_text']}.", style=style, highlight=False,
                  markup=False)
    for reason in v["reasons"]:
        console.print(f"  {STATUS_SIGN[reason['status']]} {reason['guard']}: {reason['message']}",
                      style="red" if reason["status"] == "fail" else "yellow", highlight=False, markup=False,
                      soft_wrap=True)
    answers = v["answers"]
    if answers:
        console.print(f"Answers: {answers['used']:,} used, {answers['lost']:,} lost of {answers['attempts']:,} "
                      f"({answers['share_lost']:.0%}).", highlight=False, markup=False)
    notes = doc.get("calibration_notes")
    for metric, note in (notes.items() if isinstance(notes, dict) else ()):
        # why a calibration model gets a mark its name does not suggest (a coin marked C)
        console.print(f"{metric}: {note}", style="dim", highlight=False, markup=False, soft_wrap=True)


def estimate_text(est: dict[str, Any], few: bool) -> str:
    """A value with its interval, or with "too few answers" and no interval (every surface says it alike)."""
    if few and est.get("value") is not None:
        return f"{fmt(est['value'])} (too few answers: n = {est.get('n')})"
    return fmt({k: est.get(k) for k in ("value", "ci_low", "ci_high")})


def mark_cell(state: dict[str, Any]) -> Text:
    """A mark as the verdict has it: plain when decided, "A…C" when undecided, struck with ✗ when it does
    not stand (rich text, never markup: the letter comes from a results file)."""
    letter = state.get("mark")
    if not letter:
        return Text("")
    if state["state"] == "struck":
        return Text.assemble((letter, "strike"), f" ✗ {state['reason']}")
    if state["state"] == "undecided":
        return Text.assemble((state["reaches"][0], MARK_STYLE.get(state["reaches"][0], "")), "…",
                             (state["reaches"][-1], MARK_STYLE.get(state["reaches"][-1], "")), " undecided")
    return Text(letter, style=MARK_STYLE.get(letter, ""))


def print_summary(doc: dict[str, Any], console: Console | None = None) -> None:
    """The run on one screen: the verdict, then one line for each thing the details hold (breakdowns, the
    paper's table, warnings, requests); ``--details`` and the report show them whole."""
    console = console or output_console()
    print_verdict(doc, console)
    _print_claims(doc, console)
    line = _breakdowns_line(doc)
    if line:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    _print_sample(doc, console)
    paper = _paper_line(doc)
    if paper:
        console.print(paper, highlight=False, markup=False, soft_wrap=True)
    _print_requests_and_warnings(doc, console)


def print_results(doc: dict[str, Any], console: Console | None = None) -> None:
    """The run in full (``--details``): the verdict first, then every metric, table, breakdown and the
    paper's table beside the run, the requests, and the warnings last."""
    console = console or output_console()
    print_verdict(doc, console)
    _print_claims(doc, console)
    print_metrics(doc, console)
    notes = doc.get("metric_notes")
    if isinstance(notes, dict) and notes:
        console.print("Also shown: " + "; ".join(f"{k}: {v}" for k, v in notes.items()) + ".",
                      style="dim", highlight=False, markup=False)
    from genderprobe.outputs.report.document import mark_reading

    for name, m in (doc.get("marks") or {}).items():
        reading = mark_reading(m) if isinstance(m, dict) else ""
        if reading:
            console.print(f"[dim]{name}: {reading}[/dim]", highlight=False)
    from genderprobe.analysis.breakdown_tests import MARKER

    shown_whole: list[str] = []
    for t in doc.get("tables", []):
        cells, legends = _flagged_cells(doc, t["rows"], shown_whole)
        caption = "\n".join(text for text in (t.get("note"), *legends) if text)
        table = Table(title=t["title"], title_justify="left", caption=caption or None, caption_justify="left")
        for col in t["columns"]:
            table.add_column(str(col))
        for i, row in enumerate(t["rows"]):
            table.add_row(*[fmt(v) + (f" {MARKER}" if (i, j) in cells else "") for j, v in enumerate(row)])
        console.print(table)
    _print_other_breakdowns(doc, shown_whole, console)
    beside = [t for t in doc.get("paper") or [] if "run" in (t.get("row_kinds") or [])]
    if beside:
        print_paper_table(beside[0], console)
        console.print(f"[dim]All the paper's tables: genderprobe paper {doc['probe']} --results RESULTS.json[/dim]")
    counts = doc.get("counts", {})
    console.print("Counts: " + ", ".join(f"{k} {fmt(v)}" for k, v in counts.items()))
    _print_sample(doc, console)
    _print_requests_and_warnings(doc, console)


def _print_claims(doc: dict[str, Any], console: Console) -> None:
    """What the run says beyond its intervals: equivalence within a margin, a decision that stopped it early."""
    from genderprobe.analysis.equivalence import lines
    from genderprobe.analysis.sequential import line as decided_line

    for line in lines(doc.get("equivalence") if isinstance(doc.get("equivalence"), dict) else None):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    decided = decided_line(doc.get("until_decided") if isinstance(doc.get("until_decided"), dict) else None)
    if decided:
        console.print(decided, highlight=False, markup=False, soft_wrap=True)


def _print_sample(doc: dict[str, Any], console: Console) -> None:
    from genderprobe.analysis.planning import halving_line

    line = halving_line(doc.get("interval_halving") if isinstance(doc.get("interval_halving"), dict) else None)
    if line:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def _print_requests_and_warnings(doc: dict[str, Any], console: Console) -> None:
    for role, stats in by_role(doc.get("run", {})):
        console.print(f"{_ROLE_NAMES[role]}: {request_summary(stats)}", highlight=False, markup=False)
    for warning in doc.get("warnings") or []:
        console.print(f"Warning: {warning}", style="bold red", highlight=False, markup=False, soft_wrap=True)


def _breakdowns_line(doc: dict[str, Any]) -> str | None:
    """The tested breakdowns in a line: which groups differ from the neutral value after the family
    correction, or that none does."""
    from genderprobe.analysis.breakdown_tests import flagged, tested

    found = tested(doc)
    if not found:
        return None
    groups = sum(len(test.get("groups") or {}) for _, test, _ in found)
    differ = [f"{dim} {', '.join(sorted(flagged(test)))}" for dim, test, _ in found if flagged(test)]
    where = f"{len(found)} breakdown{'s' if len(found) > 1 else ''} ({', '.join(dim for dim, _, _ in found)})"
    note = (found[0][1].get("run_family") or {}).get("note")
    caveat = f" Note: {note}." if note else ""
    if not differ:
        return (f"Breakdowns: no group of {groups} in {where} differs from the neutral value after the run's "
                f"family correction.{caveat}")
    return f"Breakdowns: groups that differ after the run's family correction, of {groups} in {where}: " + \
        "; ".join(differ) + "." + caveat


def _paper_line(doc: dict[str, Any]) -> str | None:
    """Where the run sits among the paper's published models, in a line."""
    table = next((t for t in doc.get("paper") or [] if "run" in (t.get("row_kinds") or [])), None)
    if table is None or len(table.get("columns") or []) < 2:
        return None
    kinds = table.get("row_kinds") or []
    values = [(row[0], row[1]) for i, row in enumerate(table["rows"])
              if (kinds[i] if i < len(kinds) else "") != "run" and isinstance(row[1], (int, float))]
    if not values:
        return None
    low, high = min(values, key=lambda r: r[1]), max(values, key=lambda r: r[1])
    return (f"Paper: {table.get('title') or 'published'}: {len(values)} models from {fmt(low[1])} ({low[0]}) to "
            f"{fmt(high[1])} ({high[0]}); --details or the report shows the table with this run.")


def print_metrics(doc: dict[str, Any], console: Console) -> None:
    """Every metric with its interval and mark, each as far as the verdict lets it stand; a metric on fewer
    answers than an interval needs says so, headline or not."""
    from genderprobe.analysis import validity, verdict

    v = verdict.of(doc)
    metrics = Table(title=f"Metrics ({v['intervals']})", title_justify="left")
    metrics.add_column("metric")
    metrics.add_column("value [95% CI]", justify="right")
    metrics.add_column("mark", justify="left")
    legend = set()
    for name, est in doc["metrics"].items():
        few = validity.too_few(est)
        if few:
            legend.add(f"too few answers: fewer than {validity.MIN_ANSWERS}, no interval is shown and the value "
                       "is no evidence either way")
        metrics.add_row(name, estimate_text(est, few) if isinstance(est, dict) else fmt(est),
                        mark_cell(verdict.mark_of(doc, name)))
    if legend:
        metrics.caption = "; ".join(sorted(legend)) + "."
        metrics.caption_justify = "left"
    console.print(metrics)


STATUS_SIGN = {"fail": "✗", "warn": "!", "pass": "✓"}


def _flagged_cells(doc: dict[str, Any], rows: list[list[Any]],
                   shown_whole: list[str]) -> tuple[set[tuple[int, int]], list[str]]:
    """(row, column) of the cells of a table that show a group differing from the neutral value after the
    run's family correction (max-T step-down), and the legend of each tested breakdown that one column alone
    shows whole (by the group names of the first column); those breakdowns are added to ``shown_whole``."""
    from genderprobe.analysis.breakdown_tests import flagged, legend, shown

    width = max((len(row) for row in rows), default=0)
    columns = {j: shown(doc, {str(row[0]): row[j] for row in rows if len(row) > j and isinstance(row[j], dict)})
               for j in range(1, width)}
    found = [(j, match) for j, match in columns.items() if match]
    cells: set[tuple[int, int]] = set()
    legends: list[str] = []
    for j, (dim, test, groups) in found:
        if sum(match[0] == dim for _, match in found) > 1:
            continue  # two columns show the same numbers: which one is the breakdown's is unknown
        marked = flagged(test)
        cells |= {(i, j) for i, row in enumerate(rows) if row and str(row[0]) in marked}
        legends.append(legend(test, groups))
        shown_whole.append(dim)
    return cells, legends


def _print_other_breakdowns(doc: dict[str, Any], shown_whole: list[str], console: Console) -> None:
    """Tested breakdowns no table showed whole: one line each, naming the groups that differ."""
    from genderprobe.analysis.breakdown_tests import flagged, legend, tested

    for dim, test, groups in tested(doc):
        if dim in shown_whole:
            continue
        marked = sorted(flagged(test))
        differ = f" Differ: {', '.join(marked)}." if marked else ""
        console.print(f"Breakdown {dim} ({test.get('metric')} against {test['null']:g}): {legend(test, groups)}{differ}",
                      highlight=False, markup=False)


_ROLE_NAMES = {"model": "Requests", "judge": "Judge requests", "checker": "Checker requests",
               "reader_judge": "Reader-judge requests"}


def request_summary(stats: dict[str, Any]) -> str:
    """One runner's requests in a line: counts, tokens and, where prices were given, the cost."""
    text = (f"{fmt(stats.get('requests'))} (cached {fmt(stats.get('cached'))}, sent {fmt(stats.get('sent'))}, "
            f"errors {fmt(stats.get('errors'))}")
    if stats.get("empty"):
        text += f", of which empty {fmt(stats['empty'])}"
    if stats.get("retries"):
        text += f", retries {fmt(stats['retries'])}"
    if stats.get("throttled"):
        text += f", throttled {fmt(stats['throttled'])} times"
        if stats.get("min_concurrency"):
            text += f" (down to {fmt(stats['min_concurrency'])} in flight)"
    text += f"); tokens in {fmt(stats.get('prompt_tokens'))}, out {fmt(stats.get('completion_tokens'))}"
    if stats.get("cost_usd") is not None:
        text += f"; cost ${stats['cost_usd']:,.4f}"
    return text


ROW_STYLE = {"run": "bold cyan", "match": "yellow"}


def print_paper_table(t: dict[str, Any], console: Console) -> None:
    """A paper's table as printed, with this run's row and its model's rows highlighted.

    Cells come from packaged files and results files, so they are printed as
    text, never as rich markup.
    """
    from rich.text import Text

    table = Table(title=Text(t.get("title") or ""), title_justify="left",
                  caption=Text(f"Source: {t.get('cite') or ''}" + (f". {t['note']}" if t.get("note") else "")),
                  caption_justify="left")
    for col in t["columns"]:
        table.add_column(Text(str(col)))
    kinds = t.get("row_kinds") or []
    for i, row in enumerate(t["rows"]):
        style = ROW_STYLE.get(kinds[i] if i < len(kinds) else "", "")
        table.add_row(*[Text(fmt(v)) for v in row], style=style)
    console.print(table)


def output_console() -> Console:
    """The console for results on standard output.

    Piped into a file or a pager there is no terminal to fit, and rich's
    80-column default would wrap wide tables into unreadable columns.
    """
    import os
    import sys

    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return Console()
    return Console(width=160)
