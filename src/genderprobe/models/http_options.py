"""What a user may add to every request of an HTTP backend: body fields and headers.

Checked where they are given (the configuration file's [model.body] and
[model.headers], a model spec's options) and again where a backend takes them.
Each check returns None for a good value, else what is wrong, as a clause.
"""

from __future__ import annotations

import json
import re
from typing import Any

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token (RFC 9110)

# Request fields genderprobe sets itself: [model.body] may add fields, not replace these.
# Sampling settings have their own keys in [generation] and their own flags.
RESERVED_BODY_FIELDS = (
    "model", "messages", "system", "stream", "n",
    "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "reasoning_effort",
)


def check_body(v: Any) -> str | None:
    """[model.body]: extra request fields sent as JSON with every request."""
    if not isinstance(v, dict):
        return "must be a table of request fields, such as [model.body] with top_k = 40"
    for name, value in v.items():
        if name in RESERVED_BODY_FIELDS:
            return f"must not set {name}, which genderprobe sets itself (sampling settings go in [generation])"
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            return f"gives {name} a value JSON cannot carry (a date, a time, nan or inf)"
    return None


def check_header_name(v: Any) -> str | None:
    return None if isinstance(v, str) and _HEADER_NAME.fullmatch(v) else "must be an HTTP header name such as api-key"


def check_headers(v: Any) -> str | None:
    """[model.headers]: extra HTTP headers. Their values may be secrets: a problem never quotes one."""
    if not isinstance(v, dict):
        return 'must be a table of HTTP headers, such as [model.headers] with X-Title = "genderprobe"'
    for name, value in v.items():
        if check_header_name(name):
            return f"names {name!r}, which is not a valid HTTP header name"
        if not isinstance(value, str) or "\r" in value or "\n" in value:
            return f"must give the header {name} a one-line text value"
    return None
