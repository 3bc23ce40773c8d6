"""The response store: one SQLite file (WAL), keyed by what determines an answer.

Key = SHA-256 of (model identity without secrets, generation parameters,
messages, repetition, option-scoring mode). A repeated or resumed run finds
every answer it already paid for and asks the model only for what is missing.
Errors are stored in their own table (kind and message) and never count as
answers, so a rerun asks again for them; so are empty answers.

Beside each answer the store keeps what accounts for it: ``request``, the
request that was sent (messages, parameters, repetition: ``cache export``
shows it), and ``extra``, what the server said about the answer (the model
that answered, its fingerprint, why generation stopped, a reasoning model's
thinking). A cached run reads ``extra`` only: the request can be long.

A store written by a newer schema, a file that is not a store, and a store
locked by another process are reported in one sentence (:class:`UserError`)
and never replaced.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from genderprobe.errors import RunFailed, UserError
from genderprobe.models.base import Request, Response

# 2: responses gained the ``extra`` and ``request`` columns (a version-1 store is upgraded in place).
SCHEMA_VERSION = 2
STORE_FILENAME = "responses.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS responses (
    key BLOB PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT,
    option_logprobs TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    extra TEXT,
    request TEXT
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

# Response fields kept in ``extra`` when set.
_EXTRA_FIELDS = ("reasoning", "served_model", "fingerprint", "finish_reason")

# SQLite's default limit on bound parameters is 999 in old builds.
_CHUNK = 900


def default_cache_dir() -> Path:
    env = os.environ.get("GENDERPROBE_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "genderprobe"


def store_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The store file inside ``cache_dir`` (default: :func:`default_cache_dir`)."""
    return Path(cache_dir).expanduser() / STORE_FILENAME if cache_dir else default_cache_dir() / STORE_FILENAME


def request_key(model_identity: str, request: Request) -> bytes:
    payload = json.dumps(
        {"model": model_identity, **request.cache_identity()},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).digest()


def model_matches(identity: str, spec: str) -> bool:
    """Whether a stored model identity (``openai:m@URL``) belongs to ``spec`` (``openai:m``)."""
    return identity == spec or identity.startswith(spec + "@")


