"""Access to packaged data files, with one clear sentence when one is broken."""

from __future__ import annotations

import csv
import io
import json
from importlib import resources
from typing import Any

from genderprobe.errors import UserError


def data_text(relpath: str) -> str:
    """The text of ``genderprobe/data/<relpath>``."""
    try:
        return (resources.files("genderprobe") / "data" / relpath).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"The packaged data file {relpath} is missing; reinstall genderprobe.") from None
    except UnicodeDecodeError:
        raise UserError(f"The packaged data file {relpath} is not UTF-8 text; reinstall genderprobe.") from None


def read_csv(relpath: str, required: tuple[str, ...]) -> list[dict[str, str]]:
    """Rows of a packaged CSV file, checking that the ``required`` columns exist."""
    try:
        reader = csv.DictReader(io.StringIO(data_text(relpath)))
        rows = list(reader)
    except csv.Error as exc:
        raise UserError(f"The packaged data file {relpath} is not valid CSV ({exc}).") from None
    missing = [c for c in required if c not in (reader.fieldnames or [])]
    if missing:
        raise UserError(f"The data file {relpath} lacks the column(s) {', '.join(missing)}.")
    return rows


def read_json(relpath: str) -> Any:
    try:
        return json.loads(data_text(relpath))
    except json.JSONDecodeError as exc:
        raise UserError(f"The packaged data file {relpath} is not valid JSON (line {exc.lineno}).") from None
