"""The response store: one SQLite file (WAL), keyed by what determines an answer.

Key = SHA-256 of (model identity without secrets, generation parameters,
messages, repetition, option-scoring mode). A repeated or resumed run finds
every answer it already paid for and asks the model only for what is missing.
Errors are stored in their own table (kind and message) and never count as
answers, so a rerun asks again for them.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from genderprobe.errors import UserError
from genderprobe.models.base import Request, Response

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS responses (
    key BLOB PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT,
    option_logprobs TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS errors (
    key BLOB NOT NULL,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS errors_key ON errors (key);
"""


def default_cache_dir() -> Path:
    env = os.environ.get("GENDERPROBE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "genderprobe"


def request_key(model_identity: str, request: Request) -> bytes:
    payload = json.dumps(
        {"model": model_identity, **request.cache_identity()},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).digest()


class Store:
    """SQLite response store. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            raise UserError(_describe_db_error(self.path, exc)) from None
        except OSError as exc:
            raise UserError(f"Cannot open the response store {self.path}: {exc.strerror}.") from None

    def _check_schema(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self._db.execute(
                "INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        elif int(row[0]) > SCHEMA_VERSION:
            raise UserError(
                f"The response store {self.path} was written by a newer genderprobe "
                f"(schema {row[0]}, this one reads {SCHEMA_VERSION}); upgrade genderprobe "
                f"or use another --cache-dir."
            )

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, Response]:
        found: dict[bytes, Response] = {}
        for start in range(0, len(keys), 900):
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT key, text, option_logprobs, prompt_tokens, completion_tokens "
                f"FROM responses WHERE key IN ({marks})",
                chunk,
            )
            for key, text, logprobs, pt, ct in rows:
                found[key] = Response(
                    text=text,
                    option_logprobs=tuple(json.loads(logprobs)) if logprobs else None,
                    prompt_tokens=pt,
                    completion_tokens=ct,
                    cached=True,
                )
        return found

    def put_many(self, model: str, items: Iterable[tuple[bytes, Response]]) -> None:
        """Store answers and errors in one transaction (durable on return)."""
        now = time.time()
        answers, errors = [], []
        for key, r in items:
            if r.ok:
                logprobs = json.dumps(list(r.option_logprobs)) if r.option_logprobs else None
                answers.append((key, model, r.text, logprobs, r.prompt_tokens, r.completion_tokens, now))
            else:
                errors.append((key, model, r.error_kind, r.error_message or "", now))
        if not answers and not errors:
            return
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)", answers
            )
            self._db.executemany("INSERT INTO errors VALUES (?, ?, ?, ?, ?)", errors)

    def info(self) -> dict[str, object]:
        count = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        errors = self._db.execute("SELECT COUNT(*) FROM errors").fetchone()[0]
        models = self._db.execute(
            "SELECT model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens) "
            "FROM responses GROUP BY model ORDER BY model"
        ).fetchall()
        return {
            "path": str(self.path),
            "responses": count,
            "errors": errors,
            "bytes": self.path.stat().st_size if self.path.exists() else 0,
            "models": [
                {"model": m, "responses": n, "prompt_tokens": pt or 0, "completion_tokens": ct or 0}
                for m, n, pt, ct in models
            ],
        }

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _describe_db_error(path: Path, exc: sqlite3.DatabaseError) -> str:
    text = str(exc)
    if "locked" in text:
        return f"The response store {path} is locked by another process; wait for it or use another --cache-dir."
    return (
        f"The response store {path} is not a readable genderprobe store ({text}); "
        f"move it aside or use another --cache-dir."
    )
