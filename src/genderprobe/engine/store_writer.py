"""The store writer: one thread that commits a runner's answers the moment they arrive.

Every answer is committed before the request that brought it gives up its
place among the requests in flight, so a run killed at any moment (``kill
-9`` included) loses at most the requests in flight: never an answer it had
received. Answers that arrive while a commit is under way go into the next
one (a commit per tick of the thread, as many answers as arrived), so the
cost stays small at any concurrency.

The thread also writes the runner's claims (:mod:`genderprobe.engine.claims`),
renewing them while the run lives, and takes in the spill files an earlier
run left (:mod:`genderprobe.engine.spill`).

When a commit fails (a full disk, a store held locked by another process
past the timeout), the answers go to the spill file instead, and so does
every answer after; the runner stops. :meth:`StoreWriter.failure_error`
says what happened and where the answers are, in one sentence.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, InvalidStateError
from typing import Any

from genderprobe.engine import spill
from genderprobe.engine.claims import Claimed, Claims
from genderprobe.engine.disk import disk_sentence
from genderprobe.engine.store import Rows, Store, is_disk_failure, is_locked
from genderprobe.errors import RunFailed
from genderprobe.models.base import Request, Response


class StoreFailed(RunFailed):
    """The store could not take an answer: it is in the spill file (or, failing that, lost), and the run stops."""


class _Job:
    """One write; ``future`` (a caller in a thread) or ``waiters`` (coroutines on ``loop``) learn how it went."""

    __slots__ = ("apply", "rows", "future", "waiters", "loop")

    def __init__(self, apply: Callable[[sqlite3.Connection], Any], rows: Rows | None = None,
                 waiters: list[asyncio.Future[Any]] | None = None, loop: asyncio.AbstractEventLoop | None = None):
        self.apply = apply
        self.rows = rows
        self.future: Future[Any] = Future()
        self.waiters = waiters
        self.loop = loop


_STOP = object()


class StoreWriter:
    """Writes one runner's answers and claims from a thread of its own, with a connection of its own.

    :meth:`akeep` returns once its answer is committed; the other methods return a
    :class:`concurrent.futures.Future` that is done once the write is committed.
    A write that failed raises :class:`StoreFailed` there.
    """

    def __init__(self, store: Store, model: str, *, claims: Claims | None = None, spill_to: Sequence[Any] = ()):
        self.store = store
        self.model = model  # the identity its answers are stored under
        self.claims = claims
        self.spill = spill.Spill(store.path, spill.spill_folders(store.path))
        self._spill_looks = spill.look_folders(store.path, spill_to)  # spill_to: where earlier versions spilled
        self.failure: sqlite3.DatabaseError | None = None
        self.lost = 0  # answers neither stored nor spilled
        self._spill_error: OSError | None = None
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._db: sqlite3.Connection | None = None
        # Answers that arrived in the event loop's current iteration: they go to the thread together.
        self._tick: list[tuple[bytes, Response, Request | None, asyncio.Future[None]]] = []

    # -- what the runner asks for ------------------------------------------------

    def keep(self, items: Sequence[tuple[bytes, Response, Request | None]]) -> Future[None]:
        """Commit answers and errors (their claims stay until the run releases them: an
        answered key's claim stops nobody, as an answer is looked for first)."""
        return self._submit(self._keep_job(items))

    async def akeep(self, key: bytes, response: Response, request: Request | None) -> None:
        """Commit one answer (or error); return once it is committed. From the runner's event loop."""
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._tick.append((key, response, request, waiter))
        if len(self._tick) == 1:
            loop.call_soon(self._send_tick, loop)
        # A cancelled wait (a second Ctrl-C) does not cancel the write.
        await waiter

    def _send_tick(self, loop: asyncio.AbstractEventLoop) -> None:
        tick, self._tick = self._tick, []
        job = self._keep_job([(k, r, q) for k, r, q, _ in tick])
        job.waiters, job.loop = [w for *_, w in tick], loop
        self._submit(job)

    def _keep_job(self, items: Sequence[tuple[bytes, Response, Request | None]]) -> _Job:
        rows = Rows()
        for key, response, request in items:
            rows.add(self.model, key, response, request)
        return _Job(rows.insert, rows)

    def claim(self, keys: Sequence[bytes], since: float | None) -> Future[Claimed]:
        assert self.claims is not None
        claims = self.claims
        return self._submit(_Job(lambda db: claims.claim(db, keys, since)))

    def release(self) -> Future[None]:
        """Delete every claim this runner still holds (it stops, or is done)."""
        assert self.claims is not None
        return self._submit(_Job(self.claims.release))

    def take_in_spills(self) -> int:
        """Commit the answers of the spill files an earlier run left for this store; delete the files;
        keep room beside the store for this run's spill, should its disk fill up."""
        path, folders = self.store.path, self._spill_looks
        taken, files = self._submit(_Job(lambda db: spill.take_in(db, path, folders))).result()
        for file in files:
            file.unlink(missing_ok=True)
        spill.keep_room(path)
        return taken

    def close(self) -> None:
        """Commit what is queued, then stop the thread and close its connection."""
        if self._tick:  # answers of a tick a second Ctrl-C stopped the event loop before sending
            tick, self._tick = self._tick, []
            self._submit(self._keep_job([(k, r, q) for k, r, q, _ in tick]))
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join()
            self._thread = None

    def failure_error(self) -> StoreFailed:
        """One sentence: why the store took no more answers and where the answers went."""
        assert self.failure is not None
        path, exc = self.store.path, self.failure
        if is_locked(exc):
            why = (f"The response store {path} stayed locked by another process for more than "
                   f"{self.store.timeout:g} s")
            then = "run again once it is free"
        elif is_disk_failure(exc):
            why = f"The response store {path} could not be written: {disk_sentence(path, exc)}"
            then = "free some space and run again"
        else:
            why = f"The response store {path} could not be written ({exc})"
            then = "run again once it can be"
        n = self.spill.count
        if n:
            where = self.spill.files[0] if len(self.spill.files) == 1 else ", ".join(map(str, self.spill.files))
            kept = (f"the {n:,} answers received since are kept in {where}, which the next run takes in first "
                    f"(nothing kept is paid for again)")
            if self.lost:
                kept += f", but {self.lost:,} answers could not be written anywhere ({self._spill_error})"
        elif self.lost:
            kept = f"{self.lost:,} answers received could not be written anywhere ({self._spill_error})"
        else:
            kept = "no answer received was lost"
        return StoreFailed(f"{why}; {kept}: {then}.")

    # -- the thread ----------------------------------------------------------------

    def _submit(self, job: _Job) -> Future[Any]:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="genderprobe-store-writer", daemon=True)
            self._thread.start()
        self._queue.put(job)
        return job.future

    def _run(self) -> None:
        renew_every = self.claims.ttl / 3 if self.claims else None
        renewed = time.monotonic()
        try:
            while True:
                try:
                    first = self._queue.get(timeout=renew_every)
                except queue.Empty:
                    first = None
                jobs = [] if first is None else [first]
                while True:  # everything that arrived meanwhile goes into this commit
                    try:
                        jobs.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                stop = _STOP in jobs
                jobs = [j for j in jobs if j is not _STOP]
                if jobs:
                    self._commit(jobs)
                if self.claims is not None and time.monotonic() - renewed >= renew_every:
                    self._renew()
                    renewed = time.monotonic()
                if stop:
                    return
        finally:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _commit(self, jobs: list[_Job]) -> None:
        results: list[Any] = []
        if self.failure is None:
            db = None
            try:
                db = self._db = self._db or self.store.connect()
                db.execute("BEGIN IMMEDIATE")
                results = [job.apply(db) for job in jobs]
                db.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                _rollback(db)
                self.failure = exc
            except BaseException as exc:  # a defect: the waiting caller raises it
                _rollback(db)
                for job in jobs:
                    _settle(job, error=exc)
                return
        if self.failure is None:
            for job, result in zip(jobs, results):
                _settle(job, result=result)
            return
        for job in jobs:
            if job.rows is not None and job.rows.answers:
                self._spill(job.rows)
        error = self.failure_error()
        for job in jobs:
            _settle(job, error=error)

    def _renew(self) -> None:
        """Push this runner's claims' expiry on; a renewal the store refuses (held by another
        process a while) is tried again next time, and stops nothing."""
        if self.failure is not None or self.claims is None:
            return
        db = None
        try:
            db = self._db = self._db or self.store.connect()
            db.execute("BEGIN IMMEDIATE")
            self.claims.renew(db)
            db.execute("COMMIT")
        except sqlite3.DatabaseError:
            _rollback(db)

    def _spill(self, rows: Rows) -> None:
        try:
            self.spill.write(rows.answers)
        except OSError as exc:
            self.lost += len(rows.answers)
            self._spill_error = exc


def _rollback(db: sqlite3.Connection | None) -> None:
    if db is not None and db.in_transaction:
        try:
            db.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def _settle(job: _Job, *, result: Any = None, error: BaseException | None = None) -> None:
    if job.waiters is not None and job.loop is not None:
        # One wake-up of the event loop for the whole tick's answers.
        try:
            job.loop.call_soon_threadsafe(_wake, job.waiters, error)
        except RuntimeError:
            pass  # the loop is closed: nobody waits any more
        return
    try:
        if error is not None:
            job.future.set_exception(error)
        else:
            job.future.set_result(result)
    except InvalidStateError:
        pass


def _wake(waiters: list[asyncio.Future[Any]], error: BaseException | None) -> None:
    for waiter in waiters:
        if not waiter.done():  # a worker cancelled at a second Ctrl-C stopped waiting; the write stands
            if error is not None:
                waiter.set_exception(error)
            else:
                waiter.set_result(None)
