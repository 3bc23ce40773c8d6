"""A run's progress in a Jupyter notebook: a bar in one output, updated in place.

A notebook is no terminal, so rich would draw nothing live there without
ipywidgets. IPython's own display handle updates one output instead, twice a
second at most: an HTML ``<progress>`` bar beside the progress line (done/total,
cached, errors, retries, rate, elapsed, ETA), and the line alone as the text a
plain frontend shows.
"""

from __future__ import annotations

import io
from html import escape
from typing import Any

from rich.console import Console

from genderprobe.outputs.terminal import Progress


class NotebookProgress(Progress):
    """The progress bar of a run in a notebook (and one more bar for each judge beside it)."""

    def __init__(self, *, description: str = "requests", every: float = 0.5):
        super().__init__(Console(file=io.StringIO()), description=description, every=every)
        self.plain = True  # no live rich bar: the numbers are shown through show() every `every` seconds
        self._handle: Any = None

    def beside(self, description: str) -> Progress:
        child = NotebookProgress(description=description, every=self.every)
        self._children.append(child)
        return child

    def show(self, line: str) -> None:
        from IPython.display import display

        data = {"text/plain": line, "text/html": self.html(line)}
        if self._handle is None:
            self._handle = display(data, raw=True, display_id=True)
        else:
            self._handle.update(data, raw=True)

    def html(self, line: str) -> str:
        """The bar and the line; a bar with no total yet (a probe still counting) is indeterminate."""
        value = f' value="{min(self.done, self.total)}"' if self.total else ""
        return (f'<div class="genderprobe-progress"><progress{value} max="{max(self.total, 1)}" '
                f'style="width:24em;vertical-align:middle"></progress> <code>{escape(line)}</code></div>')
