"""How numbers and cells read in the report (and the exact values kept beside them)."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from typing import Any


def is_estimate(v: Any) -> bool:
    return isinstance(v, dict) and "value" in v and ("ci_low" in v or "ci_high" in v)


def number(v: Any, digits: int = 3, *, tiny_as_sci: bool = False) -> str:
    """3 decimals for rates and differences, separators for counts; a p-value (``tiny_as_sci``) below
    the decimals in scientific notation. Rounding noise (9.1e-16, -1e-17) reads as the 0 it is, never
    "-0.000"."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "–"
        if v.is_integer() and abs(v) >= 1000:
            return f"{v:,.0f}"
        if tiny_as_sci and v != 0 and abs(v) < 10 ** -digits:
            return f"{v:.2e}"
        text = f"{v:.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text
    return str(v)


_P_VALUE = re.compile(r"(^|[\s_(])p($|[\s_)])|p[-_]value", re.I)


def is_p_value(name: Any) -> bool:
    """Whether a column or metric name says it holds p-values ("p-value", "Holm-adjusted p", "pearson_p_value")."""
    return isinstance(name, str) and bool(_P_VALUE.search(name))


def estimate(v: dict[str, Any], p: bool = False) -> str:
    """``0.128 [-0.077, 0.333]``; ``undefined`` when the metric has no value; ``p``: the value is a p-value."""
    return " ".join(part for part in estimate_parts(v, p) if part)


def estimate_parts(v: dict[str, Any], p: bool = False) -> tuple[str, str]:
    """(``0.128``, ``[-0.077, 0.333]``): the value and its interval ("" when it has none), for a
    cell that may put the interval under the value."""
    value, lo, hi = v.get("value"), v.get("ci_low"), v.get("ci_high")
    if value is None:
        return "undefined", ""
    if lo is None or hi is None:
        return number(value, tiny_as_sci=p), ""
    # Interval ends in the value's fixed notation, so they line up with it.
    return number(value), f"[{number(lo)}, {number(hi)}]"


def exact(v: Any) -> str:
    """The value as written in the results file, for data-* attributes (tests, copy-paste)."""
    return json.dumps(v, ensure_ascii=False)


def plain(v: Any) -> str:
    """Any cell that is neither a number nor an estimate, as readable text."""
    if v is None:
        return "–"
    if isinstance(v, str):
        return v
    if isinstance(v, list) and v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return "[" + ", ".join(number(x) for x in v) + "]"  # an interval or a few values, read as numbers are
    return json.dumps(v, ensure_ascii=False)


def when(v: Any) -> str:
    """An ISO timestamp as ``2026-01-31 14:05 UTC``; anything else as given."""
    if not isinstance(v, str):
        return "unknown" if v is None else str(v)
    try:
        t = dt.datetime.fromisoformat(v)
    except ValueError:
        return v
    if t.tzinfo is not None:
        t = t.astimezone(dt.UTC)
        return t.strftime("%Y-%m-%d %H:%M UTC")
    return t.strftime("%Y-%m-%d %H:%M")
