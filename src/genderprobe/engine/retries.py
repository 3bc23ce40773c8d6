"""Retries: which failed requests are asked again, how often, and how long to wait first.

A transient failure (a timeout, a 5xx, a throttle) is asked again up to
``max_retries`` times, after an exponential backoff with equal jitter; a
Retry-After the server sends is the floor of the wait instead (capped at
``max_retry_after``). A server that refused every connection before it ever
answered is most likely not there (a wrong URL or port): it gets
``FIRST_CONTACT_RETRIES`` tries, so the user hears so in about a second.
Fatal errors (a bad key, an unknown model) are never retried; the runner
stops on them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from genderprobe.errors import ModelError

# Failures that say the server is throttling: the runner also halves the requests in flight.
THROTTLE_KINDS = frozenset({"rate_limit", "overloaded"})
# Retries of a refused connection before the server has answered once.
FIRST_CONTACT_RETRIES = 2


def is_throttle(exc: ModelError) -> bool:
    return exc.kind in THROTTLE_KINDS or exc.status == 503


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 60.0
    max_retry_after: float = 300.0

    def retries_for(self, exc: ModelError, *, answered: int) -> int:
        """How many retries ``exc`` gets, given how many answers the server has sent so far."""
        if exc.kind == "connect" and answered == 0:
            return min(self.max_retries, FIRST_CONTACT_RETRIES)
        return self.max_retries

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before retry ``attempt + 1``: a Retry-After with a little jitter on top, else equal jitter."""
        if retry_after is not None:
            wait = min(retry_after, self.max_retry_after)
            return wait * random.uniform(1.0, 1.1)
        ceiling = min(self.backoff_max, self.backoff_base * 2**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)
