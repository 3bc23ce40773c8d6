"""StereoSet's gender contexts (dev set), intrasentence and intersentence.

Each context comes with three sentences: the stereotypical, the anti-stereotypical and the unrelated
one, and a target term. Intrasentence contexts hold a BLANK that each sentence fills; intersentence
contexts are followed by each sentence. The sentences' order as shown is the probe's to choose.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import data_text
from genderprobe.errors import UserError

DATA = "stereoset/stereoset/gender.jsonl"
TASKS = ("intrasentence", "intersentence")
LABELS = ("stereotype", "anti-stereotype", "unrelated")
COUNTS = {"intrasentence": 255, "intersentence": 242}


@dataclass(frozen=True)
class Item:
    row: int  # the line of the data file (0-based)
    task: str  # intrasentence or intersentence
    target: str  # the gender term (mother, male, ...)
    context: str
    sentences: tuple[str, str, str]  # in LABELS' order


@cache
def items() -> tuple[Item, ...]:
    found = []
    for n, line in enumerate(data_text(DATA).splitlines()):
        row = json.loads(line)
        found.append(Item(n, row["type"], row["target"], row["context"], tuple(row[label] for label in LABELS)))
    got = {task: sum(i.task == task for i in found) for task in TASKS}
    if got != COUNTS:
        raise UserError(f"Expected StereoSet's gender contexts {COUNTS} in {DATA}, found {got}; reinstall genderprobe.")
    return tuple(found)


def targets() -> tuple[str, ...]:
    """The gender targets, in order of first appearance."""
    return tuple(dict.fromkeys(i.target for i in items()))
