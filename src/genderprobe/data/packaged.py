"""Packaged data files, by key, with one clear sentence when one is broken.

A key is ``<prefix>/<path>``: ``names/levy_names.csv`` lies in the shared
folder ``genderprobe/data``, ``demet/final_gpt4_scenarios.csv`` in the DeMET
study's ``data`` folder (its prefix, see :mod:`genderprobe.registry`). The
keys are the names results record each file's version under, the same
before and after the studies moved into folders of their own.
"""

from __future__ import annotations

import csv
import io
import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from genderprobe.errors import UserError
from genderprobe.registry import study_data_folders

SHARED = "genderprobe"  # the package whose data folder holds what several studies use


# The keys this process has read: a superset of what its runs drew on, so an export can ship the licences of
# that data (genderprobe.outputs.hf_dataset) rather than all of them.
_READ: set[str] = set()


def keys_read() -> frozenset[str]:
    return frozenset(_READ)


def data_file(key: str) -> Traversable:
    """The packaged file named ``key``."""
    _READ.add(key)
    prefix, _, rest = key.partition("/")
    folder = study_data_folders().get(prefix)
    if folder is not None:
        return folder.joinpath(*rest.split("/"))
    return resources.files(SHARED).joinpath("data", *key.split("/"))


def all_data_files() -> dict[str, Traversable]:
    """Key -> file of every packaged data file, in key order (path part by part)."""
    found: dict[str, Traversable] = {}

    def walk(folder: Traversable, prefix: str) -> None:
        for item in folder.iterdir():
            key = f"{prefix}{item.name}"
            if item.name == "__pycache__" or item.name.endswith(".py"):
                continue  # genderprobe/data also holds the code that reads it (this module)
            if item.is_dir():
                walk(item, key + "/")
            elif item.is_file():
                found[key] = item

    walk(resources.files(SHARED) / "data", "")
    for prefix, folder in study_data_folders().items():
        walk(folder, prefix + "/")
    return {k: found[k] for k in sorted(found, key=lambda k: k.split("/"))}


def data_text(relpath: str) -> str:
    """The text of the packaged file ``relpath`` (a key)."""
    try:
        return data_file(relpath).read_text(encoding="utf-8")
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
