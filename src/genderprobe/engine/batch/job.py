"""Answer a run's missing requests through the provider's batch API, never paying twice.

The order of events is what keeps a request from being paid for twice:

1. Open batches of this model in the ledger that cover missing requests are
   resumed: polled if their id is known, looked for at the provider (and
   adopted) if a run died before recording it.
2. Only requests no open batch covers are submitted, in batches within the
   provider's limits: claim them (genderprobe.engine.claims; those another
   live run claimed first are left to the normal path, which waits for that
   run's answers), upload (OpenAI), record the row, create, record the id.
3. Every batch is polled until it ends; its answers go to the store the moment
   they are read (flushed every ``FLUSH_EVERY`` answers and at the end of each
   batch), and only then is the batch marked finished.

Requests a batch does not answer (expired, cancelled, failed, a per-request
error, an answer that cannot be read) are left as None: the runner sends them
the normal way right after.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from genderprobe.engine.batch.ledger import BatchRow, Ledger
from genderprobe.engine.batch.provider import BatchProvider, BatchRejected, BatchUnavailable, Poll
from genderprobe.engine.claims import Claimed
from genderprobe.engine.empty_answers import mark_empty
from genderprobe.engine.store_writer import StoreFailed
from genderprobe.errors import RunFailed, UserError
from genderprobe.models.base import Model, Request, Response

SUBMIT_ATTEMPTS = 5
FLUSH_EVERY = 1000
# Give up polling after this long without one good answer from the batch API
# (at least ten poll intervals); the ids are kept, so a rerun picks up from there.
LOST_CONTACT_S = 900.0


class Runner(Protocol):
    """What a batch job needs of the runner (genderprobe.engine.runner.Runner) that sends it."""

    model: Model
    store: Any  # a genderprobe.engine.store.Store, or None
    stats: Any  # the runner's RunStats: a batch adds its answers and tokens to them
    batch_poll_interval: float

    def keep(self, items: list[tuple[bytes, Response, Request | None]]) -> None: ...
    def claim(self, keys: list[bytes]) -> concurrent.futures.Future[Claimed]: ...
    def tally(self, r: Response) -> int: ...
    def receive(self, r: Response, request: Request) -> None: ...
    def advance(self, n: int, *, cached: int = 0, errors: int = 0, tokens: int = 0) -> None: ...
    def event_loop(self) -> asyncio.Runner: ...


def provider_for(model: Model) -> BatchProvider:
    """The batch API behind ``model``; one sentence (:class:`UserError`) if it has none."""
    from genderprobe.models.openai_compatible import OpenAICompatible

    if isinstance(model, OpenAICompatible):
        from genderprobe.engine.batch.openai_files import OpenAIBatches

        return OpenAIBatches(model)
    try:
        from genderprobe.models.anthropic_messages import AnthropicMessages
    except ImportError:  # the anthropic extra is not installed, so no model can be one
        AnthropicMessages = None  # type: ignore[assignment,misc]  # noqa: N806
    if AnthropicMessages is not None and isinstance(model, AnthropicMessages):
        from genderprobe.engine.batch.anthropic_batches import AnthropicBatches

        return AnthropicBatches(model)
    if type(model).__module__.startswith("genderprobe.engine.executors"):
        raise _no_batch_api(model.spec, POOLED)
    raise _no_batch_api(model.spec, LOCAL if model.batch_native else "through an API without a batch endpoint")


POOLED = "through a pool of workers (--executor), which sends request by request"
LOCAL = "on this machine, free of charge"
LOCAL_BACKENDS = ("reference", "hf", "vllm")


def _no_batch_api(spec: str, where: str) -> UserError:
    return UserError(f"--batch needs a provider batch API (openai: or anthropic:); {spec} answers {where}, "
                     f"so drop --batch.")


def refuse_batch_early(spec: str, executor: str) -> None:
    """Refuse --batch from the spec alone where that suffices: before local weights load or workers start."""
    if executor != "local":
        raise _no_batch_api(spec, POOLED)
    if spec.partition(":")[0] in LOCAL_BACKENDS:
        raise _no_batch_api(spec, LOCAL)


def require_batch_api(model: Model) -> None:
    """Refuse --batch, in one sentence, for a model without a provider batch API."""
    provider_for(model)


def answer_by_batch(
    runner: Runner,
    requests: Sequence[Request],
    keys: Sequence[bytes],
    missing: Sequence[int],
    responses: list[Response | None],
) -> None:
    """Fill ``responses[i]`` for the ``missing`` indices that a provider batch answers."""
    provider = provider_for(runner.model)
    if runner.store is None:
        raise UserError(
            "--batch keeps its batch ids in the response store, so it cannot run with --no-cache; "
            "drop one of them."
        )
    job = BatchJob(runner, provider, requests, keys, missing, responses)
    # The runner's loop: the model's HTTP session must live on the loop the normal path uses.
    runner.event_loop().run(job.run())


class BatchJob:
    def __init__(
        self,
        runner: Runner,
        provider: BatchProvider,
        requests: Sequence[Request],
        keys: Sequence[bytes],
        missing: Sequence[int],
        responses: list[Response | None],
    ):
        self.runner = runner
        self.provider = provider
        self.requests = requests
        self.responses = responses
        self.identity = runner.model.identity
        assert runner.store is not None
        self.ledger = Ledger(runner.store)
        # Store key -> the missing requests it answers (a prompt may repeat in a run).
        self.wanted: dict[bytes, list[int]] = {}
        for i in missing:
            self.wanted.setdefault(keys[i], []).append(i)
        self._uncounted: list[Response] = []
        self._unkept: list[tuple[bytes, Response, Request]] = []

    async def run(self) -> None:
        try:
            rows = await self._resume()
            covered = {k for row in rows for k in row.keys}
            fresh = [k for k in self.wanted if k not in covered]
            if fresh:  # two runs started together on one store would each pay for a batch of the same requests
                fresh = (await asyncio.wrap_future(self.runner.claim(fresh))).mine
            for chunk in self._chunks(fresh):
                rows.append(await self._submit(chunk))
            await self._poll(rows)
        except StoreFailed as exc:
            # Answers of a batch not marked done are read again by the next run, free of charge.
            raise StoreFailed(f"{str(exc).rstrip('.')}; the batches stay open in the ledger, so the next run "
                              f"reads their answers again without paying for them.") from None
        finally:
            # Also on Ctrl-C (a cancellation here): what was read is kept.
            self._flush()

    # -- submitting ----------------------------------------------------------

    async def _resume(self) -> list[BatchRow]:
        rows = []
        for row in self.ledger.open_rows(self.provider.name, self.identity):
            if not any(k in self.wanted for k in row.keys):
                continue  # another run's batch: left for the run that needs it
            if row.batch_id is None and not await self._create(row, None):
                continue  # abandoned: its keys are submitted afresh
            rows.append(row)
        return rows

    def _chunks(self, fresh: list[bytes]) -> Iterator[list[tuple[bytes, Any]]]:
        limits = self.provider.limits
        chunk: list[tuple[bytes, Any]] = []
        size = 0
        for key in fresh:
            encoded = self.provider.encode(key, self.requests[self.wanted[key][0]])
            if encoded is None or encoded[1] > limits.bytes:
                continue  # goes the normal way
            item, n = encoded
            if chunk and (len(chunk) >= limits.requests or size + n > limits.bytes):
                yield chunk
                chunk, size = [], 0
            chunk.append((key, item))
            size += n
        if chunk:
            yield chunk

    async def _submit(self, chunk: list[tuple[bytes, Any]]) -> BatchRow:
        items = [item for _, item in chunk]
        file_id = None
        for attempt in range(SUBMIT_ATTEMPTS):
            try:
                # An upload costs nothing and may be repeated; only the batch is paid for.
                file_id = await self.provider.upload(items)
                break
            except BatchUnavailable as exc:
                if attempt + 1 == SUBMIT_ATTEMPTS:
                    raise RunFailed(
                        f"Could not upload the batch input for {self.runner.model.spec} ({exc}); "
                        f"run again later."
                    ) from None
                await asyncio.sleep(self._backoff(attempt))
        row = self.ledger.add(self.provider.name, self.identity, [k for k, _ in chunk], file_id)
        await self._create(row, items)
        return row

    async def _create(self, row: BatchRow, items: list[Any] | None) -> bool:
        """Give ``row`` its batch: the one already created for it if the provider
        has it, else a new one. False if the row cannot be completed (abandoned)."""
        resuming = items is None
        last: Exception | None = None
        for attempt in range(SUBMIT_ATTEMPTS):
            try:
                # Before any retry, and when resuming, look first: a create call whose
                # answer was lost may have created the batch all the same.
                if resuming or attempt > 0:
                    found = await self.provider.find(
                        row, self.ledger.known_batch_ids(self.provider.name)
                    )
                    if found is not None:
                        self.ledger.set_batch_id(row, found)
                        return True
                batch_id = await self.provider.create(row, items)
            except BatchUnavailable as exc:
                last = exc
                await asyncio.sleep(self._backoff(attempt))
                continue
            except BatchRejected as exc:
                if resuming:
                    self.ledger.set_status(row, "ended", "abandoned")
                    return False
                raise UserError(
                    f"The batch API of {self.runner.model.spec} refused the batch ({exc}); "
                    f"drop --batch to send the requests one by one."
                ) from None
            self.ledger.set_batch_id(row, batch_id)
            return True
        raise RunFailed(
            f"Could not create a batch for {self.runner.model.spec} ({last}); the submission is "
            f"recorded, so run again to resume it without paying twice."
        )

    def _backoff(self, attempt: int) -> float:
        return min(60.0, self.runner.batch_poll_interval * 2**attempt)

    # -- polling and reading -------------------------------------------------

    async def _poll(self, rows: list[BatchRow]) -> None:
        pending = list(rows)
        seen: dict[str, str] = {}
        interval = self.runner.batch_poll_interval
        patience = max(LOST_CONTACT_S, 10 * interval)
        last_contact = time.monotonic()
        while pending:
            still = []
            for row in pending:
                assert row.batch_id is not None
                try:
                    poll = await self.provider.poll(row.batch_id)
                    complete = await self._read(row, poll) if poll.terminal else False
                except BatchRejected:
                    # The provider refuses to hand the results over: nothing more will come of it.
                    self.ledger.set_status(row, "ended", "unreadable")
                    continue
                except BatchUnavailable as exc:
                    if time.monotonic() - last_contact > patience:
                        raise RunFailed(
                            f"Lost contact with the batch API of {self.runner.model.spec} ({exc}); "
                            f"the batch ids are kept, so run again to resume polling."
                        ) from None
                    still.append(row)
                    continue
                last_contact = time.monotonic()
                if not poll.terminal:
                    if seen.get(row.submission) != poll.status:
                        seen[row.submission] = poll.status
                        self.ledger.set_status(row, "live", poll.status)
                    still.append(row)
                    continue
                # Never polled again by this run; a batch that holds answers no request
                # of this run can read stays open for the run that can.
                status = ("done" if poll.finished else "ended") if complete else "live"
                self.ledger.set_status(row, status, poll.status)
            pending = still
            if pending:
                await asyncio.sleep(interval)

    async def _read(self, row: BatchRow, poll: Poll) -> bool:
        """Keep every answer of a finished batch; True if none is left unread."""
        assert row.batch_id is not None
        mine = set(row.keys)
        unread: list[bytes] = []
        async for key, payload in self.provider.results(row.batch_id, poll):
            if key not in mine or payload is None:
                continue
            indices = self.wanted.get(key)
            if not indices:
                unread.append(key)  # no request of this run to read it with
                continue
            if all(self.responses[i] is not None for i in indices):
                continue  # read before a retry of this batch
            response = self.provider.to_response(payload, self.requests[indices[0]])
            if response is not None:
                self._keep(key, response, indices)
        self._flush()
        if unread:
            assert self.runner.store is not None
            stored = self.runner.store.get_many(unread)
            return all(k in stored for k in unread)
        return True

    def _keep(self, key: bytes, response: Response, indices: list[int]) -> None:
        self.runner.receive(response, self.requests[indices[0]])
        mark_empty(response)  # before it is stored: an empty answer is kept among the errors
        self._unkept.append((key, response, self.requests[indices[0]]))
        for i in indices:
            if self.responses[i] is None:
                self.responses[i] = response
                self._uncounted.append(response)
        if len(self._unkept) >= FLUSH_EVERY:
            self._flush()

    def _flush(self) -> None:
        """Make the answers read durable, then count them (never the other way round)."""
        unkept, self._unkept = self._unkept, []  # kept or spilled once, even when keeping fails
        self.runner.keep(unkept)
        if not self._uncounted:
            return
        errors = tokens = 0
        stats = self.runner.stats
        for response in self._uncounted:
            errors += self.runner.tally(response)
            tokens += response.prompt_tokens + response.completion_tokens
            stats.batched += 1
            stats.batch_prompt_tokens += response.prompt_tokens
            stats.batch_completion_tokens += response.completion_tokens
        self.runner.advance(len(self._uncounted), errors=errors, tokens=tokens)
        self._uncounted.clear()
