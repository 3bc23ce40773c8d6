"""The requests a run still has to ask, handed to its workers one at a time.

With a store, the keys are claimed a chunk at a time (one write for many
requests; see :mod:`genderprobe.engine.claims`); keys another live process is asking
wait at the back and are looked at again once everything else is handed out,
until their answer is stored (then the claim reads it) or their claim lapses
(then they are asked here). Identical requests in one list are asked once.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from genderprobe.models.base import Response

# Seconds between looks at prompts another process is asking.
WAIT_POLL = 0.25

# chunk of indices -> (indices to ask now, indices another process is asking)
Claim = Callable[[list[int]], Awaitable[tuple[list[int], list[int]]]]


class WorkQueue:
    """Hands out indices of ``missing``; ``claim`` (None: no store) claims them a chunk at a time."""

    def __init__(self, missing: list[int], claim: Claim | None, chunk: int):
        self.todo = deque(missing)
        self.claim = claim
        self.chunk = chunk
        self.ready: deque[int] = deque()
        self.waiting: list[int] = []
        self.stopped = False  # a stop: hand out nothing more
        self._lock = asyncio.Lock()

    async def next(self) -> int | None:
        """The next index to ask, or None when there is none (or the run stops)."""
        while not self.stopped:
            if self.ready:
                return self.ready.popleft()
            async with self._lock:
                if self.ready or self.stopped:
                    continue
                if self.todo:
                    chunk = [self.todo.popleft() for _ in range(min(self.chunk, len(self.todo)))]
                elif self.waiting:
                    await asyncio.sleep(WAIT_POLL)
                    chunk, self.waiting = self.waiting, []
                else:
                    return None
                if self.claim is None:
                    self.ready.extend(chunk)
                else:
                    mine, busy = await self.claim(chunk)
                    self.ready.extend(mine)
                    self.waiting += busy
        return None


def unique_missing(keys: list[bytes], responses: list[Response | None]) -> tuple[list[int], list[tuple[int, int]]]:
    """(indices to ask, (copy, original) pairs): a request identical to an earlier one of the list is asked once."""
    if not keys:
        return [i for i, r in enumerate(responses) if r is None], []
    first: dict[bytes, int] = {}
    missing, copies = [], []
    for i, r in enumerate(responses):
        if r is not None:
            continue
        j = first.setdefault(keys[i], i)
        if j == i:
            missing.append(i)
        else:
            copies.append((i, j))
    return missing, copies
