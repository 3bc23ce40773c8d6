"""Each number once: where a probe's own table holds the numbers a chart draws.

A chart shows the numbers behind it in a table; a probe often puts the same
numbers in a table of its own ("diff_success_rate by topic"), and a breakdown
the report draws may sit in one too, so the report showed them twice. Where a
probe table holds all of a chart's estimates (the same value and interval, on
a row naming the chart's label):

* a table holding exactly one chart's estimates, and no others, becomes that
  chart's numbers, with its own title and columns, and leaves the Tables;
* a table holding more (several charts, a paper's layout) stays in the Tables,
  and each chart it holds points to it instead of repeating it.
"""

from __future__ import annotations

from typing import Any

Numbers = tuple[Any, Any, Any]


def estimates(spec: Any, *, undefined: bool = True) -> list[tuple[str, Numbers]]:
    """(label, (value, ci_low, ci_high)) of every estimate a forest or bar chart draws (``undefined``:
    those without a value too); a bar's label names its category and its series, in the orders a
    table may name them."""
    if not isinstance(spec, dict):
        return []
    found: list[tuple[str, dict[str, Any]]] = []
    if spec.get("type") == "forest" and isinstance(spec.get("rows"), list):
        found = [(str(r.get("label")), r) for r in spec["rows"] if isinstance(r, dict)]
    elif spec.get("type") == "bar" and isinstance(spec.get("categories"), list):
        for series in spec.get("series") or []:
            points = series.get("points") if isinstance(series, dict) else None
            if isinstance(points, list):
                name = str(series.get("name"))
                found += [(f"{c} | {name} {c} | {c} {name}", p) for c, p in zip(spec["categories"], points)
                          if isinstance(p, dict)]
    return [(label, _numbers(e)) for label, e in found if undefined or e.get("value") is not None]


def _numbers(est: dict[str, Any]) -> Numbers:
    return (est.get("value"), est.get("ci_low"), est.get("ci_high"))


def _is_estimate(cell: Any) -> bool:
    return isinstance(cell, dict) and "value" in cell and ("ci_low" in cell or "ci_high" in cell)


def holds(table: dict[str, Any], shown: list[tuple[str, Numbers]]) -> bool:
    """Whether every estimate of a chart is in the table, named by its row or its column."""
    if not shown:
        return False
    columns = [str(c) for c in table["columns"]]
    cells = []  # (numbers, the names the cell is shown under)
    for row in table["rows"]:
        names = [c for c in row if isinstance(c, str) and c]
        cells += [(_numbers(c), names + columns[i:i + 1]) for i, c in enumerate(row) if _is_estimate(c)]
    return all(any(numbers == found and any(_names(name, label) for name in names) for found, names in cells)
               for label, numbers in shown)


def _names(name: str, label: str) -> bool:
    """A cell's row or column names a chart's label: "Money" for "Money ◆", "human-written" for "human"."""
    return name in label or bool(label) and label in name


def estimate_cells(table: dict[str, Any]) -> tuple[int, set[int]]:
    """How many estimates with a value the table holds, and in which columns."""
    cells = [(i, c) for row in table["rows"] for i, c in enumerate(row) if _is_estimate(c) and c["value"] is not None]
    return len(cells), {i for i, _ in cells}


def place(tables: list[dict[str, Any]], charts: list[list[tuple[str, Numbers]]]) -> dict[int, tuple[int, bool]]:
    """chart index -> (index of the table holding its numbers, whether the table becomes its numbers)."""
    held: dict[int, list[int]] = {}
    for c, shown in enumerate(charts):
        t = next((t for t, table in enumerate(tables) if holds(table, shown)), None)
        if t is not None:
            held.setdefault(t, []).append(c)
    out = {}
    for t, cs in held.items():
        count, columns = estimate_cells(tables[t])
        alone = len(cs) == 1 and len(columns) == 1 and count == len(charts[cs[0]])
        for c in cs:
            out[c] = (t, alone)
    return out
