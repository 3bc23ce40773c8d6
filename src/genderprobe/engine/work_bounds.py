"""Bounds on a run's total work, checked before a single prompt is built.

A probe that can count its model requests from its parameters alone (by
arithmetic: items x orders x repetitions) reports the count through
``expected_records()``. Above ``--max-requests`` (default
:data:`DEFAULT_MAX_REQUESTS`, which the whole RelationshipLevy space fits) a
run stops with one sentence before building anything, and ``--dry-run``
reports the count without building the prompts. Probes that cannot count
ahead are held to the same limit by the runner, list by list. And the limit
bounds what is sent, retries included: the runner refuses the send past it
(:func:`check_send`), so a server that fails often gets no more requests than
the limit either.
"""

from __future__ import annotations

from typing import Any

from genderprobe.errors import FatalModelError, RunFailed, UserError

# The full RelationshipLevy space (17,440,000 items, two orders: 34,880,000 requests) fits under it.
DEFAULT_MAX_REQUESTS = 40_000_000


def planned_requests(probe: Any) -> int | None:
    """The model requests the probe will make, counted from its parameters; None where it cannot say."""
    return probe.expected_records()


def check_work(probe: Any, limit: int | None, *, dry_run: bool) -> int | None:
    """Refuse a run above ``limit`` requests in one sentence; a dry run gets the count back instead."""
    n = planned_requests(probe)
    if n is None or limit is None or n <= limit:
        return None
    if dry_run:
        return n
    raise UserError(
        f"{probe.name} with these parameters would send {n:,} requests to the model, more than the "
        f"{limit:,} --max-requests allows; choose fewer items or repetitions, or raise --max-requests "
        f"if you mean it (--dry-run counts them first)."
    )


def check_running_total(limit: int | None, model: str, so_far: int) -> None:
    """For probes that cannot count ahead: refuse, list by list, before anything above the limit is sent."""
    if limit is not None and so_far > limit:
        raise UserError(
            f"This run asks {model} for more than {limit:,} requests ({so_far:,} so far), the limit "
            f"--max-requests sets; choose fewer items or repetitions, or raise --max-requests if you mean it."
        )


class SendLimitReached(FatalModelError, RunFailed):
    """--max-requests sends were made: the run stops as on a fatal error (nothing more is sent)
    and exits 1 as a run-time failure, every answer kept."""


def check_send(limit: int | None, model: str, sent: int) -> None:
    """Before each send (retries included): refuse the one past ``limit``; ``sent`` were sent already."""
    if limit is not None and sent >= limit:
        raise SendLimitReached(
            f"The run sent {model} the {limit:,} requests --max-requests allows, retries included; every answer "
            f"received is kept in the store, so run again to send the rest, or raise --max-requests."
        )


def check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise UserError(f"--max-requests must be a whole number of at least 1; got {limit!r}.")
    return limit
