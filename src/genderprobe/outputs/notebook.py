"""Run outputs and suites as a notebook shows them: a short text and an HTML summary.

A notebook prints a cell's last expression; a ``RunOutput``'s dataclass repr
held every record (3.5 million characters for 3,000 items). Here a run is
shown as its verdict (:func:`genderprobe.analysis.verdict.of`) says, and from
nothing else: each headline with its value, 95% interval and mark (decided,
undecided or struck with the reason), the validity verdict with its reasons,
the answers used and lost, and where the files are. The text stays under
:data:`LIMIT` characters whatever the run's size. Everything taken from a
results file or a model spec is escaped in the HTML: a model's name is the
user's to choose and a results file may come from anyone.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from genderprobe.analysis import verdict
from genderprobe.errors import UserError
from genderprobe.outputs.results import load_results
from genderprobe.outputs.terminal import STATUS_SIGN, estimate_text

LIMIT = 2000  # characters of a text repr, whatever the run's size
CLIP = 240  # characters of one line of it (a validity reason can be a paragraph)
MARK_COLOUR = {"A": "#2e7d32", "B": "#9e9d24", "C": "#ef6c00", "D": "#c62828"}
FAIL_BANNER = "background:#c62828;color:#fff;padding:2px 6px;font-weight:bold"
VALIDITY_COLOUR = {"fail": "#c62828", "warn": "#ef6c00", "pass": "#2e7d32"}


# -- one run ------------------------------------------------------------------------


def run_text(output: Any) -> str:
    """A run output as a few plain lines: what ``repr`` shows."""
    doc = output.document
    if "dry_run" in doc:
        from genderprobe.engine.dry_run import dry_run_lines

        return _bounded(["RunOutput of a dry run:", *dry_run_lines(doc)])
    v, problem = _verdict(doc)
    if v is None:
        return _bounded([f"RunOutput: {doc.get('probe')} on {doc.get('model')}", problem])
    return _bounded([f"RunOutput: {v['probe']} on {v['model']}", *_verdict_lines(v, indent="  "),
                     _files_text(output), "Fields: .result, .document (the results JSON), .records, .results_path"])


def run_html(output: Any) -> str:
    """A run output as an HTML summary: what a notebook shows."""
    doc = output.document
    if "dry_run" in doc:
        from genderprobe.engine.dry_run import dry_run_lines

        return f"<pre>{escape(chr(10).join(dry_run_lines(doc)))}</pre>"
    v, problem = _verdict(doc)
    if v is None:
        return f"<p>{_who(doc)}</p><p>{escape(problem)}</p>"
    summary = f" <span style=\"color:#666\">({escape(str(doc['summary']))})</span>" if doc.get("summary") else ""
    return (f"<div class=\"genderprobe-run\"><p>{_who(v)}{summary}</p>{_verdict_html(v)}"
            f"<p>{_files_html(output)}</p></div>")


# -- a suite ------------------------------------------------------------------------


def suite_text(suite: Any, most: int = 12) -> str:
    """A suite as a few plain lines: its folder, its runs' states, and the first ``most`` runs' verdicts."""
    lines = [f"Suite in {suite.out}: {_plural(len(suite.models), 'model')} × {_plural(len(suite.probes), 'probe')}, "
             f"{_states(suite)}"]
    for r in suite.runs[:most]:
        state, v = _run_state(suite, r)
        lines.append(f"  {r.probe.name} on {r.model}: {state}")
        if v is not None:
            lines.extend(_headline_lines(v, "    "))
    if len(suite.runs) > most:
        lines.append(f"  … and {len(suite.runs) - most} more runs (suite.runs)")
    return _bounded(lines + [_report_text(suite)])


def suite_html(suite: Any) -> str:
    """A suite as an HTML table: one row a run, with its validity and headlines as its verdict has them."""
    rows = []
    for r in suite.runs:
        state, v = _run_state(suite, r)
        cells = ""
        if v is not None:
            cells = "<br>".join(f"{escape(h['metric'])} {escape(estimate_text(h, h['too_few']))} {mark_html(h['mark'])}"
                                for h in v["headlines"])
        rows.append(f"<tr><td>{escape(r.probe.name)}</td><td>{escape(r.model)}</td>"
                    f"<td>{escape(state)}</td><td>{cells}</td></tr>")
    head = "<tr><th>probe</th><th>model</th><th>run</th><th>headline: value [95% CI] mark</th></tr>"
    return (f"<div class=\"genderprobe-suite\"><p>Suite in <code>{escape(str(suite.out))}</code>: "
            f"{escape(_states(suite))}</p><table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
            f"<p>{escape(_report_text(suite))}</p></div>")


# -- rendering the verdict ----------------------------------------------------------


def mark_html(state: dict[str, Any]) -> str:
    """A mark as the verdict has it: the letter when decided, "undecided A…C", or struck with the reason."""
    letter = state.get("mark")
    if not letter:
        return ""
    if state["state"] == verdict.STRUCK:
        return f"<s>{escape(letter)}</s> does not stand ({escape(str(state['reason']))})"
    if state["state"] == verdict.UNDECIDED:
        return f"undecided {_letter(state['reaches'][0])}…{_letter(state['reaches'][-1])}"
    return _letter(letter)


def _verdict(doc: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The document's verdict, or why there is none: a repr must show something, never raise."""
    try:
        return verdict.of(doc), ""
    except Exception as exc:  # a document built by hand or cut short: say so instead of failing the cell
        return None, f"Its verdict cannot be read from the document ({type(exc).__name__}: {exc})."


