"""The response store: one SQLite file (WAL), keyed by what determines an answer.

Key = SHA-256 of (model identity without secrets, generation parameters,
messages, repetition, option-scoring mode). A repeated or resumed run finds
every answer it already paid for and asks the model only for what is missing.
Errors are stored in their own table (kind and message) and never count as
answers, so a rerun asks again for them; so are empty answers, once (see
:mod:`genderprobe.engine.empty_answers`).

Beside each answer the store keeps what accounts for it: ``request``, the
request that was sent (messages, parameters, repetition: ``cache export``
shows it), and ``extra``, what the server said about the answer (the model
that answered, its fingerprint, why generation stopped, a reasoning model's
thinking). A cached run reads ``extra`` only: the request can be long.

Look before writing: a file that already exists is first opened read-only
and checked (SQLite's quick_check, then the schema), so a file written by a
newer schema, a corrupt store, another application's SQLite file or a store
locked by another process is reported in one sentence (:class:`UserError`)
and its bytes are left exactly as they were: no WAL switch, no page written.

The ``claims`` table holds the prompts runs are asking at the moment (see
:mod:`genderprobe.engine.claims`), so that a second process waits for an answer
instead of paying for it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from genderprobe.cache_dir import default_cache_dir
from genderprobe.engine.disk import disk_sentence
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
CREATE TABLE IF NOT EXISTS claims (
    key BLOB PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires REAL NOT NULL
) WITHOUT ROWID;
"""

# The tables a store holds (the batch ledger adds ``batches``).
_STORE_TABLES = {"meta", "responses", "errors", "claims"}

# Response fields kept in ``extra`` when set.
_EXTRA_FIELDS = ("reasoning", "served_model", "fingerprint", "finish_reason", "cut_from")

# SQLite's default limit on bound parameters is 999 in old builds.
_CHUNK = 900




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


