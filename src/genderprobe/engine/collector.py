"""Python's cycle collector paused while a probe builds, asks and counts one chunk of a large run.

A chunk holds hundreds of thousands of short-lived objects (requests, answers, prompts), which
reference counting frees when the chunk ends; none is in a cycle. Left running, the collector
walks every live object at each full collection, and a chunk's allocations set one off again
and again: a third of a million-item RelationshipLevy run went to walks that collected
nothing. Paused for the chunk, it walks them never; the cycles made meanwhile (few, and
bounded by one chunk) are collected once it runs again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection inside the block; it runs again after it, unless it was off before."""
    if not gc.isenabled():  # an outer pause, or a program that turned it off: leave it as it is
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