def _verdict_lines(v: dict[str, Any], indent: str) -> list[str]:
    lines = [f"NOT MEANINGFUL: {v['validity_text']} ({', '.join(v['failed'])})."] if v["validity"] == "fail" else []
    lines.append(f"Headline ({v['intervals']}):")
    lines.extend(_headline_lines(v, indent))
    lines.append(f"Validity: {v['validity'].upper()}, {v['validity_text']}.")
    lines.extend(f"{indent}{STATUS_SIGN.get(r['status'], '?')} {r['guard']}: {r['message']}" for r in v["reasons"])
    if v["answers"]:
        lines.append(_answers_text(v["answers"]))
    return lines


def _verdict_html(v: dict[str, Any]) -> str:
    parts = []
    if v["validity"] == "fail":
        parts.append(f"<p><span style=\"{FAIL_BANNER}\">NOT MEANINGFUL: {escape(v['validity_text'])} "
                     f"({escape(', '.join(v['failed']))}).</span></p>")
    interval = "95% CI" if not v["stopped_early"] else "interval"
    rows = "".join(f"<tr><td>{escape(h['metric'])}</td><td style=\"text-align:right\">{escape(estimate_text(h, h['too_few']))}</td>"
                   f"<td>{mark_html(h['mark'])}</td></tr>" for h in v["headlines"])
    parts.append(f"<table><caption style=\"text-align:left\"><b>Headline</b> ({escape(v['intervals'])})</caption>"
                 f"<thead><tr><th>metric</th><th>value [{interval}]</th><th>mark</th></tr></thead>"
                 f"<tbody>{rows}</tbody></table>")
    colour = VALIDITY_COLOUR.get(v["validity"], "inherit")
    parts.append(f"<p><b style=\"color:{colour}\">Validity: {escape(v['validity'].upper())}</b>, "
                 f"{escape(v['validity_text'])}.</p>")
    if v["reasons"]:
        items = "".join(f"<li>{escape(STATUS_SIGN.get(r['status'], '?'))} <b>{escape(r['guard'])}</b>: "
                        f"{escape(r['message'])}</li>" for r in v["reasons"])
        parts.append(f"<ul>{items}</ul>")
    if v["answers"]:
        parts.append(f"<p>{escape(_answers_text(v['answers']))}</p>")
    return "".join(parts)


