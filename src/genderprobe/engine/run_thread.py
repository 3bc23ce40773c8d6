"""A run in a thread of its own, for callers inside a running event loop (a notebook cell).

The runner drives its own event loop, which cannot start inside a running
one; in a thread it can. Ctrl-C reaches only the main thread, so waiting
passes it on to the run, which then stores the answers received and closes
its model before it ends.
"""

from __future__ import annotations

import asyncio
import ctypes
import threading
from collections.abc import Callable
from typing import Any


def in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class RunThread:
    """One run in a thread of its own, where the runner can start its own event loop.

    Callers wait on ``finished``, not on Thread.join: a join interrupted by
    Ctrl-C can mark a thread that is still running as stopped (CPython 3.11).
    """

    def __init__(self, run: Callable[[], Any]):
        self.finished = threading.Event()
        self._output: Any | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, args=(run,), name="genderprobe-run", daemon=True)
        self._thread.start()

    def _main(self, run: Callable[[], Any]) -> None:
        try:
            self._output = run()
        except BaseException as exc:  # handed to the caller's thread, which raises it
            self._error = exc
        finally:
            self.finished.set()

    def outcome(self) -> Any:
        if self._error is not None:
            raise self._error
        assert self._output is not None
        return self._output

    def interrupt(self) -> None:
        """Raise KeyboardInterrupt in the run, as Ctrl-C does in the main thread: the runner
        stores the answers received and the model is closed before the run ends."""
        if not self.finished.is_set():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._thread.ident),
                                                       ctypes.py_object(KeyboardInterrupt))


def wait_for(worker: RunThread) -> Any:
    try:
        worker.finished.wait()
    except KeyboardInterrupt:  # Ctrl-C reaches only the main thread: pass it on to the run
        worker.interrupt()
        worker.finished.wait()  # a second Ctrl-C leaves without waiting
        raise
    return worker.outcome()
