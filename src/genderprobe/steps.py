"""The steps under way that a user may wait on: what they are, how far they are, since when.

Code that may be slow without sending requests (bootstraps, a plan's simulations, a
report, local weights generating one long batch) wraps its work in :func:`step`, and,
where it knows its total, moves the count with :meth:`Step.advance` or :func:`advance`.
That costs a list append and an attribute write: nothing is printed here.
:mod:`genderprobe.outputs.activity` shows the innermost step once it has run a while,
where an entry point with a user watching asked it to; elsewhere steps show nothing.

While a runner asks a model (:func:`asking`), the request progress has the floor: the
steps outside the asking are not shown, those inside it (a model's own) are.

This module is in the harness's base room, so that every room may mark its steps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class Step:
    """One step a user may wait on."""

    __slots__ = ("what", "total", "unit", "done", "started")

    def __init__(self, what: str | None, total: int | None = None, unit: str = ""):
        self.what = what  # None: a runner is asking, the request progress speaks
        self.total = total
        self.unit = unit
        self.done = 0
        self.started = time.monotonic()

    def advance(self, n: int = 1) -> None:
        self.done += n

    def restart(self, what: str, total: int | None = None, unit: str = "") -> None:
        """The same step goes on as another: its count and clock from zero."""
        self.what, self.total, self.unit, self.done = what, total, unit, 0
        self.started = time.monotonic()

    def eta(self, now: float) -> float | None:
        elapsed = now - self.started
        if not self.total or not 0 < self.done < self.total or elapsed <= 0:
            return None
        return elapsed / self.done * (self.total - self.done)


# The steps under way in this process, innermost last. A list, not a context variable: the
# steps of a model's worker thread belong to the run that the main thread shows.
_steps: list[Step] = []
_lock = threading.Lock()
# Told of every step that ends, and whether it finished (the display, which says "done" where it showed it).
on_end: Callable[[Step, bool], None] | None = None


@contextmanager
def step(what: str, total: int | None = None, unit: str = "") -> Iterator[Step]:
    """A step that may be slow; ``total`` where its count is known (``unit``: what it counts)."""
    with _under_way(Step(what, total, unit)) as s:
        yield s


@contextmanager
def asking() -> Iterator[Step]:
    """A runner asks a model: its request progress shows that, so the steps around it are not shown."""
    with _under_way(Step(None)) as s:
        yield s


@contextmanager
def _under_way(s: Step) -> Iterator[Step]:
    with _lock:
        _steps.append(s)
    finished = False
    try:
        yield s
        finished = True
    finally:
        with _lock:
            _steps.remove(s)
        told = on_end
        if told is not None:
            told(s, finished)


def advance(n: int = 1) -> None:
    """Move the innermost step's count on, from code that does not hold it (nothing where none is under way)."""
    try:
        _steps[-1].done += n
    except IndexError:
        pass


def shown_steps() -> list[Step]:
    """The steps after the last asking, outermost first: what a status shows."""
    with _lock:
        steps = list(_steps)
    shown: list[Step] = []
    for s in steps:
        shown = [] if s.what is None else [*shown, s]
    return shown


def status_line(steps: list[Step], now: float) -> str:
    """'planning demet · simulating runs of 20 per type… 400 of 1,000 runs, 12 s, ETA 18 s'."""
    counted = next((s for s in reversed(steps) if s.total), None)
    parts = []
    if counted is not None:
        parts.append(f"{counted.done:,} of {counted.total:,}" + (f" {counted.unit}" if counted.unit else ""))
    parts.append(f"{now - steps[0].started:,.0f} s")
    eta = counted.eta(now) if counted is not None else None
    if eta is not None:
        parts.append(f"ETA {eta:,.0f} s")
    return " · ".join(str(s.what) for s in steps) + "… " + ", ".join(parts)


class QuietWhileAsking:
    """A runner (any ``requests -> responses`` callable) whose calls are :func:`asking`.

    ``then`` renames ``after``, the step around the caller, once an answer list is back:
    what the caller does with the answers (a probe reads them and computes its metrics)."""

    def __init__(self, ask: Callable[[Any], Any], after: Step | None = None, then: str = ""):
        self._ask, self._after, self._then = ask, after, then

    def __call__(self, requests: Any) -> Any:
        with asking():
            answers = self._ask(requests)
        if self._after is not None and self._then:
            self._after.restart(self._then)
        return answers