def _headline_lines(v: dict[str, Any], indent: str) -> list[str]:
    """One line a headline: metric, value [interval], and the mark's text as the verdict has it."""
    width = max((len(h["metric"]) for h in v["headlines"]), default=0)
    return [f"{indent}{h['metric']:<{width}}  {estimate_text(h, h['too_few'])}  {h['mark']['text']}".rstrip()
            for h in v["headlines"]]


def _answers_text(answers: dict[str, Any]) -> str:
    return (f"Answers: {answers['used']:,} used, {answers['lost']:,} lost of {answers['attempts']:,} "
            f"({answers['share_lost']:.0%}).")


def _letter(letter: str) -> str:
    return f"<b style=\"color:{MARK_COLOUR.get(letter, 'inherit')}\">{escape(letter)}</b>"


def _who(v: dict[str, Any]) -> str:
    return f"<b>{escape(str(v.get('probe')))}</b> on <b>{escape(str(v.get('model')))}</b>"


# -- files, runs, and the length of it all --------------------------------------------


def _files(output: Any) -> list[tuple[str, Path]]:
    named = (("results", output.results_path), ("records", output.records_path), ("Parquet", output.parquet_path))
    return [(name, path) for name, path in named if path is not None]


def _files_text(output: Any) -> str:
    files = _files(output)
    if files:
        return "Files: " + "; ".join(f"{name} {path}" for name, path in files)
    if output.records is not None:
        return f"Files: none written (no out_dir); {len(output.records):,} records in .records"
    return "Files: none written (no out_dir)"


def _files_html(output: Any) -> str:
    files = _files(output)
    if files:
        return "Files: " + "; ".join(f"{name} <code>{escape(str(path))}</code>" for name, path in files)
    return escape(_files_text(output))


def _run_state(suite: Any, run: Any) -> tuple[str, dict[str, Any] | None]:
    """A suite run's state in words, and its verdict when it is done and its results can be read."""
    if run.status == "failed":
        return f"failed: {run.error}", None
    if run.status != "done":
        return run.status, None
    if suite.config.dry_run:
        return "counted (dry run: nothing written)", None
    try:
        doc = load_results(Path(suite.out) / run.results)
    except UserError as exc:
        return f"done, but {exc}", None
    v, problem = _verdict(doc)
    if v is None:
        return f"done; {problem}", None
    validity = {"fail": f"NOT MEANINGFUL ({', '.join(v['failed'])})", "warn": "validity: warn"}.get(v["validity"], "")
    return ("done" + (f", {validity}" if validity else "") + ("" if not v["answers"] else
            f", {v['answers']['lost']:,} of {v['answers']['attempts']:,} answers lost")), v


def _states(suite: Any) -> str:
    counts: dict[str, int] = {}
    for r in suite.runs:
        counts[r.status] = counts.get(r.status, 0) + 1
    return f"{_plural(len(suite.runs), 'run')}: " + ", ".join(f"{n} {status}" for status, n in counts.items())


def _report_text(suite: Any) -> str:
    # Imported here: the suite report's module brings the report's renderer with it.
    from genderprobe.outputs.report.suite_report import REPORT_HTML

    report = Path(suite.out) / REPORT_HTML
    return f"Report: {report}" if report.is_file() else \
        "Report: not written yet (genderprobe.outputs.report.suite_report.write(suite.out) writes it)"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _bounded(lines: list[str]) -> str:
    """The lines, each clipped to CLIP characters, as many as fit in LIMIT (then how many were left out)."""
    lines = [line if len(line) <= CLIP else line[:CLIP - 1] + "…" for line in lines]
    kept: list[str] = []
    size = 0
    for i, line in enumerate(lines):
        if size + len(line) + 1 > LIMIT - 60:  # room for the line saying what was left out
            kept.append(f"… {len(lines) - i} more lines left out")
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept)
