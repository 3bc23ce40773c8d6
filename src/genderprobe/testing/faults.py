"""Faults a test server injects on demand.

Three sources, checked in order for every request: a queue of faults for the
next requests (``push``), a fault for every request (``always``), and seeded
random rates per kind (``rates``). Each injected fault is counted by kind.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Mapping

FAULT_KINDS = (
    "429",  # rate limited, with Retry-After
    "500",
    "503",
    "drop",  # connection closed before any response
    "truncate",  # headers sent, body cut off mid-way
    "slow",  # answers only after slow_seconds (longer than a client timeout)
    "malformed",  # HTTP 200 with a body that is not JSON
    "empty",  # HTTP 200 with "content": null (a server that sends no text)
    "400",
    "401",
    "403",
    "404",
    "529",  # Anthropic's "overloaded"
)


class Faults:
    def __init__(self, rates: Mapping[str, float] | None = None, *, seed: int = 0):
        self._lock = threading.Lock()
        self._queue: list[str] = []
        self._always: str | None = None
        self._rates: dict[str, float] = {}
        self._rng = random.Random(seed)
        self.injected: Counter[str] = Counter()
        if rates:
            self.set_rates(rates)

    def push(self, *kinds: str) -> None:
        """The next requests get these faults, one each, in order."""
        for kind in kinds:
            _check(kind)
        with self._lock:
            self._queue.extend(kinds)

    def always(self, kind: str | None) -> None:
        """Every request gets this fault (None: stop)."""
        if kind is not None:
            _check(kind)
        with self._lock:
            self._always = kind

    def set_rates(self, rates: Mapping[str, float], *, seed: int | None = None) -> None:
        """Each request independently gets fault ``kind`` with probability ``rates[kind]``."""
        for kind, rate in rates.items():
            _check(kind)
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"fault rate for {kind} must lie in [0, 1]")
        if sum(rates.values()) > 1.0:
            raise ValueError("fault rates must sum to at most 1")
        with self._lock:
            self._rates = dict(rates)
            if seed is not None:
                self._rng = random.Random(seed)

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self._always = None
            self._rates = {}

    def draw(self) -> str | None:
        """The fault for the request now arriving, or None."""
        with self._lock:
            kind: str | None = None
            if self._queue:
                kind = self._queue.pop(0)
            elif self._always is not None:
                kind = self._always
            elif self._rates:
                u = self._rng.random()
                for name, rate in self._rates.items():
                    if u < rate:
                        kind = name
                        break
                    u -= rate
            if kind is not None:
                self.injected[kind] += 1
            return kind


def _check(kind: str) -> None:
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULT_KINDS)}")