def request_keys(model_identity: str, requests: Sequence[Request]) -> list[bytes]:
    """The keys of ``requests``; text that is not valid Unicode (a lone surrogate) is one sentence."""
    try:
        return [request_key(model_identity, r) for r in requests]
    except UnicodeEncodeError:
        raise UserError(
            "A prompt or parameter holds text that is not valid Unicode (a lone surrogate, as a "
            "command-line argument that is not UTF-8 becomes); pass it as UTF-8 text."
        ) from None


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
        self.timeout = timeout
        if not create and not self.path.exists():
            raise UserError(f"There is no response store at {self.path} yet; a run with caching creates it.")
        self._db: sqlite3.Connection | None = None
        # The -wal and -shm files this store's opening makes: removed again if it fails.
        self._made_beside = [p for p in _store_files(self.path)[1:] if not p.exists()]
        try:
            if self.path.is_dir():
                raise UserError(f"The response store path {self.path} is a folder; pass the folder as --cache-dir instead.")
            if self.path.exists() and not self.path.is_file():
                raise UserError(
                    f"The response store {self.path} is not a file but leads to {self.path.resolve()}, a device "
                    f"or other special file that keeps nothing; remove it or use another --cache-dir."
                )
            if self.path.exists() and self.path.stat().st_size > 0:
                inspect_read_only(self.path, timeout)  # before anything is written to it
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # The runner reads here and writes through a connection of its own
            # (genderprobe.engine.store_writer), from a worker thread.
            self._open_and_prepare()
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            self._remove_made_beside(exc)
            raise _db_error(self.path, exc) from None
        except OSError as exc:
            self._close_quietly()
            raise UserError(f"Cannot open the response store {self.path}: {exc.strerror or exc}.") from None

    def _open_and_prepare(self) -> None:
        """Connect and create or upgrade the tables, trying again while another process holds the file.

        Two runs opening a new store at once meet where SQLite's own wait does not
        apply: switching the file to WAL, or a read turning into a write while the
        other writes, is refused at once (SQLite avoids a deadlock that way) rather
        than after ``timeout``. Such a refusal is waited out here, up to ``timeout``.
        """
        deadline = time.monotonic() + self.timeout
        pause = 0.02
        while True:
            try:
                self._db = self.connect()
                self._prepare()
                return
            except sqlite3.DatabaseError as exc:
                self._close_quietly()
                if not is_locked(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def connect(self) -> sqlite3.Connection:
        """A connection in autocommit mode, WAL, that waits ``timeout`` seconds for another process's lock."""
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a commit survives the process being killed (not a power cut).
            db.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            db.close()
            raise
        return db

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the store is closed")
        return self._db

    def _prepare(self) -> None:
        """Create the tables a new store needs, and bring a version-1 store up to date."""
        row = None
        tables = _tables(self.db)
        if "meta" in tables:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None and _version(row[0]) == 1:
            self._upgrade_from_1()
        if not _STORE_TABLES <= tables or row is None:
            # One transaction: another process opening the store meanwhile sees no tables or all of
            # them with their version, never the tables without the version (an "unknown schema").
            self.db.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}INSERT OR IGNORE INTO meta VALUES "
                                  f"('schema_version', '{SCHEMA_VERSION}');COMMIT;")

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
            self._close_quietly()
            self._remove_made_beside(exc)
            raise _db_error(self.path, exc) from None

    def _remove_made_beside(self, exc: sqlite3.DatabaseError) -> None:
        """After a failed opening (a read-only or immutable store): remove the empty -wal and the -shm
        it made, which would only sit beside the store. Not while another process holds the store."""
        if is_locked(exc):
            return
        for p in self._made_beside:
            try:
                if p.stat().st_size == 0 or p.name.endswith("-shm"):
                    p.unlink()
            except OSError:
                pass

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

    def empty_answers(self, keys: Sequence[bytes], *, max_age: float | None = None) -> dict[bytes, tuple[int, str]]:
        """For each of ``keys`` that came back empty: how many times (the errors table keeps one row
        per empty answer) and the latest reason; with ``max_age``, only empty answers younger than that."""
        found: dict[bytes, tuple[int, str]] = {}
        young_only = "" if max_age is None else " AND created >= ?"
        since = () if max_age is None else (time.time() - max_age,)
        try:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                # SQLite takes the bare column (message) from the row holding MAX(created): the latest reason.
                rows = self.db.execute(
                    "SELECT key, COUNT(*), message, MAX(created) FROM errors "
                    f"WHERE kind = 'empty' AND key IN ({marks}){young_only} GROUP BY key",
                    (*chunk, *since),
                )
                for key, n, message, _ in rows:
                    found[key] = (n, message)
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
        rows = Rows()
        for key, r in items:
            rows.add(model, key, r, requests.get(key) if requests else None)
        if not rows:
            return
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                rows.insert(self.db)
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


class Rows:
    """Answers and errors ready to insert, one transaction's worth."""

    def __init__(self) -> None:
        self.answers: list[tuple[Any, ...]] = []
        self.errors: list[tuple[Any, ...]] = []

    def __len__(self) -> int:
        return len(self.answers) + len(self.errors)

    def add(self, model: str, key: bytes, r: Response, asked: Request | None, created: float | None = None) -> None:
        now = time.time() if created is None else created
        if r.ok:
            self.answers.append((key, model, r.text, _dump_logprobs(r.option_logprobs), r.prompt_tokens,
                                 r.completion_tokens, now, _dump_extra(r),
                                 _dump_json(asked.cache_identity()) if asked else None))
        else:
            self.errors.append((key, model, r.error_kind, r.error_message or "", now))

    def insert(self, db: sqlite3.Connection) -> None:
        """Insert inside the caller's transaction."""
        db.executemany(
            "INSERT OR REPLACE INTO responses (key, model, text, option_logprobs, prompt_tokens, "
            "completion_tokens, created, extra, request) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.answers,
        )
        db.executemany("INSERT INTO errors VALUES (?, ?, ?, ?, ?)", self.errors)


