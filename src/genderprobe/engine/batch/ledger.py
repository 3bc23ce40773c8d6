"""The batch ledger: one table in the response store that remembers every batch paid for.

A row is written before the provider is asked to create a batch and updated
as soon as its id is known, so a run killed at any point leaves enough behind
for the next run to find the batch again instead of paying for it twice.

Row states:

- ``submitting``: the keys (and for OpenAI the uploaded input file) are
  recorded, the batch id is not: a create call may or may not have reached
  the provider.
- ``live``: the batch id is known; poll it and read its results.
- ``done``: finished and every answer it held is in the store.
- ``ended``: expired, cancelled, failed, gone or abandoned; never polled again.

The custom_id of each request in a batch is its store key in hex, so results
carry their own key and can never be matched to the wrong request.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from genderprobe.engine.disk import disk_sentence
from genderprobe.engine.store import Store, is_disk_failure
from genderprobe.errors import RunFailed

KEY_BYTES = 32  # a store key is a SHA-256 digest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    submission TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    input_file_id TEXT,
    batch_id TEXT,
    status TEXT NOT NULL,
    provider_status TEXT,
    n INTEGER NOT NULL,
    keys BLOB NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS batches_model ON batches (model, status);
"""

OPEN = ("submitting", "live")


@dataclass
class BatchRow:
    submission: str
    provider: str
    model: str
    keys: list[bytes]
    input_file_id: str | None = None
    batch_id: str | None = None
    status: str = "submitting"
    created: float = 0.0


def custom_id(key: bytes) -> str:
    return key.hex()


def key_of(custom: object) -> bytes | None:
    """The store key a custom_id names, or None for one genderprobe did not write."""
    if not isinstance(custom, str) or len(custom) != 2 * KEY_BYTES:
        return None
    try:
        return bytes.fromhex(custom)
    except ValueError:
        return None


class Ledger:
    def __init__(self, store: Store):
        self.store = store
        self._guard(lambda: store.db.executescript(_SCHEMA), "write")

    def open_rows(self, provider: str, model: str) -> list[BatchRow]:
        """Batches of this model not yet finished, oldest first."""
        rows = self._read(
            "SELECT submission, provider, model, keys, input_file_id, batch_id, status, created "
            "FROM batches WHERE provider = ? AND model = ? AND status IN (?, ?) ORDER BY created",
            (provider, model, *OPEN),
        )
        return [BatchRow(s, p, m, _split(k), f, b, st, c) for s, p, m, k, f, b, st, c in rows]

    def known_batch_ids(self, provider: str) -> set[str]:
        sql = "SELECT batch_id FROM batches WHERE provider = ? AND batch_id IS NOT NULL"
        return {r[0] for r in self._read(sql, (provider,))}

    def add(self, provider: str, model: str, keys: list[bytes], file_id: str | None) -> BatchRow:
        """Record a batch about to be created (its keys, and its input file for OpenAI)."""
        now = time.time()
        row = BatchRow(
            f"gp-{uuid.uuid4().hex}", provider, model, keys, file_id, None, "submitting", now
        )
        self._write(
            "INSERT INTO batches (submission, provider, model, input_file_id, batch_id, status, n, "
            "keys, created, updated) VALUES (?, ?, ?, ?, NULL, 'submitting', ?, ?, ?, ?)",
            (row.submission, provider, model, file_id, len(keys), b"".join(keys), now, now),
        )
        return row

    def set_batch_id(self, row: BatchRow, batch_id: str) -> None:
        row.batch_id, row.status = batch_id, "live"
        self._write(
            "UPDATE batches SET batch_id = ?, status = 'live', updated = ? WHERE submission = ?",
            (batch_id, time.time(), row.submission),
        )

    def set_status(self, row: BatchRow, status: str, provider_status: str | None = None) -> None:
        row.status = status
        self._write(
            "UPDATE batches SET status = ?, provider_status = COALESCE(?, provider_status), "
            "updated = ? WHERE submission = ?",
            (status, provider_status, time.time(), row.submission),
        )

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._guard(lambda: self.store.db.execute(sql, params).fetchall(), "read")

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        # Each statement commits at once (the store runs in autocommit mode): a
        # batch id must be durable before anything else happens.
        self._guard(lambda: self.store.db.execute(sql, params), "write")

    def _guard(self, action: Callable[[], Any], verb: str) -> Any:
        try:
            return action()
        except sqlite3.DatabaseError as exc:
            if is_disk_failure(exc):  # a full disk, not a busy store: say which and what to do
                why, then = disk_sentence(self.store.path, exc), "free some space and run again"
            else:
                why, then = str(exc), "run again once the store is free"
            raise RunFailed(
                f"Cannot {verb} the batch ledger in {self.store.path}: {why}; {then} (every batch created "
                f"is found again by the next run, never paid for twice)."
            ) from None


def _split(blob: bytes) -> list[bytes]:
    return [blob[i : i + KEY_BYTES] for i in range(0, len(blob), KEY_BYTES)]
