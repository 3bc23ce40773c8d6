"""The runner: the only stage with side effects.

It answers lists of requests for a probe: answers already in the store are
returned without asking; the rest are sent with bounded concurrency, retried
when the failure is transient, and written to the store as they arrive (at
most ``flush_interval`` seconds after arrival), so a crash loses at most the
requests in flight.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from genderprobe.errors import FatalModelError, ModelError
from genderprobe.models.base import Model, Request, Response
from genderprobe.store import Store, request_key


@dataclass
class RunStats:
    requests: int = 0
    cached: int = 0
    sent: int = 0
    errors: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    started: float = field(default_factory=time.monotonic)

    def to_json(self) -> dict[str, int | float]:
        return {
            "requests": self.requests,
            "cached": self.cached,
            "sent": self.sent,
            "errors": self.errors,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "elapsed_s": round(time.monotonic() - self.started, 3),
        }


class Runner:
    """Sends requests for one model. Call it like a function: ``runner(requests)``."""

    def __init__(
        self,
        model: Model,
        store: Store | None = None,
        *,
        concurrency: int = 8,
        max_retries: int = 6,
        backoff_base: float = 0.5,
        backoff_max: float = 60.0,
        flush_interval: float = 0.5,
        batch_size: int = 4096,
        progress: object | None = None,
    ):
        self.model = model
        self.store = store if model.cacheable else None
        self.concurrency = max(1, concurrency)
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.flush_interval = flush_interval
        self.batch_size = batch_size
        self.progress = progress
        self.stats = RunStats()
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- public ---------------------------------------------------------

    def __call__(self, requests: Sequence[Request]) -> list[Response]:
        self.stats.requests += len(requests)
        if self.progress is not None:
            self.progress.expect(len(requests))  # type: ignore[attr-defined]
        keys = [request_key(self.model.identity, r) for r in requests] if self.store else []
        responses: list[Response | None] = [None] * len(requests)
        if self.store:
            cached = self.store.get_many(keys)
            for i, k in enumerate(keys):
                if k in cached:
                    responses[i] = cached[k]
            self.stats.cached += len(cached)
            self._advance(len(cached), cached=len(cached))
        missing = [i for i, r in enumerate(responses) if r is None]
        if missing:
            if self.model.batch_native:
                self._run_batches(requests, keys, missing, responses)
            else:
                self._event_loop().run_until_complete(
                    self._run_async(requests, keys, missing, responses)
                )
        for r in responses:
            assert r is not None
            self.stats.prompt_tokens += r.prompt_tokens if not r.cached else 0
            self.stats.completion_tokens += r.completion_tokens if not r.cached else 0
        return responses  # type: ignore[return-value]

    def close(self) -> None:
        if self._loop is not None:
            self._loop.run_until_complete(self.model.aclose())
            self._loop.close()
            self._loop = None
        self.model.close()

    # -- batch-native backends (reference, local weights) ----------------

    def _run_batches(self, requests, keys, missing, responses) -> None:
        for start in range(0, len(missing), self.batch_size):
            idx = missing[start : start + self.batch_size]
            answers = self.model.generate_batch([requests[i] for i in idx])
            for i, r in zip(idx, answers):
                responses[i] = r
            self.stats.sent += len(idx)
            errors = sum(1 for r in answers if not r.ok)
            self.stats.errors += errors
            if self.store:
                self.store.put_many(self.model.identity, ((keys[i], responses[i]) for i in idx))
            self._advance(len(idx), errors=errors)

    # -- API backends ----------------------------------------------------

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop

    async def _run_async(self, requests, keys, missing, responses) -> None:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in missing:
            queue.put_nowait(i)
        pending: list[tuple[bytes, Response]] = []
        fatal: list[BaseException] = []

        async def worker() -> None:
            while not fatal:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                try:
                    r = await self._ask_with_retries(requests[i])
                except FatalModelError as exc:
                    fatal.append(exc)
                    return
                responses[i] = r
                self.stats.sent += 1
                if not r.ok:
                    self.stats.errors += 1
                if self.store:
                    pending.append((keys[i], r))
                self._advance(1, errors=0 if r.ok else 1)

        async def flusher() -> None:
            while True:
                await asyncio.sleep(self.flush_interval)
                self._flush(pending)

        workers = [asyncio.ensure_future(worker()) for _ in range(min(self.concurrency, len(missing)))]
        flush_task = asyncio.ensure_future(flusher())
        try:
            await asyncio.gather(*workers)
        finally:
            flush_task.cancel()
            for w in workers:
                w.cancel()
            self._flush(pending)
        if fatal:
            raise fatal[0]

    def _flush(self, pending: list[tuple[bytes, Response]]) -> None:
        if self.store and pending:
            batch = pending[:]
            pending.clear()
            self.store.put_many(self.model.identity, batch)

    async def _ask_with_retries(self, request: Request) -> Response:
        attempt = 0
        while True:
            try:
                return await self.model.generate(request)
            except ModelError as exc:
                if exc.fatal:
                    raise FatalModelError(str(exc)) from None
                if attempt >= self.max_retries:
                    return Response.failure(exc.kind, str(exc))
                delay = exc.retry_after
                if delay is None:
                    delay = min(self.backoff_max, self.backoff_base * 2**attempt)
                    delay *= random.uniform(0.5, 1.0)
                attempt += 1
                self.stats.retries += 1
                await asyncio.sleep(delay)

    def _advance(self, n: int, *, cached: int = 0, errors: int = 0) -> None:
        if self.progress is not None and n:
            self.progress.advance(n, cached=cached, errors=errors)  # type: ignore[attr-defined]
