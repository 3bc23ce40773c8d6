"""The runner: the only stage with side effects.

It answers lists of requests for a probe: answers already in the store are
returned without asking; the rest are sent with bounded concurrency and
optional requests-per-minute / tokens-per-minute limits, retried with
exponential backoff and jitter when the failure is transient (honouring
Retry-After), and written to the store as they arrive (batched, at most
``flush_interval`` seconds after arrival), so a crash loses at most the
requests in flight.

While the server throttles (429, 503) the number of requests in flight is
halved, at most once per ``cooldown``; it grows back by one per ``limit``
successes (additive increase, multiplicative decrease).

A fatal error (bad request, bad key, unknown model) stops the run at once. A
request that still fails after its retries is recorded as an error; when the
errors exceed ``max_error_rate`` of the requests the run fails with
:class:`TooManyErrors`, keeping every answer already stored.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from genderprobe.errors import FatalModelError, ModelError, RunFailed, UserError
from genderprobe.models.base import Model, Request, Response
from genderprobe.store import Store, request_key

# Retries, throttling and failures, for programs that capture them; silent unless configured.
log = logging.getLogger(__name__)

THROTTLE_KINDS = frozenset({"rate_limit", "overloaded"})
# Retries of a refused connection before the server has answered once.
FIRST_CONTACT_RETRIES = 2
# A run whose first this-many answers were all empty stops: the server sends no text.
EARLY_EMPTY = 20


class TooManyErrors(RunFailed):
    """More requests failed after their retries than ``max_error_rate`` allows."""


@dataclass
class RunStats:
    requests: int = 0
    cached: int = 0
    sent: int = 0  # requests the model finished, answered or failed
    answered: int = 0
    errors: int = 0
    retries: int = 0
    throttled: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    empty: int = 0  # answers with no text (counted among the errors too)
    # Answers received through a provider's batch API (--batch), billed at half price.
    batched: int = 0
    batch_prompt_tokens: int = 0
    batch_completion_tokens: int = 0
    error_kinds: Counter[str] = field(default_factory=Counter)
    # Who answered: the model version the server reports and its build fingerprint.
    served_models: Counter[str] = field(default_factory=Counter)
    fingerprints: Counter[str] = field(default_factory=Counter)
    min_concurrency: int | None = None
    started: float = field(default_factory=time.monotonic)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "cached": self.cached,
            "sent": self.sent,
            "errors": self.errors,
            "error_kinds": dict(self.error_kinds),
            "empty": self.empty,
            "retries": self.retries,
            "throttled": self.throttled,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "batched": self.batched,
            "batch_prompt_tokens": self.batch_prompt_tokens,
            "batch_completion_tokens": self.batch_completion_tokens,
            "served_models": dict(self.served_models),
            "fingerprints": dict(self.fingerprints),
            "elapsed_s": round(time.monotonic() - self.started, 3),
        }

    def note_server(self, r: Response) -> None:
        if r.served_model:
            self.served_models[r.served_model] += 1
        if r.fingerprint:
            self.fingerprints[r.fingerprint] += 1


class Pacer:
    """A token bucket for per-minute limits that may run into debt.

    It holds at most one second's worth, so any minute sees at most the limit
    plus one second's worth. A request whose cost exceeds that waits for a full
    bucket and leaves it in debt; :meth:`settle` corrects an estimated cost.
    """

    def __init__(self, per_minute: float, clock: Any = time.monotonic):
        if per_minute <= 0:
            raise UserError(f"A per-minute limit must be positive; got {per_minute!r}.")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self._clock = clock
        self._updated = clock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._updated) * self.rate)
        self._updated = now

    def delay(self, cost: float) -> float:
        """Seconds to wait before ``cost`` may be taken (0: take it now)."""
        self._refill()
        need = min(cost, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    async def take(self, cost: float) -> None:
        while (wait := self.delay(cost)) > 0:
            await asyncio.sleep(wait)
        self.level -= cost

    def settle(self, extra: float) -> None:
        """Charge (or refund, if negative) the difference between actual and estimated cost."""
        self.level = min(self.capacity, self.level - extra)


class AdaptiveLimit:
    """How many requests may be in flight: halves on throttling, grows back by one."""

    def __init__(self, maximum: int, *, cooldown: float = 1.0, clock: Any = time.monotonic):
        self.maximum = maximum
        self.limit = maximum
        self.lowest = maximum
        self.in_flight = 0
        self.cooldown = cooldown
        self._clock = clock
        self._last_cut = -math.inf
        self._successes = 0
        self._cond: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def acquire(self) -> None:
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1

    async def release(self) -> None:
        cond = self._condition()
        async with cond:
            self.in_flight -= 1
            cond.notify_all()

    def throttled(self) -> None:
        now = self._clock()
        if now - self._last_cut < self.cooldown:
            return  # answers to requests sent before the last cut say nothing new
        self._last_cut = now
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)
        self._successes = 0

    def succeeded(self) -> None:
        if self.limit >= self.maximum:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit += 1


class Runner:
    """Sends requests for one model. Call it like a function: ``runner(requests)``.

    concurrency: most requests in flight at once.
    rpm / tpm: requests / tokens per minute (None: unlimited). Tokens are
        estimated before sending (prompt characters / 4 + max_tokens) and
        corrected with the usage the server reports.
    max_retries: retries per request for transient failures.
    max_error_rate: share of requests that may fail after their retries before
        the run fails (None: never).
    max_retry_after: longest Retry-After honoured, in seconds.
    """

    def __init__(
        self,
        model: Model,
        store: Store | None = None,
        *,
        concurrency: int = 8,
        rpm: float | None = None,
        tpm: float | None = None,
        max_retries: int = 6,
        backoff_base: float = 0.5,
        backoff_max: float = 60.0,
        max_retry_after: float = 300.0,
        max_error_rate: float | None = 0.03,
        cooldown: float = 1.0,
        flush_interval: float = 0.5,
        batch_size: int = 4096,
        progress: object | None = None,
        batch: bool = False,
        batch_poll_interval: float = 30.0,
        cache_max_age: float | None = None,
    ):
        if max_error_rate is not None and not 0.0 <= max_error_rate <= 1.0:
            raise UserError(f"--max-error-rate must lie between 0 and 1; got {max_error_rate!r}.")
        if max_retries < 0:
            raise UserError(f"The number of retries must be at least 0; got {max_retries!r}.")
        self.model = model
        self.store = store if model.cacheable else None
        self.concurrency = max(1, int(concurrency))
        self.rpm = Pacer(rpm) if rpm else None
        self.tpm = Pacer(tpm) if tpm else None
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self.max_error_rate = max_error_rate
        self.flush_interval = flush_interval
        self.batch_size = batch_size
        self.progress = progress
        # Send what is missing through the provider's batch API (half price) first;
        # see genderprobe.batch. What a batch leaves unanswered goes the normal way.
        self.batch = batch
        self.batch_poll_interval = batch_poll_interval
        self.cache_max_age = cache_max_age
        self.limit = AdaptiveLimit(self.concurrency, cooldown=cooldown)
        self.stats = RunStats()
        # One event loop for the runner's life (the HTTP session lives on it).
        # asyncio.Runner turns Ctrl-C into a cancellation of the run, which
        # flushes the answers received, instead of a KeyboardInterrupt raised in
        # whatever task (an HTTP library's) happens to be running.
        self._aio: asyncio.Runner | None = None
        self._pending: list[tuple[bytes, Response]] = []
        self._asked: dict[bytes, Request] = {}  # the request behind each pending key, stored beside its answer
        self._flush_lock = threading.Lock()
        self._resume_at = 0.0  # no request leaves before this (a Retry-After for everyone)
        self._last_error: dict[str, str] = {}

    # -- public ---------------------------------------------------------

    def __call__(self, requests: Sequence[Request]) -> list[Response]:
        self.stats.requests += len(requests)
        if self.progress is not None:
            self.progress.expect(len(requests))  # type: ignore[attr-defined]
        identity = self.model.identity
        keys = [request_key(identity, r) for r in requests] if self.store else []
        responses: list[Response | None] = [None] * len(requests)
        if self.store:
            cached = self.store.get_many(keys, max_age=self.cache_max_age)
            for i, k in enumerate(keys):
                hit = cached.get(k)
                if hit is not None:
                    responses[i] = hit
                    self.stats.note_server(hit)
            n_cached = sum(1 for r in responses if r is not None)
            self.stats.cached += n_cached
            self._advance(n_cached, cached=n_cached)
        missing = [i for i, r in enumerate(responses) if r is None]
        if self.store:
            self._asked.update((keys[i], requests[i]) for i in missing)
        if missing and self.batch:
            from genderprobe.batch import answer_by_batch

            try:
                answer_by_batch(self, requests, keys, missing, responses)
            finally:
                self._flush()
            missing = [i for i in missing if responses[i] is None]
        if missing:
            try:
                if self.model.batch_native:
                    self._run_batches(requests, keys, missing, responses)
                else:
                    self._run_async_blocking(requests, keys, missing, responses)
            finally:
                self._flush()
        self._check_totals(final=True)
        return responses  # type: ignore[return-value]

    def close(self) -> None:
        try:
            if self._aio is not None:
                try:
                    self._aio.run(self.model.aclose())
                finally:
                    # Cancels and awaits anything a second Ctrl-C left running.
                    self._aio.close()
                    self._aio = None
        finally:
            self.model.close()

    # -- batch-native backends (reference, local weights) ----------------

    def _run_batches(self, requests, keys, missing, responses) -> None:
        for start in range(0, len(missing), self.batch_size):
            idx = missing[start : start + self.batch_size]
            shown = 0

            def finished(n: int) -> None:  # the backend has answered n more of this list
                nonlocal shown
                shown += n
                self._advance(n)

            self.model.progress = finished
            try:
                answers = self.model.generate_batch([requests[i] for i in idx])
            finally:
                self.model.progress = None
            errors = tokens = 0
            for i, r in zip(idx, answers):
                responses[i] = r
                errors += self._count(r)
                tokens += r.prompt_tokens + r.completion_tokens
                if self.store:
                    self._pending.append((keys[i], r))
            self._flush()
            self._advance(len(idx) - shown, errors=errors, tokens=tokens)
            self._check_totals(final=False)

    # -- API backends ----------------------------------------------------

    def _run_async_blocking(self, requests, keys, missing, responses) -> None:
        if self._aio is None:
            self._aio = asyncio.Runner()
        self._aio.run(self._run_async(requests, keys, missing, responses))

    async def _run_async(self, requests, keys, missing, responses) -> None:
        queue: list[int] = list(reversed(missing))
        stop: list[BaseException] = []
        stopped = asyncio.Event()

        def halt(exc: BaseException) -> None:
            stop.append(exc)
            stopped.set()

        async def answer(i: int) -> None:
            try:
                r = await self._ask_with_retries(requests[i])
            except FatalModelError as exc:
                halt(exc)
                return
            responses[i] = r
            errors = self._count(r)
            if self.store:
                self._pending.append((keys[i], r))
            self._advance(1, errors=errors, tokens=r.prompt_tokens + r.completion_tokens)
            if errors:
                try:
                    self._check_failures(r, final=False)
                except UserError as exc:
                    halt(exc)

        async def worker() -> None:
            while queue and not stop:
                await answer(queue.pop())

        if self.stats.sent == 0 and len(queue) > 1:
            # The first request goes alone: a wrong URL, key, model name or
            # parameter is reported after one paid request, not after a full
            # round of them.
            await answer(queue.pop())
            if stop:
                self._flush()
                raise stop[0]

        async def flusher() -> None:
            while True:
                await asyncio.sleep(self.flush_interval)
                try:
                    # In a thread: a store locked by another process makes the
                    # write wait, and the requests must not wait with it.
                    await asyncio.to_thread(self._flush)
                except UserError as exc:  # the store became unwritable (locked, disk full)
                    halt(exc)
                    return

        n_workers = min(self.concurrency, len(queue))
        workers = [asyncio.ensure_future(worker()) for _ in range(n_workers)]
        all_done = asyncio.gather(*workers)
        # Mark its outcome as seen: after a stop it ends with the workers' cancellation.
        all_done.add_done_callback(lambda f: f.cancelled() or f.exception())
        stop_wait = asyncio.ensure_future(stopped.wait())
        flush_task = asyncio.ensure_future(flusher())
        try:
            await asyncio.wait({all_done, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # A fatal error stops the requests still in flight too.
            for task in (*workers, stop_wait, flush_task):
                task.cancel()
            await asyncio.gather(*workers, stop_wait, flush_task, return_exceptions=True)
            self._flush()
        if stop:
            raise stop[0]
        error = all_done.exception() if all_done.done() and not all_done.cancelled() else None
        if error is not None:
            raise error

    def _flush(self) -> None:
        # Forget a batch only once it is committed: an interrupt (Ctrl-C, SIGTERM)
        # or a locked store mid-write leaves it pending for the final flush.
        # Writing it twice is harmless (answers are keyed).
        with self._flush_lock:  # the flusher's thread and the final flush never overlap
            if self.store and self._pending:
                n = len(self._pending)
                self.store.put_many(self.model.identity, self._pending[:n], self._asked)
                for key, _ in self._pending[:n]:
                    self._asked.pop(key, None)
                del self._pending[:n]

    async def _ask_with_retries(self, request: Request) -> Response:
        attempt = 0
        while True:
            await self._wait_for_turn(request)
            estimate = self._estimate_tokens(request) if self.tpm else 0
            try:
                await self.limit.acquire()
                try:
                    response = await self.model.generate(request)
                finally:
                    await self.limit.release()
            except ModelError as exc:
                if exc.fatal:
                    log.error("%s: %s", self.model.spec, exc)
                    raise FatalModelError(_fatal_sentence(self.model.spec, exc)) from None
                if self.tpm:
                    self.tpm.settle(-estimate)  # a failed request used no tokens
                throttled = exc.kind in THROTTLE_KINDS or exc.status == 503
                if throttled:
                    self.stats.throttled += 1
                    self.limit.throttled()
                    self.stats.min_concurrency = self.limit.lowest
                    log.warning("%s throttles (%s): %d requests in flight at most", self.model.spec, exc,
                                self.limit.limit)
                self._last_error[exc.kind] = str(exc)
                if attempt >= self._retries_for(exc):
                    log.warning("%s: a request failed after %d retries (%s: %s)", self.model.spec, attempt,
                                exc.kind, exc)
                    return Response.failure(exc.kind, str(exc))
                delay = self._backoff(attempt, exc.retry_after)
                log.info("%s: retry %d in %.2f s after %s: %s", self.model.spec, attempt + 1, delay, exc.kind, exc)
                if hasattr(self.progress, "retried"):  # a display of ours, not any object with expect/advance
                    self.progress.retried()  # type: ignore[union-attr]
                if exc.retry_after is not None:
                    self._resume_at = max(self._resume_at, time.monotonic() + delay)
                attempt += 1
                self.stats.retries += 1
                await asyncio.sleep(delay)
                continue
            if self.tpm:
                self.tpm.settle(response.prompt_tokens + response.completion_tokens - estimate)
            self.limit.succeeded()
            return response

    def _retries_for(self, exc: ModelError) -> int:
        """A server refusing connections before it ever answered is most likely not
        there (a wrong URL or port): say so in about a second, not after the full
        backoff. Once it has answered, a refused connection is a blip worth waiting out."""
        if exc.kind == "connect" and self.stats.answered == 0:
            return min(self.max_retries, FIRST_CONTACT_RETRIES)
        return self.max_retries

    async def _wait_for_turn(self, request: Request) -> None:
        wait = self._resume_at - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        if self.rpm:
            await self.rpm.take(1)
        if self.tpm:
            await self.tpm.take(self._estimate_tokens(request))

    @staticmethod
    def _estimate_tokens(request: Request) -> int:
        chars = sum(len(content) for _, content in request.messages)
        return chars // 4 + 4 * len(request.messages) + (request.params.max_tokens or 16)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with equal jitter; a Retry-After is a floor, with a little jitter on top."""
        if retry_after is not None:
            wait = min(retry_after, self.max_retry_after)
            return wait * random.uniform(1.0, 1.1)
        ceiling = min(self.backoff_max, self.backoff_base * 2**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    # -- bookkeeping -----------------------------------------------------

    def _count(self, r: Response) -> int:
        """Add one finished request to the stats; 1 if it is an error.

        An answer with no text becomes an error of kind "empty" here, before it
        is stored: it is kept among the errors, so a rerun asks again.
        """
        self.stats.sent += 1
        if r.served_model or r.fingerprint:  # local models report neither: skip the call
            self.stats.note_server(r)
        mark_empty(r)
        if r.ok:
            self.stats.answered += 1
            self.stats.prompt_tokens += r.prompt_tokens
            self.stats.completion_tokens += r.completion_tokens
            return 0
        self.stats.errors += 1
        self.stats.error_kinds[r.error_kind or "error"] += 1
        if r.error_kind == "empty":
            self.stats.empty += 1
            self.stats.prompt_tokens += r.prompt_tokens  # paid for all the same
            self.stats.completion_tokens += r.completion_tokens
        if r.error_message:
            self._last_error[r.error_kind or "error"] = r.error_message
        return 1

    def _check_failures(self, r: Response, *, final: bool) -> None:
        """Stop when a failure shows the run cannot succeed: the server is not there, or too much is lost."""
        if r.error_kind == "connect" and self.stats.answered == 0:
            # A server that refused every connection so far is not there: stop instead of retrying thousands.
            raise RunFailed(f"Cannot reach the model {self.model.spec}: {r.error_message}.")
        self._check_totals(final=final)

    def _check_totals(self, *, final: bool) -> None:
        self._check_empty(final=final)
        self._check_error_rate(final=final)

    def _check_empty(self, *, final: bool) -> None:
        """Fail when most answers are empty, or when the first EARLY_EMPTY all were (a server sending no text)."""
        empty = self.stats.empty
        if not empty:
            return
        first_all_empty = empty >= EARLY_EMPTY and self.stats.answered == 0 and not self.stats.cached
        if empty <= self.stats.requests / 2 and not first_all_empty:
            return
        why = self._last_error.get("empty", "no text")
        seen = f"the first {empty:,}" if first_all_empty and not final else f"{empty:,} of {self.stats.requests:,}"
        raise RunFailed(
            f"{seen} answers of {self.model.spec} were empty ({why}); check that --base-url and the model "
            f"return text, or raise --max-tokens for a reasoning model; the answers received are kept in the store."
        )

    def _check_error_rate(self, *, final: bool) -> None:
        """Fail once the errors exceed the allowed share of all requests asked so far.

        Mid-run this triggers only when the rate cannot be met even if every
        remaining request succeeds.
        """
        # Empty answers have their own rule (_check_empty): a model may answer some prompts with nothing.
        failed = self.stats.errors - self.stats.empty
        if self.max_error_rate is None or not failed:
            return
        allowed = self.max_error_rate * self.stats.requests
        if failed <= allowed:
            return
        kind, n = next((k, n) for k, n in self.stats.error_kinds.most_common() if k != "empty")
        detail = self._last_error.get(kind, kind)
        share = failed / max(1, self.stats.requests)
        answered = self.stats.answered + self.stats.cached
        when = "" if final else " so far"
        raise TooManyErrors(
            f"{failed:,} of {self.stats.requests:,} requests ({share:.1%}) failed{when} after "
            f"{self.max_retries} retries each, more than --max-error-rate {self.max_error_rate:g} allows "
            f"(most often {kind}: {detail}); the {answered:,} answers received are kept in the store, "
            f"so run again to ask only for the missing ones, or raise --max-error-rate."
        )

    def _advance(self, n: int, *, cached: int = 0, errors: int = 0, tokens: int = 0) -> None:
        if self.progress is not None and n:
            self.progress.advance(n, cached=cached, errors=errors, tokens=tokens)  # type: ignore[attr-defined]


def mark_empty(r: Response) -> None:
    """Turn an answer with no text (and no option scores) into an error of kind "empty"."""
    text = r.text
    # Called for every answer: the common case (some text) is decided first, without a copy.
    if (text and not text.isspace()) or not r.ok or r.option_logprobs is not None:
        return
    if r.finish_reason == "length" and r.reasoning:
        why = "the reasoning used every token before any answer: raise --max-tokens"
    elif r.finish_reason and r.finish_reason not in ("stop", "end_turn"):
        why = f"no text, finish_reason {r.finish_reason}"
    else:
        why = "no text"
    r.error_kind, r.error_message = "empty", why


def _fatal_sentence(spec: str, exc: ModelError) -> str:
    return f"The run stopped because {exc}."
