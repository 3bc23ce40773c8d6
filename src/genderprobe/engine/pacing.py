"""Pacing the requests: per-minute limits (a token bucket) and how many may be in flight (AIMD)."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from genderprobe.errors import UserError


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
