"""The runner: the only stage with side effects.

It answers lists of requests for a probe: answers already in the store are
returned without asking; identical requests in one list are asked once; the
rest are claimed in the store (so that another process asking the same waits
instead of paying again, see :mod:`genderprobe.engine.claims`), sent with bounded
concurrency and optional requests-per-minute / tokens-per-minute limits,
retried with exponential backoff and jitter when the failure is transient
(:mod:`genderprobe.engine.retries`; a Retry-After is honoured at the moment a
request is sent), and committed to the store as they arrive, before the
request's place among those in flight is reused
(:mod:`genderprobe.engine.store_writer`): a crash loses at most the requests
in flight, never an answer received.

While the server throttles (429, 503) the number of requests in flight is
halved, at most once per ``cooldown``; it grows back by one per ``limit``
successes (additive increase, multiplicative decrease).

A fatal error (bad request, bad key, unknown model) stops the run: no
request is sent after it. A request that still fails after its retries is
recorded as an error; when the errors exceed ``max_error_rate`` of the
requests the run fails with :class:`TooManyErrors`, keeping every answer
already stored. On such a stop, and on Ctrl-C or SIGTERM, the requests in
flight (already paid for) get ``grace`` seconds to land in the store; a second
Ctrl-C stops at once. The error says how many were kept.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import time
from collections import Counter, deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from genderprobe.engine.answer_bound import FLOOR, cut
from genderprobe.engine.claims import Claimed, Claims
from genderprobe.engine.empty_answers import asked_again_line, mark_empty, stored_empty_answers
from genderprobe.engine.pacing import AdaptiveLimit, Pacer
from genderprobe.engine.read_only_store import ReadOnlyStore
from genderprobe.engine.retries import MAX_RETRY_WAIT, RetryPolicy, is_throttle
from genderprobe.engine.store import Store, request_keys
from genderprobe.engine.store_writer import StoreFailed, StoreWriter
from genderprobe.engine.token_count import token_counter
from genderprobe.engine.work_bounds import check_running_total, check_send
from genderprobe.engine.work_queue import WAIT_POLL, WorkQueue, unique_missing
from genderprobe.errors import FatalModelError, ModelError, RunFailed, UserError
from genderprobe.models.base import Model, Request, Response
from genderprobe.models.credentials import Scrubber

# Retries, throttling and failures, for programs that capture them; silent unless configured.
log = logging.getLogger(__name__)

# A run whose first this-many answers were all empty stops: the server sends no text.
EARLY_EMPTY = 20
# Seconds the requests in flight get to land in the store when a run stops.
GRACE = 10.0
# A retry wait of this many seconds or more is shown with the time it ends: silence that long looks like a hang.
SHOW_WAIT = 10.0


class TooManyErrors(RunFailed):
    """More requests failed after their retries than ``max_error_rate`` allows."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the run; the message says what became of the requests in flight."""


@dataclass
class _Stop:
    """A run's stop: the requests in flight at that moment, and the answers they brought that were kept."""

    in_flight: int = 0
    kept: int = 0


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
    cut: int = 0  # answers longer than their bound, cut to it (genderprobe.engine.answer_bound)
    # Requests identical to another of the same list: asked once, answered alike (counted among the cached).
    duplicates: int = 0
    # Answers another process was asking at the same time: waited for, not paid for (among the cached).
    waited: int = 0
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
            "cut": self.cut,
            "duplicates": self.duplicates,
            "waited": self.waited,
            "retries": self.retries,
            "throttled": self.throttled,
            "min_concurrency": self.min_concurrency,
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


