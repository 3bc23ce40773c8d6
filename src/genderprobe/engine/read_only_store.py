"""A response store this user may read and not write: it serves a rerun whose answers it holds.

A store published read-only (a shared folder, another user's cache) cannot
keep new answers, so a run that would send is refused before its first
request, in one sentence: an answer paid for must be kept. A rerun that finds
every answer it needs in the store writes nothing, and is served from it.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from pathlib import Path

from genderprobe.engine.store import Store, _check_schema, _db_error
from genderprobe.errors import UserError


def read_only_to_us(path: Path) -> bool:
    """A store file with answers that this process may read but not write (the file, or its folder for -wal/-shm).

    Not one with a journal or WAL beside it: an immutable look reads the file alone, and would miss
    (or half see) what a writer left there."""
    pending = (path.with_name(path.name + end) for end in ("-journal", "-wal"))
    return (path.is_file() and path.stat().st_size > 0 and os.access(path, os.R_OK)
            and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
            and not any(p.exists() and p.stat().st_size > 0 for p in pending))


class ReadOnlyStore(Store):
    """Opened immutable: SQLite cannot otherwise read a WAL store in a folder where it may not make
    the -shm file. Answers a writer left in its -wal are not seen, so they count as missing."""

    def __init__(self, path: Path):
        self.path, self.timeout, self._made_beside = Path(path), 0.0, []
        self.why = "the file" if os.access(self.path.parent, os.W_OK) else "its folder"
        uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?immutable=1"
        self._db = None
        try:
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            _check_schema(self._db, self.path)
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            raise _db_error(self.path, exc) from None

    def refuse(self, missing: int, needed: int) -> UserError:
        """The run needs answers this store cannot keep: refused before anything is sent."""
        return UserError(
            f"The response store {self.path} cannot be written by this user ({self.why} is read-only) and "
            f"{missing:,} of the {needed:,} answers this run needs are not in it; make it writable or use another "
            f"--cache-dir (a run whose answers are all in it reads them from there)."
        )
