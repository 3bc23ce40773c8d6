"""Writing results: the results JSON and the per-attempt records (JSONL).

Both are written to a temporary file beside the target and renamed into place
only when complete, so a failed or interrupted run never leaves a half-written
result file.
"""

from __future__ import annotations

import glob
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import orjson


def to_jsonable(value: Any) -> Any:
    """numpy scalars and arrays to plain Python; NaN/inf to None."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        f = float(value)
        return None if f != f or f in (float("inf"), float("-inf")) else f
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Path):
        return str(value)
    return value


def temp_beside(path: Path) -> tuple[int, str]:
    """A hidden temporary file beside ``path`` (fd, name), to be renamed onto it.

    mkstemp makes it readable by its owner only; the final file gets the
    permissions any new file would (0666 less the umask), so a shared results
    folder stays readable.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_orphaned_temporaries(path)
    # The writer's process id is in the name, so a later run can tell the
    # leftovers of a killed writer (SIGKILL leaves no chance to clean up).
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)
    except BaseException:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    return fd, tmp


def remove_orphaned_temporaries(path: Path) -> None:
    """Delete temporaries of ``path`` left by writers that no longer run."""
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*"):
        pid = tmp.name[len(path.name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and not _process_alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but another user's
        return True
    return True


def atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = temp_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_line(record: dict[str, Any]) -> bytes:
    """One record as a line of JSON (UTF-8), NaN and infinities as null, numpy values as plain ones.

    orjson writes a record four times faster than json, which is most of what keeping records costs;
    a record it cannot write as it is (numpy values, keys that are not text, text that is not valid
    UTF-8) is made plain first and written by json, escaped to ASCII so it still reads back.
    """
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # orjson.JSONEncodeError
        return (json.dumps(to_jsonable(record)) + "\n").encode("ascii")


def write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(to_jsonable(data), indent=2, ensure_ascii=False) + "\n")


class JsonlSink:
    """Per-attempt records, streamed to a hidden temporary file.

    :meth:`commit` renames it to its final name; :meth:`discard` removes it.
    """

    def __init__(self, path: Path):
        self.path = path
        fd, self._tmp = temp_beside(path)
        self._file = os.fdopen(fd, "wb")
        self.count = 0

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json_line(record))
        self.count += 1

    def commit(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self._tmp, self.path)

    def discard(self) -> None:
        if not self._file.closed:
            try:
                self._file.close()
            except OSError:  # a full disk: the buffered lines cannot be written, and are not wanted
                pass
        Path(self._tmp).unlink(missing_ok=True)


def load_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a results JSON written by :func:`write_json`, with a clear error."""
    from genderprobe.errors import UserError

    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"Results file {p} does not exist.") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(f"Results file {p} is not valid JSON; pass a results.json written by 'genderprobe run'.") from None
    if not isinstance(data, dict) or "probe" not in data or "metrics" not in data:
        raise UserError(f"{p} is not a genderprobe results file (it has no 'probe' and 'metrics').")
    return data
