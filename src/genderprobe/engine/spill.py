"""The spill file: where answers go when the store cannot take them (a full disk).

Answers already paid for must not be lost because the disk under the store
filled up. The store writer then appends them to a JSON-lines file and the
run stops; the next run on the store takes every spill file that names it in
first, before it sends anything, and deletes each file once its answers are
committed.

A spill file goes only where every later run on the store looks, whatever
its ``--out`` and ``$TMPDIR``: in the folder beside the store
(``<store>.spill/``), else in the user's genderprobe cache folder
(``<cache>/spill``), else in ``/var/tmp`` or ``/tmp`` (named as such, not
through ``$TMPDIR``). The folder beside the store keeps a small reserve file
(:data:`RESERVE_BYTES`, made while the disk has room): when the disk is full
the reserve is deleted and its room takes the spill, so the answers stay
beside their store even on a disk with no byte left.

A file's first line names its store; each further line is one answer, with
the store's own columns (``option_logprobs``, ``extra`` and ``request`` as
the JSON text the store keeps).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

FORMAT = "genderprobe-spill/1"
COLUMNS = ("key", "model", "text", "option_logprobs", "prompt_tokens", "completion_tokens", "created", "extra",
           "request")


# Room kept beside the store for the spill file: a few hundred answers (a line is about 1 KB).
RESERVE_BYTES = 256 * 1024
RESERVE_NAME = "room-for-spilled-answers"
# Fixed system folders, named directly: $TMPDIR differs from run to run, these do not.
SYSTEM_FOLDERS = (Path("/var/tmp"), Path("/tmp"))


def beside(store_path: Path) -> Path:
    """The spill folder of a store: ``<store>.spill`` in the store's folder."""
    return store_path.parent / f"{store_path.name}.spill"


def spill_folders(store_path: Path) -> list[Path]:
    """Where a spill file may go, in order: all of them places every run on the store looks."""
    from genderprobe.cache_dir import default_cache_dir

    folders = [beside(store_path), default_cache_dir() / "spill", *SYSTEM_FOLDERS]
    return list(dict.fromkeys(f.resolve() for f in folders))


def look_folders(store_path: Path, also: Iterable[str | os.PathLike[str] | None] = ()) -> list[Path]:
    """Where a run looks for spill files: where they go, and where earlier versions put them
    (the store's own folder, ``--out``, ``$TMPDIR``)."""
    legacy = [store_path.parent, *(Path(f) for f in also if f), Path(tempfile.gettempdir())]
    return list(dict.fromkeys([*spill_folders(store_path), *(f.resolve() for f in legacy)]))


def keep_room(store_path: Path) -> None:
    """Make the reserve beside the store if it is missing; where the disk has no room for it, make none."""
    folder = beside(store_path)
    reserve = folder / RESERVE_NAME
    try:
        if reserve.stat().st_size >= RESERVE_BYTES:
            return
    except OSError:
        pass
    try:
        folder.mkdir(exist_ok=True)
        fd = os.open(reserve, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)
        finally:
            os.close(fd)
    except OSError:  # no room (or a read-only folder): the other spill folders remain
        try:
            reserve.unlink(missing_ok=True)
            folder.rmdir()  # only if empty: a spill file of an earlier run stays
        except OSError:
            pass


def release_room(folder: Path) -> bool:
    """Delete the reserve in ``folder`` (its room takes the spill); False if there is none."""
    try:
        (folder / RESERVE_NAME).unlink()
        return True
    except OSError:
        return False


def _prefix(store_path: Path) -> str:
    digest = hashlib.sha256(str(store_path.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"genderprobe-spill-{digest}-"


class Spill:
    """Appends answers (rows as the store would hold them) to this run's spill file."""

    def __init__(self, store_path: Path, folders: Sequence[Path]):
        self.store_path = store_path.resolve()
        self.folders = list(folders)
        self.path: Path | None = None  # the file being appended to
        self.files: list[Path] = []  # every file this run spilled to
        self.count = 0

    def write(self, rows: Sequence[tuple[Any, ...]]) -> Path:
        """Append ``rows`` and flush them to the disk; raise OSError if no folder takes them."""
        lines = "".join(json.dumps(dict(zip(COLUMNS, (row[0].hex(), *row[1:]))), ensure_ascii=False) + "\n"
                        for row in rows)
        error: OSError | None = None
        candidates = [self.path.parent] if self.path else []
        candidates += [f for f in self.folders if f not in candidates]
        for folder in candidates:
            try:
                try:
                    self._append(folder, lines)
                except OSError:
                    if not release_room(folder):
                        raise
                    self.path = None  # the reserve's room takes a file of its own
                    self._append(folder, lines)
                self.count += len(rows)
                assert self.path is not None
                return self.path
            except OSError as exc:
                error = exc
                self.path = None  # the next folder starts a file of its own (with the lines written here again)
        assert error is not None
        raise error

    def _append(self, folder: Path, lines: str) -> None:
        path = self.path
        new = path is None
        if path is None:
            path = folder / f"{_prefix(self.store_path)}{os.getpid()}-{time.time_ns()}.jsonl"
            header = json.dumps({"format": FORMAT, "store": str(self.store_path)}, ensure_ascii=False) + "\n"
            lines = header + lines
            folder.mkdir(parents=True, exist_ok=True)
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(lines)
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            if new:  # a file cut short before its header was whole would never be read: leave none
                path.unlink(missing_ok=True)
            raise
        self.path = path
        if path not in self.files:
            self.files.append(path)


def take_in(db: sqlite3.Connection, store_path: Path, folders: Sequence[Path]) -> tuple[int, list[Path]]:
    """Insert the answers of every spill file naming this store, in the caller's transaction.

    Returns (answers taken in, the files read): delete the files once the
    transaction is committed. An answer the store already holds is kept as
    the store has it; a line cut short by the full disk is skipped.
    """
    files = sorted({p for folder in folders if folder.is_dir() for p in folder.glob(_prefix(store_path) + "*.jsonl")})
    rows = []
    taken = []
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        if not lines or _header(lines[0]).get("store") != str(store_path.resolve()):
            continue
        for line in lines[1:]:
            try:
                fields = json.loads(line)
                rows.append((bytes.fromhex(fields["key"]), *(fields[c] for c in COLUMNS[1:])))
            except (ValueError, KeyError, TypeError):
                continue
        taken.append(path)
    db.executemany(f"INSERT OR IGNORE INTO responses ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                   rows)
    return len(rows), taken


def _header(line: str) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except ValueError:
        return {}
    return header if isinstance(header, dict) and header.get("format") == FORMAT else {}
