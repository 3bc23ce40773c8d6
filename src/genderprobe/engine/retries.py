"""Retries: which failed requests are asked again, how often, and how long to wait first.

A transient failure (a timeout, a 5xx, a throttle) is asked again up to
``max_retries`` times, after an exponential backoff with equal jitter; a
Retry-After the server sends is the floor of the wait instead, never cut
short: a request is not sent before the time the server named. A Retry-After
longer than ``max_retry_after`` (``--max-retry-wait``, default
:data:`MAX_RETRY_WAIT` seconds) stops the run (:class:`RetryWaitTooLong`,
exit 1, every answer kept) instead of waiting in silence. A server that
refused every connection before it ever answered is most likely not there (a
wrong URL or port): it gets ``FIRST_CONTACT_RETRIES`` tries, so the user
hears so in about a second.
Fatal errors (a bad key, an unknown model) are never retried; the runner
stops on them.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from genderprobe.errors import FatalModelError, ModelError, RunFailed

# Failures that say the server is throttling: the runner also halves the requests in flight.
THROTTLE_KINDS = frozenset({"rate_limit", "overloaded"})
# Retries of a refused connection before the server has answered once.
FIRST_CONTACT_RETRIES = 2
# The longest Retry-After waited out unless --max-retry-wait says otherwise, in seconds.
MAX_RETRY_WAIT = 300.0


class RetryWaitTooLong(FatalModelError, RunFailed):
    """The server asked for a longer wait than --max-retry-wait allows: the run stops as on a
    fatal error (nothing more is sent) and exits 1 as a run-time failure, every answer kept."""


def is_throttle(exc: ModelError) -> bool:
    return exc.kind in THROTTLE_KINDS or exc.status == 503


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 60.0
    max_retry_after: float = MAX_RETRY_WAIT

    def retries_for(self, exc: ModelError, *, answered: int) -> int:
        """How many retries ``exc`` gets, given how many answers the server has sent so far."""
        if exc.kind == "connect" and answered == 0:
            return min(self.max_retries, FIRST_CONTACT_RETRIES)
        return self.max_retries

    def check_wait(self, model: str, retry_after: float | None) -> None:
        """Raise :class:`RetryWaitTooLong` when the server asks for a wait beyond ``max_retry_after``."""
        if retry_after is None or retry_after <= self.max_retry_after:
            return
        until = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(time.time() + retry_after))
        raise RetryWaitTooLong(
            f"{model} asked to wait {retry_after:,.0f} s (Retry-After, until {until}) before the next request, "
            f"longer than --max-retry-wait {self.max_retry_after:g} allows; every answer received is kept in the "
            f"store, so run again after that time, or raise --max-retry-wait to wait it out."
        )

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before retry ``attempt + 1``: a Retry-After with a little jitter on top, else equal jitter."""
        if retry_after is not None:
            return retry_after * random.uniform(1.0, 1.1)  # never before the time the server named
        ceiling = min(self.backoff_max, self.backoff_base * 2**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)
