"""The Ray actor: one backend per worker, answering shards of requests.

Answers stream back as they are ready (a batch at a time for local weights,
one at a time for API backends), so a worker that dies loses only what it was
still working on. Failures the runner must see (transient or fatal model
errors) travel back as data, not exceptions, and the driver re-raises them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from genderprobe.errors import ModelError, UserError
from genderprobe.models import get_model
from genderprobe.models.base import ModelOptions, Request, Response


@dataclass
class Failure:
    """A ModelError raised by the backend, carried back to the driver."""

    message: str
    kind: str
    fatal: bool
    retry_after: float | None
    status: int | None

    @classmethod
    def of(cls, exc: ModelError) -> Failure:
        return cls(str(exc), exc.kind, exc.fatal, exc.retry_after, exc.status)

    def error(self) -> ModelError:
        return ModelError(self.message, kind=self.kind, fatal=self.fatal,
                          retry_after=self.retry_after, status=self.status)


Outcome = tuple[int, Response | Failure]


class BackendWorker:
    """Holds one backend. Wrapped with ``ray.remote`` by the pool."""

    def __init__(self, spec: str, options: ModelOptions, env: dict[str, str],
                 concurrency: int, batch: int):
        # Settings the backend reads from the environment (API keys, base URLs)
        # come from the driver, so remote nodes need not be set up by hand.
        os.environ.update(env)
        self.concurrency = concurrency
        self.batch = batch
        self.error: str | None = None
        self.model: Any = None
        try:
            self.model = get_model(spec, options)
        except UserError as exc:
            self.error = str(exc)
        self._gate: asyncio.Semaphore | None = None
        self._compute: asyncio.Lock | None = None

    def describe(self) -> dict[str, Any]:
        m = self.model
        if m is None:
            return {"error": self.error, "pid": os.getpid()}
        return {
            "error": None,
            "pid": os.getpid(),
            "spec": m.spec,
            "identity": m.identity,
            "cacheable": m.cacheable,
            "batch_native": m.batch_native,
            "supports_option_scoring": m.supports_option_scoring,
            "supports_loglikelihood": m.supports_loglikelihood,
            "supports_constrained_answers": m.supports_constrained_answers,
            "greedy_when_unset": m.greedy_when_unset,
            "dtype": m.dtype,
            "secrets": list(getattr(m, "secrets", ())),  # for the driver's runner to scrub echoes of them (models.credentials)
        }

    async def answer(self, shard: Sequence[tuple[int, Request]]) -> AsyncIterator[list[Outcome]]:
        if self.model.batch_native:
            async for part in self._answer_in_batches(shard):
                yield part
        else:
            async for part in self._answer_concurrently(shard):
                yield part

    async def _answer_in_batches(self, shard):
        if self._compute is None:
            self._compute = asyncio.Lock()
        for start in range(0, len(shard), self.batch):
            part = shard[start : start + self.batch]
            async with self._compute:  # one forward pass at a time on this device
                try:
                    responses = await asyncio.to_thread(self.model.generate_batch, [r for _, r in part])
                except UserError as exc:  # e.g. a prompt that cannot fit in memory: stop the run, as locally
                    text = str(exc)
                    failure = Failure(text[:1].lower() + text[1:].rstrip("."), "bad_request", True, None, None)
                    responses = [failure] * len(part)
            yield [(n, resp) for (n, _), resp in zip(part, responses)]

    async def _answer_concurrently(self, shard):
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.concurrency)

        async def one(n: int, request: Request) -> Outcome:
            async with self._gate:
                try:
                    return n, await self.model.generate(request)
                except ModelError as exc:
                    return n, Failure.of(exc)

        for done in asyncio.as_completed([one(n, r) for n, r in shard]):
            yield [await done]

    async def close(self) -> None:
        if self.model is not None:
            await self.model.aclose()
            self.model.close()
