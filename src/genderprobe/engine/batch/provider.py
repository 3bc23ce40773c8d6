"""What the batch job needs from a provider's batch API, whichever provider it is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from genderprobe.engine.batch.ledger import BatchRow
from genderprobe.models.base import Request, Response


@dataclass(frozen=True)
class Limits:
    """The most one batch may hold: requests, and bytes of request data."""

    requests: int
    bytes: int


@dataclass(frozen=True)
class Poll:
    status: str  # the provider's own word for it
    terminal: bool  # the batch will not change any more
    finished: bool = True  # ended normally (not expired, cancelled, failed or gone)
    output: Any = None  # whatever the provider needs to read the results


class BatchUnavailable(Exception):
    """A failure worth trying again later: no connection, a timeout, throttling, a 5xx."""


class BatchRejected(Exception):
    """The provider refused a batch request for good (a 4xx other than throttling)."""


class BatchProvider(Protocol):
    name: str  # "openai" or "anthropic": the ledger's provider column
    limits: Limits

    def encode(self, key: bytes, request: Request) -> tuple[Any, int] | None:
        """One request as the provider takes it in a batch, with its size in bytes;
        None if it cannot go by batch (it then goes the normal way)."""

    async def upload(self, items: list[Any]) -> str | None:
        """Send the request data ahead of creating the batch; the input file id or None."""

    async def create(self, row: BatchRow, items: list[Any] | None) -> str:
        """Create the batch and return its id. ``items`` is None when resuming a
        submission whose data is already uploaded."""

    async def find(self, row: BatchRow, known: set[str]) -> str | None:
        """The id of a batch created for ``row`` whose id was never recorded, if any."""

    async def poll(self, batch_id: str) -> Poll: ...

    def results(self, batch_id: str, poll: Poll) -> AsyncIterator[tuple[bytes, Any]]:
        """(store key, answer payload or None for a failed request) for every result."""

    def to_response(self, payload: Any, request: Request) -> Response | None:
        """The answer read from a payload, or None if it cannot be read (then the
        request goes the normal way, which reports any lasting problem)."""
