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
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from genderprobe.data.packaged import data_file
from genderprobe.errors import UserError

RUN_LABEL = "this run"


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


def beside_run(table: PaperTable, doc: dict[str, Any] | None) -> dict[str, Any]:
    """The table as results JSON: the run's own row first (where the table maps
    metrics), then the paper's rows for the run's model, then every other row.

    Each row's first extra cell is not added; instead ``row_kinds`` says for each
    row whether it is "run", "match" or "paper", so renderers can highlight.
    """
    rows: list[list[Any]] = []
    kinds: list[str] = []
    model = (doc or {}).get("model")
    if doc is not None and table.metrics:
        run_row: list[Any] = []
        for col in table.columns:
            if col == table.model_column:
                run_row.append(f"{RUN_LABEL} ({model})")
            elif col in table.metrics:
                run_row.append(run_value(doc, table.metrics[col]))
            else:
                run_row.append(None)
        rows.append(run_row)
        kinds.append("run")
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
        "note": table.note,
        "metrics": table.metrics,
    }


def paper_section(probe_cls: Any, doc: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every paper table of a probe, laid out beside ``doc`` (a results document)."""
    try:
        tables = tables_for(probe_cls)
    except (OSError, ValueError, KeyError) as exc:
        raise UserError(f"The packaged paper tables of '{probe_cls.name}' cannot be read ({exc}); reinstall genderprobe.") from None
    return [beside_run(t, doc) for t in tables]
