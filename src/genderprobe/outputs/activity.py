"""A live status for the steps that send no requests: "computing metrics and intervals… 12 s".

The request progress (:class:`genderprobe.outputs.terminal.Progress`) moves while a
model answers; between and after the answers a run can work for minutes with nothing
on the screen. The steps themselves are marked with :mod:`genderprobe.steps`; an entry
point with a user watching (a CLI command, a run with a progress display) wraps its work
in :func:`shown`. A watcher thread then shows the innermost steps once they have run for
:data:`AFTER` seconds: a redrawn line on a terminal, a plain line every :data:`EVERY`
seconds where standard error is a file or a pipe (as the request progress prints), an
output updated in place in a Jupyter notebook; and a last "done in N s" line where a
plain line was printed. A fast step prints nothing; without :func:`shown` (``--quiet``,
``--json``, the Python API outside a notebook) no step prints anything.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from genderprobe import steps

AFTER = 2.0  # seconds of a step before its status appears
EVERY = 5.0  # seconds between plain lines
TICK = 0.25  # how often the watcher looks


class _Watcher(threading.Thread):
    """Looks at the steps every TICK and shows those that have run AFTER seconds."""

    def __init__(self, display: Any, after: float, every: float):
        super().__init__(name="genderprobe-activity", daemon=True)
        self.display, self.after, self.every = display, after, every
        self.halt = threading.Event()
        self.mutex = threading.Lock()  # a step's own thread reports its end
        self.showing: steps.Step | None = None  # the outermost step of what is shown
        self.last_line = 0.0

    def run(self) -> None:
        while not self.halt.wait(TICK):
            self.look()

    def look(self) -> None:
        with self.mutex:  # read under it, so that a step that has just ended is not shown again
            now = time.monotonic()
            shown = steps.shown_steps()
            if not shown or now - shown[0].started < self.after:
                if self.showing is not None:
                    self.display.hide()
                    self.showing = None
                return
            if shown[0] is not self.showing:
                self.showing, self.last_line = shown[0], 0.0
            if self.display.redraws or now - self.last_line >= self.every:
                self.last_line = now
                self.display.show(steps.status_line(shown, now))

    def ended(self, s: steps.Step, finished: bool) -> None:
        """A step has ended: where it was the one shown, say so once, so that a log does not stop mid-step
        (an error or Ctrl-C says its own)."""
        with self.mutex:
            if s is self.showing:
                self.showing = None
                if finished:
                    self.display.done(f"{s.what}: done in {time.monotonic() - s.started:,.0f} s")
                else:
                    self.display.hide()

    def stop(self) -> None:
        self.halt.set()
        self.join()
        if self.showing is not None:
            self.display.hide()


@contextmanager
def shown(display: Any, *, after: float = AFTER, every: float = EVERY) -> Iterator[None]:
    """Show the steps under way within this block on ``display`` (:func:`display_for`); None shows nothing.

    A block within another shares the outer one's watcher: one status at a time."""
    if display is None or steps.on_end is not None:
        yield
        return
    watcher = _Watcher(display, after, every)
    steps.on_end = watcher.ended
    watcher.start()
    try:
        yield
    finally:
        steps.on_end = None
        watcher.stop()


# -- where the status goes --------------------------------------------------------------


class PlainLines:
    """Plain lines, for logs that cannot redraw (standard error to a file or a pipe)."""

    redraws = False

    def __init__(self, console: Any):
        self.console = console

    def show(self, text: str) -> None:
        self.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def hide(self) -> None:
        pass

    done = show


class RedrawnLine:
    """One line redrawn in place on a terminal: rich's Live, under the request progress bar where that is
    live on the same console; plain lines where this rich cannot hold two live displays (before 14)."""

    redraws = True

    def __init__(self, console: Any):
        self.console = console
        self._live: Any = None
        self._plain: PlainLines | None = None
        self._last = 0.0

    def show(self, text: str) -> None:
        from rich.text import Text

        if self._plain is not None:
            if time.monotonic() - self._last >= EVERY:
                self._last = time.monotonic()
                self._plain.show(text)
            return
        if self._live is None:
            from rich.errors import LiveError
            from rich.live import Live

            live = Live(Text(text, style="dim"), console=self.console, transient=True, refresh_per_second=4)
            try:
                live.start()
            except LiveError:
                self._plain, self._last = PlainLines(self.console), time.monotonic()
                self._plain.show(text)
                return
            self._live = live
        self._live.update(Text(text, style="dim"))

    def hide(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def done(self, text: str) -> None:
        self.hide()


class NotebookLine:
    """One output of a Jupyter cell, updated in place twice a second at most (rich shows nothing live
    there without ipywidgets); it keeps its last words when the step ends."""

    redraws = True

    def __init__(self, every: float = 0.5) -> None:
        self._handle: Any = None
        self.every = every
        self._last = 0.0

    def show(self, text: str, *, now: bool = False) -> None:
        from IPython.display import display

        if not now and time.monotonic() - self._last < self.every:
            return
        self._last = time.monotonic()
        if self._handle is None:
            self._handle = display({"text/plain": text}, raw=True, display_id=True)
        else:
            self._handle.update({"text/plain": text}, raw=True)

    def hide(self) -> None:
        self._handle = None  # the next step gets an output of its own

    def done(self, text: str) -> None:
        self.show(text, now=True)
        self.hide()


def display_for(console: Any = None) -> Any:
    """Where a status goes: a notebook's output in a Jupyter kernel, else standard error (or ``console``):
    redrawn on a terminal, plain lines elsewhere."""
    from genderprobe.outputs.terminal import in_notebook

    if in_notebook():
        return NotebookLine()
    if console is None:
        from rich.console import Console

        console = Console(stderr=True)
    return RedrawnLine(console) if console.is_terminal else PlainLines(console)


def display_beside(progress: Any) -> Any:
    """The status display of a run whose request progress is ``progress``: none where the run shows none
    (``--quiet``, ``--json``, the API outside a notebook, a caller's own display), the notebook's in a
    notebook, else on the progress bar's console."""
    from genderprobe.outputs.notebook_progress import NotebookProgress
    from genderprobe.outputs.terminal import Progress

    if isinstance(progress, NotebookProgress):
        return NotebookLine()
    if isinstance(progress, Progress):
        return display_for(progress.console)
    return None
