"""A run's files in its ``--out`` folder: results.json, then its records, each whole or not at all.

The folder is made (and checked) before anything is paid for. Results go first
and records after: a failure leaves neither file half-written, nor records
without their results. A file-system failure is one sentence naming the file;
the answers already received are in the store either way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from genderprobe.engine.disk import is_full, out_disk_error
from genderprobe.errors import UserError
from genderprobe.outputs.records import FILE_NAMES as RECORDS_FILES
from genderprobe.outputs.records_parquet import jsonl_to_parquet
from genderprobe.outputs.results import write_json


def check_out_dir(out_dir: Path) -> None:
    """Create the output folder before anything is paid for, or say why it cannot be."""
    if out_dir.exists() and not out_dir.is_dir():  # mkdir would say "File exists" of a file or a device
        raise UserError(f"--out {out_dir} is not a folder; choose a folder (it is made if missing).")
    written(lambda: out_dir.mkdir(parents=True, exist_ok=True), out_dir)
    for name in ("results.json", *RECORDS_FILES.values()):
        if (out_dir / name).is_dir():
            raise UserError(f"{out_dir / name} is a folder; remove it or choose another --out.")


def write_run_files(out_dir: Path, document: dict[str, Any], sink: Any, records_path: Path | None,
                    *, parquet: bool) -> tuple[Path, Path | None, Path | None]:
    """Write results.json and commit the records (and their Parquet copy with ``parquet``); the three paths."""
    results_path = out_dir / "results.json"
    if records_path is not None:
        document["records_file"] = records_path.name
    try:
        written(lambda: write_json(results_path, document), results_path)
        if records_path is not None:
            written(sink.commit, records_path)
    except BaseException:
        if records_path is not None:
            sink.discard()
        raise
    parquet_path = None
    if parquet and records_path is not None:
        parquet_path = records_path.with_suffix(".parquet")
        if parquet_path != records_path:
            written(lambda: jsonl_to_parquet(records_path, parquet_path), parquet_path)
    if records_path is not None:
        _remove_stale_records(records_path, parquet_path)
    return results_path, records_path, parquet_path


def _remove_stale_records(written_now: Path, parquet: Path | None) -> None:
    """Remove the other kind of records file an earlier run left in the folder: it
    belongs to results this run has just replaced, and would be read as this run's."""
    for name in RECORDS_FILES.values():
        other = written_now.parent / name
        if other not in (written_now, parquet):
            written(functools.partial(other.unlink, missing_ok=True), other)


def written(write: Callable[[], Any], path: Path | None) -> Any:
    """Run ``write``, turning a file-system failure into one sentence naming ``path``."""
    try:
        return write()
    except OSError as exc:
        if is_full(exc) and path is not None:
            raise out_disk_error(path, exc) from None
        raise UserError(
            f"Cannot write {path}: {exc.strerror or exc}; choose another --out "
            f"(answers already received are kept in the store)."
        ) from None