class Store:
    """SQLite response store. Use as a context manager or call :meth:`close`.

    timeout: seconds to wait for a lock held by another process before
        reporting the store as locked.
    create: create the file when it does not exist (``cache info`` does not).
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 10.0, create: bool = True):
        self.path = Path(path)
        if not create and not self.path.exists():
            raise UserError(f"There is no response store at {self.path} yet; a run with caching creates it.")
        self._db: sqlite3.Connection | None = None
        try:
            if self.path.is_dir():
                raise UserError(f"The response store path {self.path} is a folder; pass the folder as --cache-dir instead.")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # The runner writes from a worker thread (so a lock held by another
            # process does not stall its requests), one write at a time.
            self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a commit survives the process being killed (not a power cut).
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._check_schema()
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            raise _db_error(self.path, exc) from None
        except OSError as exc:
            self._close_quietly()
            raise UserError(f"Cannot open the response store {self.path}: {exc.strerror or exc}.") from None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the store is closed")
        return self._db

    def _check_schema(self) -> None:
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "meta" not in tables:
            raise UserError(
                f"The file {self.path} is an SQLite database but not a genderprobe response store; "
                f"move it aside or use another --cache-dir."
            )
        row = None
        if "meta" in tables:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self.db.executescript(_SCHEMA)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            return
        try:
            version = int(row[0])
        except ValueError:
            version = -1
        if version == 1:
            self._upgrade_from_1()
            return
        if version > SCHEMA_VERSION:
            raise UserError(
                f"The response store {self.path} was written by a newer genderprobe "
                f"(schema {row[0]}, this one reads {SCHEMA_VERSION}); upgrade genderprobe "
                f"or use another --cache-dir."
            )
        if version < 1:
            raise UserError(
                f"The response store {self.path} has an unknown schema version {row[0]!r}; "
                f"move it aside or use another --cache-dir."
            )

    def _upgrade_from_1(self) -> None:
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            columns = {r[1] for r in self.db.execute("PRAGMA table_info(responses)")}
            for column in ("extra", "request"):
                if column not in columns:
                    self.db.execute(f"ALTER TABLE responses ADD COLUMN {column} TEXT")
            self.db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))

    def check_writable(self) -> None:
        """Write and commit once, so a store that cannot keep answers is found before any is paid for.

        A store locked by another process raises :class:`RunFailed` (try again
        later); a read-only one :class:`UserError` (fix the permissions or the folder).
        """
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('last_write_check', ?)", (repr(time.time()),))
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.path, exc) from None

    # -- answers ------------------------------------------------------------------

    def get_many(self, keys: Sequence[bytes], *, max_age: float | None = None) -> dict[bytes, Response]:
        """The stored answers among ``keys``; with ``max_age`` (seconds), only those younger than that."""
        found: dict[bytes, Response] = {}
        young_only = "" if max_age is None else " AND created >= ?"
        since = () if max_age is None else (time.time() - max_age,)
        try:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self.db.execute(
                    "SELECT key, text, option_logprobs, prompt_tokens, completion_tokens, extra "
                    f"FROM responses WHERE key IN ({marks}){young_only}",
                    (*chunk, *since),
                )
                for key, text, logprobs, pt, ct, extra in rows:
                    r = Response(
                        text=text,
                        option_logprobs=_load_logprobs(logprobs),
                        prompt_tokens=pt,
                        completion_tokens=ct,
                        cached=True,
                    )
                    if extra:
                        fields = json.loads(extra)
                        for name in _EXTRA_FIELDS:
                            setattr(r, name, fields.get(name))
                    found[key] = r
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.path, exc) from None
        return found

    def put_many(
        self,
        model: str,
        items: Iterable[tuple[bytes, Response]],
        requests: Mapping[bytes, Request] | None = None,
    ) -> None:
        """Store answers and errors in one transaction (durable on return).

        requests: the request behind each key, kept beside its answer.
        """
        now = time.time()
        answers, errors = [], []
        for key, r in items:
            if r.ok:
                logprobs = _dump_logprobs(r.option_logprobs)
                asked = requests.get(key) if requests else None
                answers.append((key, model, r.text, logprobs, r.prompt_tokens, r.completion_tokens, now,
                                _dump_extra(r), _dump_json(asked.cache_identity()) if asked else None))
            else:
                errors.append((key, model, r.error_kind, r.error_message or "", now))
        if not answers and not errors:
            return
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany(
                    "INSERT OR REPLACE INTO responses (key, model, text, option_logprobs, prompt_tokens, "
                    "completion_tokens, created, extra, request) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    answers,
                )
                self.db.executemany("INSERT INTO errors VALUES (?, ?, ?, ?, ?)", errors)
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.path, exc) from None

    # -- maintenance (``genderprobe cache``) ---------------------------------------

    def info(self) -> dict[str, Any]:
        try:
            count = self.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            errors = self.db.execute("SELECT COUNT(*) FROM errors").fetchone()[0]
            models = self.db.execute(
                "SELECT model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), MIN(created), MAX(created) "
                "FROM responses GROUP BY model ORDER BY model"
            ).fetchall()
            error_kinds = self.db.execute(
                "SELECT kind, COUNT(*) FROM errors GROUP BY kind ORDER BY COUNT(*) DESC"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.path, exc) from None
        size = sum(p.stat().st_size for p in _store_files(self.path) if p.exists())
        return {
            "path": str(self.path),
            "schema": SCHEMA_VERSION,
            "responses": count,
            "errors": errors,
            "error_kinds": dict(error_kinds),
            "bytes": size,
            "models": [
                {
                    "model": m,
                    "responses": n,
                    "prompt_tokens": pt or 0,
                    "completion_tokens": ct or 0,
                    "first": first,
                    "last": last,
                }
                for m, n, pt, ct, first, last in models
            ],
        }

    def clear(self, model: str | None = None) -> tuple[int, int]:
        """Delete the answers and errors of ``model`` (a spec or identity; None: all).

        Returns (answers deleted, errors deleted).
        """
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                if model is None:
                    answers = self.db.execute("DELETE FROM responses").rowcount
                    errors = self.db.execute("DELETE FROM errors").rowcount
                else:
                    pattern = _like_prefix(model + "@")
                    where = "model = ? OR model LIKE ? ESCAPE '\\'"
                    answers = self.db.execute(f"DELETE FROM responses WHERE {where}", (model, pattern)).rowcount
                    errors = self.db.execute(f"DELETE FROM errors WHERE {where}", (model, pattern)).rowcount
            self.db.execute("VACUUM")
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.path, exc) from None
        return answers, errors

    def iter_answers(self, model: str | None = None) -> Iterator[dict[str, Any]]:
        """Every stored answer as a JSON-able dict, oldest first."""
        sql = (
            "SELECT key, model, text, option_logprobs, prompt_tokens, completion_tokens, created, extra, request "
            "FROM responses"
        )
        args: tuple[str, ...] = ()
        if model is not None:
            sql += " WHERE model = ? OR model LIKE ? ESCAPE '\\'"
            args = (model, _like_prefix(model + "@"))
        try:
            for key, m, text, logprobs, pt, ct, created, extra, request in self.db.execute(
                sql + " ORDER BY created, key", args
            ):
                row: dict[str, Any] = {
                    "key": key.hex(),
                    "model": m,
                    "text": text,
                    "prompt_tokens": pt,
                    "completion_tokens": ct,
                    "created": created,
                }
                if logprobs:
                    row["option_logprobs"] = json.loads(logprobs)
                if extra:
                    row.update(json.loads(extra))
                if request:
                    row["request"] = json.loads(request)
                yield row
        except sqlite3.DatabaseError as exc:
            raise _db_error(self.path, exc) from None

    def export_jsonl(self, out: TextIO, model: str | None = None) -> int:
        """Write every stored answer as one JSON line; returns the count."""
        n = 0
        for row in self.iter_answers(model):
            out.write(json.dumps(row, ensure_ascii=False))
            out.write("\n")
            n += 1
        return n

    # -- lifetime -----------------------------------------------------------------

    def close(self) -> None:
        self._close_quietly()

    def _close_quietly(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            finally:
                self._db = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _dump_logprobs(values: tuple[float, ...] | None) -> str | None:
    if values is None:
        return None
    # JSON has no -inf: an option absent from the top log-probs is stored as null.
    return json.dumps([v if v != float("-inf") else None for v in values])


def _dump_extra(r: Response) -> str | None:
    fields = {name: getattr(r, name) for name in _EXTRA_FIELDS if getattr(r, name) is not None}
    return _dump_json(fields) if fields else None


def _dump_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _load_logprobs(text: str | None) -> tuple[float, ...] | None:
    if not text:
        return None
    return tuple(float("-inf") if v is None else float(v) for v in json.loads(text))


def _like_prefix(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def _store_files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _db_error(path: Path, exc: sqlite3.DatabaseError) -> UserError:
    """A locked store is worth trying again later (:class:`RunFailed`); anything else is for the user to fix."""
    text = str(exc)
    cls = RunFailed if "locked" in text or "busy" in text else UserError
    return cls(_describe_db_error(path, exc))


def _describe_db_error(path: Path, exc: sqlite3.DatabaseError) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return (
            f"The response store {path} is locked by another process; "
            f"wait for it to finish or use another --cache-dir."
        )
    if "unable to open" in text or "readonly" in text:
        return f"Cannot open the response store {path} for writing ({text}); check the folder's permissions or use another --cache-dir."
    return (
        f"The response store {path} is not a readable genderprobe store ({text}); "
        f"move it aside or use another --cache-dir."
    )
