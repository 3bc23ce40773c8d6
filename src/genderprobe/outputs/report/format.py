"""How numbers and cells read in the report (and the exact values kept beside them)."""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any


def is_estimate(v: Any) -> bool:
    return isinstance(v, dict) and "value" in v and ("ci_low" in v or "ci_high" in v)


def number(v: Any, digits: int = 3, *, tiny_as_sci: bool = True) -> str:
    """3 decimals for rates and differences, separators for counts, sci for tiny p-values."""
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
        if tiny_as_sci and v != 0 and abs(v) < 10 ** -digits:  # p-values
            return f"{v:.2e}"
        return f"{v:.{digits}f}"
    return str(v)


def estimate(v: dict[str, Any]) -> str:
    """``0.128 [-0.077, 0.333]``; ``undefined`` when the metric has no value."""
    return " ".join(part for part in estimate_parts(v) if part)


def estimate_parts(v: dict[str, Any]) -> tuple[str, str]:
    """(``0.128``, ``[-0.077, 0.333]``): the value and its interval ("" when it has none), for a
    cell that may put the interval under the value."""
    value, lo, hi = v.get("value"), v.get("ci_low"), v.get("ci_high")
    if value is None:
        return "undefined", ""
    if lo is None or hi is None:
        return number(value), ""
    # Interval ends in the value's fixed notation, so they line up with it.
    return number(value), f"[{number(lo, tiny_as_sci=False)}, {number(hi, tiny_as_sci=False)}]"


def exact(v: Any) -> str:
    """The value as written in the results file, for data-* attributes (tests, copy-paste)."""
    return json.dumps(v, ensure_ascii=False)


def plain(v: Any) -> str:
    """Any cell that is neither a number nor an estimate, as readable text."""
    if v is None:
        return "–"
    if isinstance(v, str):
        return v
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
