"""The answer browser on a page: its answers as an inert JSON block, and its one script, allowed by hash.

The page's content-security policy runs no script but the one whose SHA-256
it names (templates/answer_browser.js, fixed text: no answer is ever part of
it). The answers travel as JSON in a ``<script type="application/json">``
block, which a browser never runs, with every ``<``, ``>`` and ``&`` written
as a JSON escape, so no answer can close the block or open a tag; the script
puts them on the page as text nodes only.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from markupsafe import Markup

from genderprobe.outputs.report.answer_data import Answers, RunAnswers, gather

NO_SCRIPT = "'none'"


@cache
def script() -> str:
    return (resources.files("genderprobe.outputs.report") / "templates" / "answer_browser.js").read_text("utf-8")


def script_source(text: str) -> str:
    """The CSP source that allows exactly this inline script."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def json_block(value: object) -> Markup:
    """JSON that stays data inside <script type="application/json">, whatever strings it holds."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))


def export_command(folders: Sequence[str]) -> str:
    return "genderprobe answers " + " ".join(shlex.quote(f) for f in folders)


@dataclass
class Browser:
    answers: Answers
    data: Markup
    script: Markup
    csp: Markup  # the page's script-src: the script's hash, or 'none' when there are no answers to browse
    command: str | None  # exports every answer of the page's runs (None where a run has no folder)


def browser(runs: Sequence[RunAnswers], budget: int | None = None) -> Browser:
    answers = gather(runs, budget)
    text = script() if answers.shown else ""
    folders = [r.folder for r in answers.runs if r.total]
    command = export_command([f for f in folders if f]) if folders and None not in folders else None
    return Browser(answers, json_block(answers.payload()), Markup(text),
                   Markup(script_source(text) if text else NO_SCRIPT), command)
