"""Anthropic's Message Batches API, through the official SDK client the model already holds.

Message batches carry no metadata, so a batch whose id was never recorded (the
run died while the create call was under way) is recognised by its size and
creation time; its results name their own store keys, so even a wrong guess
could never attach an answer to the wrong request.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic

from genderprobe.engine.batch.failures import status_failure
from genderprobe.engine.batch.ledger import BatchRow, custom_id, key_of
from genderprobe.engine.batch.provider import BatchRejected, BatchUnavailable, Limits, Poll
from genderprobe.models.anthropic_messages import AnthropicMessages, read_message
from genderprobe.models.base import Request, Response
from genderprobe.models.openai_compatible import public_url

# The documented limits are 100,000 requests and 256 MB per batch; the byte
# cap leaves room for the JSON around the requests.
MAX_REQUESTS = 100_000
MAX_BYTES = 240_000_000
# A batch created for a row lies within this window of the row's time (the
# create call's duration plus the two clocks' difference).
WINDOW_BEFORE_S = 600.0
WINDOW_AFTER_S = 1800.0
TRANSFER_TIMEOUT_S = 600.0


class AnthropicBatches:
    name = "anthropic"
    limits = Limits(MAX_REQUESTS, MAX_BYTES)

    def __init__(self, model: AnthropicMessages):
        self.model = model

    @property
    def _batches(self) -> Any:
        return self.model.client().messages.batches

    # -- submitting ----------------------------------------------------------

    def encode(self, key: bytes, request: Request) -> tuple[Any, int] | None:
        if request.score_options:
            return None  # no log-probabilities here; the normal path says so
        params = self.model.payload(request)
        # A batch request has no extra_body: its fields belong in the params themselves.
        params.update(params.pop("extra_body", None) or {})
        item = {"custom_id": custom_id(key), "params": params}
        return item, len(json.dumps(item, ensure_ascii=False).encode())

    async def upload(self, items: list[Any]) -> str | None:
        return None  # the requests travel with the create call

    async def create(self, row: BatchRow, items: list[Any] | None) -> str:
        if items is None:
            raise BatchRejected("the requests of an unrecorded Anthropic batch are not kept")
        batch = await self._sdk(
            self._batches.create(requests=items, timeout=TRANSFER_TIMEOUT_S),
            "create the batch",
            creating=True,
        )
        return batch.id

    async def find(self, row: BatchRow, known: set[str]) -> str | None:
        best: tuple[float, str] | None = None
        pages = self._batches.list(limit=100)
        try:
            async for batch in pages:
                created = _timestamp(batch.created_at)
                if created is None:
                    continue
                if created < row.created - WINDOW_BEFORE_S:
                    break  # newest first: older batches cannot be this row's
                counts = batch.request_counts
                total = sum(
                    int(getattr(counts, f, 0) or 0)
                    for f in ("processing", "succeeded", "errored", "canceled", "expired")
                )
                if (
                    batch.id in known
                    or total != len(row.keys)
                    or created > row.created + WINDOW_AFTER_S
                ):
                    continue
                distance = abs(created - row.created)
                if best is None or distance < best[0]:
                    best = (distance, batch.id)
        except anthropic.APIError as exc:
            raise self._error(exc, "list the batches") from None
        return best[1] if best else None

    # -- polling and reading -------------------------------------------------

    async def poll(self, batch_id: str) -> Poll:
        try:
            batch = await self._sdk(self._batches.retrieve(batch_id), "check the batch")
        except BatchRejected:
            return Poll("gone", terminal=True, finished=False)
        status = str(batch.processing_status)
        return Poll(status, terminal=status == "ended", finished=True)

    async def results(self, batch_id: str, poll: Poll) -> AsyncIterator[tuple[bytes, Any]]:
        try:
            lines = await self._batches.results(batch_id, timeout=TRANSFER_TIMEOUT_S)
            async for item in lines:
                key = key_of(getattr(item, "custom_id", None))
                if key is None:
                    continue
                result = getattr(item, "result", None)
                succeeded = getattr(result, "type", None) == "succeeded"
                yield key, (result.message if succeeded else None)
        except anthropic.APIStatusError as exc:
            if exc.status_code == 404:
                return  # archived or deleted: its answers are gone
            raise self._error(exc, "read the batch results") from None
        except anthropic.APIError as exc:
            raise self._error(exc, "read the batch results") from None
        except anthropic.AnthropicError as exc:  # e.g. no results_url yet
            raise BatchUnavailable(f"could not read the batch results ({exc})") from None
        except ValueError:
            raise BatchUnavailable("the batch results were not valid JSON lines") from None

    def to_response(self, payload: Any, request: Request) -> Response | None:
        try:  # read as the Messages backend reads a normal answer
            return read_message(payload)
        except (AttributeError, TypeError, ValueError):
            return None

    # -- errors --------------------------------------------------------------

    async def _sdk(self, call: Any, what: str, *, creating: bool = False) -> Any:
        try:
            return await call
        except anthropic.APIError as exc:
            raise self._error(exc, what, creating=creating) from None

    def _error(self, exc: anthropic.APIError, what: str, *, creating: bool = False) -> Exception:
        if isinstance(exc, anthropic.APIStatusError):
            return status_failure(
                exc.status_code,
                _detail(exc, self.model),
                spec=self.model.spec,
                url=public_url(self.model.base_url),
                what=what,
                creating=creating,
            )
        if isinstance(exc, anthropic.APITimeoutError):
            return BatchUnavailable(f"no answer within the time limit to {what}")
        if isinstance(exc, anthropic.APIConnectionError):
            return BatchUnavailable(f"could not reach {public_url(self.model.base_url)} to {what}")
        return BatchUnavailable(f"could not {what} ({type(exc).__name__})")


def _detail(exc: anthropic.APIStatusError, model: AnthropicMessages) -> str:
    """ ": message" from the Messages API's error body, or ""."""
    try:
        message = exc.body["error"]["message"]  # type: ignore[index]
    except (KeyError, TypeError, IndexError):
        return ""
    return f": {model._scrub(str(message))[:200]}" if message else ""


def _timestamp(value: Any) -> float | None:
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.timestamp()
    return None