def inspect_read_only(path: Path, timeout: float, *, recovered: bool = False) -> None:
    """Refuse, in one sentence and without writing a byte to it, a file that is not a sound store.

    The file is opened read-only: SQLite's quick_check must pass and the schema
    must be a genderprobe store's (or empty). The ``-wal`` and ``-shm`` files a
    read-only look may leave beside a refused file are removed again. A store
    whose writer was killed mid-write (a hot journal, a WAL index to rebuild)
    gets SQLite's own recovery first, which a read-only look may not run.
    """
    leftovers = [p for p in _store_files(path)[1:] if not p.exists()]
    uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
    refused = True
    try:
        db = sqlite3.connect(uri, uri=True, timeout=timeout)
        try:
            try:
                damage = db.execute("PRAGMA quick_check(1)").fetchone()
            except sqlite3.OperationalError as exc:
                if recovered or getattr(exc, "sqlite_errorname", "") not in _NEEDS_RECOVERY:
                    raise
                db.close()
                _recover(path, timeout)
                refused = False
                return inspect_read_only(path, timeout, recovered=True)
            if damage is None or damage[0] != "ok":
                said = " ".join(str(damage[0] if damage else "?").replace("*", "").split())
                raise UserError(
                    f"The response store {path} is damaged (SQLite's check says: {said}); "
                    f"it was left as it is: move it aside or use another --cache-dir."
                )
            _check_schema(db, path)
            refused = False
        finally:
            db.close()
    finally:
        if refused:
            for p in leftovers:
                if p.exists() and (p.stat().st_size == 0 or p.name.endswith("-shm")):
                    p.unlink(missing_ok=True)


# What a read-only connection finds after a writer was killed mid-write, and may not repair itself.
_NEEDS_RECOVERY = ("SQLITE_READONLY_ROLLBACK", "SQLITE_READONLY_RECOVERY")


def _recover(path: Path, timeout: float) -> None:
    """Let SQLite roll back the hot journal (or rebuild the WAL index) a killed writer left: any read does."""
    db = sqlite3.connect(path, timeout=timeout)
    try:
        db.execute("PRAGMA schema_version").fetchone()
    finally:
        db.close()


def _check_schema(db: sqlite3.Connection, path: Path) -> None:
    tables = _tables(db)
    if not tables:
        return  # an empty database: it becomes a store
    if not {"meta", "responses"} <= tables:
        raise UserError(
            f"The file {path} is an SQLite database but not a genderprobe response store; "
            f"it was left as it is: move it aside or use another --cache-dir."
        )
    row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    version = _version(row[0]) if row else -1
    if version > SCHEMA_VERSION:
        raise UserError(
            f"The response store {path} was written by a newer genderprobe "
            f"(schema {row[0]}, this one reads {SCHEMA_VERSION}); upgrade genderprobe "
            f"or use another --cache-dir."
        )
    if version < 1:
        shown = repr(row[0]) if row else "(none)"
        raise UserError(
            f"The response store {path} has an unknown schema version {shown}; "
            f"move it aside or use another --cache-dir."
        )


def _tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _version(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


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
    """A locked store or a full disk is worth trying again later (:class:`RunFailed`); anything else is for the user to fix."""
    cls = RunFailed if is_locked(exc) or is_disk_failure(exc) else UserError
    return cls(_describe_db_error(path, exc))


def is_locked(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def is_disk_failure(exc: sqlite3.DatabaseError) -> bool:
    """The disk refused a write (full, a file-size or quota limit, an I/O error): the store itself may be sound."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name == "SQLITE_FULL" or (name.startswith("SQLITE_IOERR") and "READ" not in name)


def _describe_db_error(path: Path, exc: sqlite3.DatabaseError) -> str:
    text = str(exc)
    if is_locked(exc):
        return (
            f"The response store {path} is locked by another process; "
            f"wait for it to finish or use another --cache-dir."
        )
    if is_disk_failure(exc):
        return (
            f"The response store {path} could not be written: {disk_sentence(path, exc)}; "
            f"the store itself is sound: free some space and run again."
        )
    if "unable to open" in text or "readonly" in text:
        return f"Cannot open the response store {path} for writing ({text}); check the folder's permissions or use another --cache-dir."
    return (
        f"The response store {path} is not a readable genderprobe store ({text}); "
        f"it was left as it is: move it aside or use another --cache-dir."
    )