class Runner:
    """Sends requests for one model. Call it like a function: ``runner(requests)``.

    concurrency: most requests in flight at once.
    rpm / tpm: requests / tokens per minute (None: unlimited). Tokens are
        estimated before sending (the prompt counted as genderprobe.engine.token_count
        does, plus max_tokens) and corrected with the usage the server reports.
    max_retries: retries per request for transient failures.
    max_error_rate: share of requests that may fail after their retries before
        the run fails (None: never).
    max_retry_after: longest Retry-After waited out, in seconds (--max-retry-wait); a longer one stops the run.
    grace: seconds the requests in flight get to land in the store when the run stops.
    spill_to: folders earlier versions spilled to (--out): looked in for spill files, never written to.
    max_requests: most requests this runner takes, and sends with retries (None: no limit); above it, one sentence.
    keep_empty: take every stored empty answer as it is instead of asking once more (genderprobe.engine.empty_answers).
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
        max_retry_after: float = MAX_RETRY_WAIT,
        max_error_rate: float | None = 0.03,
        cooldown: float = 1.0,
        batch_size: int = 4096,
        progress: object | None = None,
        batch: bool = False,
        batch_poll_interval: float = 30.0,
        cache_max_age: float | None = None,
        grace: float = GRACE,
        spill_to: Sequence[Any] = (),
        max_requests: int | None = None,
        keep_empty: bool = False,
    ):
        if max_error_rate is not None and not 0.0 <= max_error_rate <= 1.0:
            raise UserError(f"--max-error-rate must lie between 0 and 1; got {max_error_rate!r}.")
        if max_retries < 0:
            raise UserError(f"The number of retries must be at least 0; got {max_retries!r}.")
        self.model = model
        self._scrub = Scrubber(getattr(model, "secrets", ()))  # a plugin's model may predate the attribute
        self.store = store if model.cacheable else None
        self.concurrency = max(1, int(concurrency))
        self.rpm = Pacer(rpm) if rpm else None
        self.tpm = Pacer(tpm) if tpm else None
        self._tokens = token_counter(model.spec) if tpm else None
        self.retries = RetryPolicy(max_retries, backoff_base, backoff_max, max_retry_after)
        self.max_error_rate = max_error_rate
        self.batch_size = batch_size
        self.progress = progress
        # Send what is missing through the provider's batch API (half price) first;
        # see genderprobe.engine.batch. What a batch leaves unanswered goes the normal way.
        self.batch = batch
        self.batch_poll_interval = batch_poll_interval
        self.cache_max_age = cache_max_age
        self.grace = grace
        self.max_requests = max_requests
        self.keep_empty = keep_empty
        self.limit = AdaptiveLimit(self.concurrency, cooldown=cooldown)
        self.stats = RunStats()
        # One event loop for the runner's life (the HTTP session lives on it).
        # asyncio.Runner turns the first Ctrl-C into a cancellation of the run,
        # which lets the requests in flight land, and a second into an
        # immediate KeyboardInterrupt.
        self._aio: asyncio.Runner | None = None
        self.writer = (StoreWriter(self.store, model.identity, claims=Claims(), spill_to=spill_to)
                       if self.store and not isinstance(self.store, ReadOnlyStore) else None)
        self._spills_taken = False
        self._resume_at = 0.0  # no request leaves before this (a Retry-After for everyone)
        self._shown_until = 0.0  # the end of the last retry wait shown
        self._sends = 0  # requests sent, retries included (--max-requests bounds them)
        self._last_error: dict[str, str] = {}
        self._busy = 0  # requests in flight or being committed
        self._stop_note = ""  # what became of the requests in flight when the run stopped

    # -- public ---------------------------------------------------------

    @property
    def max_retries(self) -> int:
        return self.retries.max_retries

    def __call__(self, requests: Sequence[Request]) -> list[Response]:
        self.stats.requests += len(requests)
        check_running_total(self.max_requests, self.model.spec, self.stats.requests)
        if self.progress is not None:
            self.progress.expect(len(requests))  # type: ignore[attr-defined]
        keys = request_keys(self.model.identity, requests) if self.model.cacheable else []
        responses: list[Response | None] = [None] * len(requests)
        if self.store:
            self._take_in_spills()
            cached = self.store.get_many(keys, max_age=self.cache_max_age)
            for i, k in enumerate(keys):
                hit = cached.get(k)
                if hit is not None:
                    self.receive(hit, requests[i])
                    responses[i] = hit
                    self.stats.note_server(hit)
            n_cached = sum(1 for r in responses if r is not None)
            self.stats.cached += n_cached
            self.advance(n_cached, cached=n_cached)
            self._take_stored_empty(keys, responses)
        missing, copies = unique_missing(keys, responses)
        if missing and isinstance(self.store, ReadOnlyStore):
            raise self.store.refuse(len(missing), len(requests))
        try:
            if missing and self.batch:
                from genderprobe.engine.batch import answer_by_batch

                try:
                    answer_by_batch(self, requests, keys, missing, responses)
                finally:
                    self._release_claims()
                missing = [i for i in missing if responses[i] is None]
            if missing:
                if self.model.batch_native:
                    self._run_batches(requests, keys, missing, responses)
                else:
                    self._run_async_blocking(requests, keys, missing, responses)
        finally:
            self._share(copies, responses)
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
            try:
                if self.writer is not None:
                    self.writer.close()  # commits what the last requests brought
            finally:
                self.model.close()

    # -- keys, identical requests and what an earlier run spilled ----------------

    def _take_in_spills(self) -> None:
        """Before anything is sent: the answers an earlier run spilled when the disk was full."""
        if self.writer is not None and not self._spills_taken:
            taken = self.writer.take_in_spills()
            self._spills_taken = True
            if taken:
                log.warning("Took %d answers in from the spill file an earlier run left when the store's disk "
                            "was full; they are in the store now.", taken)

    def _take_stored_empty(self, keys: list[bytes], responses: list[Response | None]) -> None:
        """Empty answers an earlier run stored: taken as they are (--keep-empty, or empty twice), counted
        among the losses as in the run that got them; those asked again are said so before sending."""
        missing = [i for i, r in enumerate(responses) if r is None]
        if not missing:
            return
        taken, again = stored_empty_answers(self.store, keys, missing, keep_empty=self.keep_empty,
                                            max_age=self.cache_max_age)
        for i, r in taken.items():
            responses[i] = r
            self.stats.errors += 1
            self.stats.error_kinds["empty"] += 1
            self.stats.empty += 1
            self._last_error["empty"] = r.error_message or "no text"
        self.stats.cached += len(taken)
        self.advance(len(taken), cached=len(taken), errors=len(taken))
        if again:
            self._say(asked_again_line(again, self.model.spec))

    def _share(self, copies: list[tuple[int, int]], responses: list[Response | None]) -> None:
        """Give each request identical to an earlier one of the list that one's answer (it cost nothing)."""
        shared = 0
        for i, j in copies:
            r = responses[j]
            if r is not None:
                responses[i] = dataclasses.replace(r, cached=True) if r.ok else r
                shared += 1
        if shared:
            self.stats.cached += shared
            self.stats.duplicates += shared
            self.advance(shared, cached=shared)

    # -- what a provider batch (genderprobe.engine.batch) drives: keep, tally, advance, event_loop --

    def keep(self, items: list[tuple[bytes, Response, Request | None]]) -> None:
        """Commit answers (store key, answer, request) before going on."""
        if self.writer is not None and items:
            self.writer.keep(items).result()

    def claim(self, keys: list[bytes]) -> Future[Claimed]:
        """Claim ``keys`` for this run: a provider batch submits only those no other live run is asking."""
        assert self.writer is not None  # --batch refuses to run without the store
        return self.writer.claim(keys, self._since())

    # -- batch-native backends (reference, local weights) ----------------

    def _run_batches(self, requests, keys, missing, responses) -> None:
        todo = deque(missing)
        waiting: list[int] = []
        try:
            while todo or waiting:
                if not todo:
                    time.sleep(WAIT_POLL)  # only prompts another process is asking are left
                    todo.extend(waiting)
                    waiting = []
                chunk = [todo.popleft() for _ in range(min(self.batch_size, len(todo)))]
                idx, busy = self._claim_now(keys, chunk, responses)
                waiting += busy
                if not idx:
                    continue
                self._answer_list(idx, requests, keys, responses)
                self._check_totals(final=False)
        except StoreFailed:
            raise self.writer.failure_error() from None  # type: ignore[union-attr]
        finally:
            self._release_claims()

    def _answer_list(self, idx: list[int], requests, keys, responses) -> None:
        """Ask the backend for the requests at ``idx`` as one list, storing each part it finishes."""
        shown = 0
        taken: set[int] = set()  # positions in the list whose answers are committed or under way
        commits: list[Future[None]] = []

        def finished(n: int) -> None:  # the backend has answered n more of this list
            nonlocal shown
            shown += n
            self.advance(n)

        def answered(part: dict[int, Response]) -> None:  # a part of the list, stored while the rest runs
            if self.writer is not None and self.writer.failure is not None:
                raise StoreFailed("the store stopped taking answers")  # stop computing what cannot be kept
            taken.update(part)
            commits.append(self._take([(idx[n], r) for n, r in part.items()], requests, keys, responses))
            self._check_totals(final=False)

        self.model.progress, self.model.answered = finished, answered
        try:
            answers = self.model.generate_batch([requests[i] for i in idx])
        finally:
            self.model.progress = self.model.answered = None
        rest = [(i, r) for n, (i, r) in enumerate(zip(idx, answers)) if n not in taken]
        commits.append(self._take(rest, requests, keys, responses, shown=shown))
        for commit in commits:
            commit.result()

    def _take(self, answered: list[tuple[int, Response]], requests, keys, responses, *, shown: int = 0) -> Future[None]:
        """Receive and count answers of a batch-native backend and start committing them; ``shown``
        of them moved the progress line already. The future is done once they are committed."""
        errors = tokens = 0
        for i, r in answered:
            self.receive(r, requests[i])
            responses[i] = r
            errors += self.tally(r)
            tokens += r.prompt_tokens + r.completion_tokens
        items = [(keys[i], responses[i], requests[i]) for i, _ in answered] if keys else []
        commit = self.writer.keep(items) if self.writer is not None and items else _done()
        self.advance(len(answered) - shown, errors=errors, tokens=tokens)
        return commit

    def _claim_now(self, keys, chunk: list[int], responses) -> tuple[list[int], list[int]]:
        """(indices to ask, indices another process is asking) of ``chunk``; fills those answered meanwhile."""
        if self.writer is None:
            return chunk, []
        return self._sort_claimed(keys, chunk, responses, self.writer.claim(
            [keys[i] for i in chunk], self._since()).result())

    def _sort_claimed(self, keys, chunk, responses, claimed) -> tuple[list[int], list[int]]:
        index = {keys[i]: i for i in chunk}
        if claimed.answered:
            assert self.store is not None
            found = self.store.get_many(claimed.answered)
            for key, r in found.items():
                responses[index[key]] = r
                self.stats.note_server(r)
            self.stats.cached += len(found)
            self.stats.waited += len(found)
            self.advance(len(found), cached=len(found))
            # Gone again between the claim and the read (a cache clear): asked as any other.
            claimed.busy += [k for k in claimed.answered if k not in found]
        return [index[k] for k in claimed.mine], [index[k] for k in claimed.busy]

    def _since(self) -> float | None:
        return None if self.cache_max_age is None else time.time() - self.cache_max_age

    def _release_claims(self) -> None:
        if self.writer is not None and self.writer.failure is None:
            try:
                self.writer.release().result()
            except StoreFailed:
                pass  # they expire (and die with this process)

    # -- API backends ----------------------------------------------------

    def event_loop(self) -> asyncio.Runner:
        """The runner's one event loop, on which the model's HTTP session lives (a batch job runs on it too)."""
        if self._aio is None:
            self._aio = asyncio.Runner()
        return self._aio

    def _run_async_blocking(self, requests, keys, missing, responses) -> None:
        try:
            self.event_loop().run(self._run_async(requests, keys, missing, responses))
        except KeyboardInterrupt as exc:
            note = self._stop_note or (f"the {self._busy} requests in flight were abandoned" if self._busy
                                       else "no request was in flight")
            raise Interrupted(f"Interrupted: {note}; every answer received is in the store, "
                              f"so run again to resume.") from exc
        finally:
            self._release_claims()

    async def _run_async(self, requests, keys, missing, responses) -> None:
        async def claim(chunk: list[int]) -> tuple[list[int], list[int]]:
            assert self.writer is not None
            claimed = await asyncio.wrap_future(self.writer.claim([keys[i] for i in chunk], self._since()))
            return self._sort_claimed(keys, chunk, responses, claimed)

        work = WorkQueue(missing, claim if self.writer else None, 4 * self.concurrency)
        stop = _Stop()
        halted: list[BaseException] = []
        stopping = asyncio.Event()

        def halt(exc: BaseException, *, failed_here: bool = False) -> None:
            """Send nothing more; ``failed_here``: the halting request brought no answer to keep."""
            if not halted:
                halted.append(exc)
                stop.in_flight = self._busy - failed_here
            stopping.set()
            work.stopped = True

        async def answer(i: int) -> None:
            try:
                r = await self._ask_with_retries(requests[i])
            except FatalModelError as exc:
                halt(exc, failed_here=True)
                return
            self.receive(r, requests[i])
            responses[i] = r
            errors = self.tally(r)
            if self.writer is not None:
                try:
                    # Committed before this worker takes its next request.
                    await self.writer.akeep(keys[i], r, requests[i])
                except StoreFailed as exc:
                    halt(exc)  # the answer is in the spill file
            if stopping.is_set():
                stop.kept += r.ok
            self.advance(1, errors=errors, tokens=r.prompt_tokens + r.completion_tokens)
            if errors:
                try:
                    self._check_failures(r, final=False)
                except UserError as exc:
                    halt(exc, failed_here=True)

        async def worker(once: bool = False) -> None:
            while True:
                try:
                    i = await work.next()
                except StoreFailed as exc:
                    halt(exc)
                    return
                if i is None:
                    return
                self._busy += 1
                try:
                    await answer(i)
                finally:
                    self._busy -= 1
                if once:
                    return

        if self.stats.sent == 0 and len(missing) > 1:
            # The first request goes alone: a wrong URL, key, model name or
            # parameter is reported after one paid request, not after a full
            # round of them.
            await self._supervise([asyncio.ensure_future(worker(once=True))], stopping, work, stop)
        if not halted:
            await self._supervise([asyncio.ensure_future(worker()) for _ in range(self.concurrency)], stopping,
                                  work, stop)
        if halted:
            raise self._final(halted[0])

    async def _supervise(self, workers: list[asyncio.Future], stopping: asyncio.Event, work: WorkQueue,
                         stop: _Stop) -> None:
        """Wait for the workers; on a stop (an error, Ctrl-C, SIGTERM), let the requests in flight land first."""
        all_done = asyncio.gather(*workers)
        # Mark its outcome as seen: after a stop it ends with the workers' cancellation.
        all_done.add_done_callback(lambda f: f.cancelled() or f.exception())
        stop_wait = asyncio.ensure_future(stopping.wait())
        try:
            try:
                await asyncio.wait({all_done, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:  # Ctrl-C, SIGTERM: send nothing more
                work.stopped = True
                stop.in_flight = self._busy
                stopping.set()
                await self._finish_in_flight(workers, stop)
                raise
            if stopping.is_set():
                await self._finish_in_flight(workers, stop)
        finally:
            for task in (*workers, stop_wait):
                task.cancel()
            await asyncio.gather(*workers, stop_wait, return_exceptions=True)
        error = all_done.exception() if all_done.done() and not all_done.cancelled() else None
        if error is not None:
            raise error

    async def _finish_in_flight(self, workers: list[asyncio.Future], stop: _Stop) -> None:
        """Give the requests in flight (paid for already) ``grace`` seconds to land in the store."""
        in_flight = stop.in_flight
        if not in_flight:
            return
        self._stop_note = f"the {in_flight} requests in flight were abandoned"  # unless they land
        if self.progress is not None:
            print(f"Stopping: waiting up to {self.grace:g} s for the {in_flight} requests in flight, already "
                  f"paid for (Ctrl-C again to stop at once).", file=sys.stderr, flush=True)
        try:
            await asyncio.wait(workers, timeout=self.grace)
        finally:  # a Ctrl-C while waiting cuts the wait short
            abandoned, kept = self._busy, stop.kept
            if not abandoned:
                self._stop_note = (f"the {in_flight} requests in flight when it stopped were let finish: "
                                   f"{kept} answers kept")
            else:
                self._stop_note = (f"of the {in_flight} requests in flight when it stopped, {kept} brought answers "
                                   f"that were kept and {abandoned} were abandoned")

    def _final(self, exc: BaseException) -> BaseException:
        """The error that stopped the run, saying what became of the requests in flight."""
        if isinstance(exc, StoreFailed) and self.writer is not None:
            return self.writer.failure_error()  # counts every answer spilled, the last ones too
        if self._stop_note and isinstance(exc, UserError) and str(exc).endswith("."):
            exc = type(exc)(f"{str(exc)[:-1]} ({self._stop_note}).")
        return exc

    async def _ask_with_retries(self, request: Request) -> Response:
        attempt = 0
        while True:
            estimate = self._estimate_tokens(request) if self.tpm else 0
            try:
                await self.limit.acquire()
                try:
                    # With the slot in hand, right before sending: a Retry-After that
                    # arrived while this request waited for its slot holds it too.
                    await self._wait_for_turn(estimate)
                    check_send(self.max_requests, self.model.spec, self._sends)
                    self._sends += 1
                    response = await self.model.generate(request)
                finally:
                    await self.limit.release()
            except ModelError as exc:
                exc = self._scrub.error(exc)  # a server may echo the request: before any message shows it
                if exc.fatal:
                    log.error("%s: %s", self.model.spec, exc)
                    raise FatalModelError(_fatal_sentence(self.model.spec, exc)) from None
                if self.tpm:
                    self.tpm.settle(-estimate)  # a failed request used no tokens
                if is_throttle(exc):
                    self.stats.throttled += 1
                    self.limit.throttled()
                    self.stats.min_concurrency = self.limit.lowest
                    log.warning("%s throttles (%s): %d requests in flight at most", self.model.spec, exc,
                                self.limit.limit)
                self._last_error[exc.kind] = str(exc)
                if attempt >= self.retries.retries_for(exc, answered=self.stats.answered):
                    log.warning("%s: a request failed after %d retries (%s: %s)", self.model.spec, attempt,
                                exc.kind, exc)
                    return Response.failure(exc.kind, str(exc))
                self.retries.check_wait(self.model.spec, exc.retry_after)  # a wait too long stops the run
                delay = self.retries.delay(attempt, exc.retry_after)
                self._show_wait(delay, exc)
                log.info("%s: retry %d in %.2f s after %s: %s", self.model.spec, attempt + 1, delay, exc.kind, exc)
                if hasattr(self.progress, "retried"):  # a display of ours, not any object with expect/advance
                    self.progress.retried(throttled=is_throttle(exc), in_flight=self.limit.limit)  # type: ignore[union-attr]
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

    def _show_wait(self, delay: float, exc: ModelError) -> None:
        """A retry wait long enough to look like a hang gets a line saying until when (one per hold)."""
        until = time.monotonic() + delay
        if delay < SHOW_WAIT or until < self._shown_until + SHOW_WAIT:
            return
        self._shown_until = until
        clock = time.strftime("%H:%M:%S", time.localtime(time.time() + delay))
        why = "as the server asked (Retry-After)" if exc.retry_after is not None else f"after {exc.kind}"
        self._say(f"Waiting {delay:,.0f} s, until {clock}, before sending again to {self.model.spec}, {why}.")

    def _say(self, line: str) -> None:
        """One line on the progress display, or in the log where there is none."""
        if hasattr(self.progress, "show"):  # a display of ours
            self.progress.show(line)  # type: ignore[union-attr]
        else:
            log.warning(line)

    async def _wait_for_turn(self, tokens: int) -> None:
        """Wait out a Retry-After hold and the rate limits; a hold that starts meanwhile is waited out too."""
        await self._hold()
        if self.rpm:
            await self.rpm.take(1)
        if self.tpm:
            await self.tpm.take(tokens)
        await self._hold()

    async def _hold(self) -> None:
        while (wait := self._resume_at - time.monotonic()) > 0:
            await asyncio.sleep(wait)

    def _estimate_tokens(self, request: Request) -> int:
        return self._tokens.prompt_tokens(request) + (request.params.max_tokens or 16)

    # -- bookkeeping -----------------------------------------------------

    def receive(self, r: Response, request: Request) -> None:
        """Where every answer enters the run (from the model, or from a store that may predate
        these rules), before the store, the records or a reader sees it: the run's credentials
        scrubbed from it (a server may echo them), and an answer longer than its bound cut
        (genderprobe.engine.answer_bound). In place."""
        if self._scrub.secrets:
            self._scrub.response(r)
        if r.cut_from is None and len(r.text or "") <= FLOOR and len(r.reasoning or "") <= FLOOR:
            return  # nearly every answer (millions in a large run): no call further
        cut(r, request)
        if r.cut_from is not None:
            self.stats.cut += 1

    def tally(self, r: Response) -> int:
        """Add one finished request to the stats; 1 if it is an error (count it only once it is kept).

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

    def advance(self, n: int, *, cached: int = 0, errors: int = 0, tokens: int = 0) -> None:
        """Move the progress display on by ``n`` finished requests."""
        if self.progress is not None and n:
            self.progress.advance(n, cached=cached, errors=errors, tokens=tokens)  # type: ignore[attr-defined]


def _done() -> Future[None]:
    """A commit with nothing to commit."""
    future: Future[None] = Future()
    future.set_result(None)
    return future


def _fatal_sentence(spec: str, exc: ModelError) -> str:
    return f"The run stopped because {exc}."
