"""Keep secrets out of reports even if one slipped into a results file."""

from __future__ import annotations

import re
from typing import Any

REDACTED = "(redacted)"
_SECRET_KEY = re.compile(r"(^|[_-])(api[_-]?key|key|secret|password|passwd|token|authorization|auth|bearer)$", re.I)
_SECRET_VALUE = re.compile(r"\b(sk-[A-Za-z0-9_-]{12,}|sk-ant-[A-Za-z0-9_-]{12,}|Bearer\s+\S{8,})")


def redact(value: Any, key: str = "") -> Any:
    """A copy with string values under secret-looking keys, and key-shaped strings, replaced."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        if _SECRET_KEY.search(key) and value:
            return REDACTED
        return _SECRET_VALUE.sub(REDACTED, value)
    return value
