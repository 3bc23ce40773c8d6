"""Answer corpora: real and realistic answers, each labelled with what a careful human reads.

A corpus is ``<name>.jsonl`` in the ``corpora`` folder of its study
(``src/genderprobe/studies/<study>/corpora/``), one JSON object per line:

    {"id": "rl-017", "source": "smollm2-135m-instruct" | "shape: <what it stands for>",
     "answer": "<the raw answer>", "expected": "<the code a careful human reads>" | null,
     ...whatever context the reader needs (the names, the options, the language)}

``expected`` null means a careful human cannot tell either: the reader must not
choose. A reader may lose a readable answer (that lowers its recall) but must
never read an answer as something else (a misread): :func:`check` fails on any.

``"clear": false`` marks a readable answer a careful human decides only on a
second look (a rambling answer whose choice can be worked out); every other
readable answer is a *clear choice*, decided at once. :func:`check` can bound
the share of clear choices a reader loses (issue 30: at most 15%).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STUDIES = Path(__file__).resolve().parents[1] / "src" / "genderprobe" / "studies"
UNDETECTED = (None, "undetected")


def load(name: str) -> list[dict[str, Any]]:
    (path,) = STUDIES.glob(f"*/corpora/{name}.jsonl")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = [x["id"] for x in lines]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate ids"
    for x in lines:
        assert {"id", "source", "answer", "expected"} <= set(x), f"{path.name}: {x.get('id')} lacks a field"
    return lines


@dataclass
class Score:
    total: int = 0
    readable: int = 0  # a careful human reads a code
    correct: int = 0
    clear: int = 0  # readable answers a careful human decides at once
    clear_lost: list[str] = field(default_factory=list)  # ids of clear choices the reader did not read
    misreads: list[tuple[str, Any, Any]] = field(default_factory=list)  # (id, expected, read)
    invented: list[tuple[str, Any]] = field(default_factory=list)  # unreadable, yet the reader chose

    @property
    def recall(self) -> float:
        return self.correct / self.readable if self.readable else float("nan")

    @property
    def lost_clear_share(self) -> float:
        return len(self.clear_lost) / self.clear if self.clear else float("nan")

    def summary(self, name: str) -> str:
        return (f"{name}: recall {self.correct}/{self.readable} = {self.recall:.1%} of readable answers, "
                f"clear choices lost {len(self.clear_lost)}/{self.clear} = {self.lost_clear_share:.1%}, "
                f"{len(self.misreads) + len(self.invented)} misreads, {self.total} answers")


def score(lines: list[dict[str, Any]], read: Callable[[dict[str, Any]], Any]) -> Score:
    s = Score()
    for x in lines:
        got = read(x)
        got = None if got in UNDETECTED else got
        s.total += 1
        if x["expected"] is None:
            if got is not None:
                s.invented.append((x["id"], got))
            continue
        s.readable += 1
        clear = x.get("clear", True)
        s.clear += clear
        if got == x["expected"]:
            s.correct += 1
            continue
        if clear:
            s.clear_lost.append(x["id"])
        if got is not None:
            s.misreads.append((x["id"], x["expected"], got))
    return s


# Issue 30: a careful reader loses at most this share of the clear choices of its study's corpus.
MAX_LOST_CLEAR = 0.15


def check(name: str, read: Callable[[dict[str, Any]], Any], *, min_recall: float = 0.0,
          max_lost_clear: float = 1.0) -> Score:
    """Zero misreads on the corpus; recall and lost clear choices printed (pytest -s) and bounded."""
    s = score(load(name), read)
    print(s.summary(name))
    assert not s.misreads, f"{name}: misread (id, expected, read): {s.misreads}"
    assert not s.invented, f"{name}: chose where a careful human cannot (id, read): {s.invented}"
    assert s.recall >= min_recall, s.summary(name)
    assert s.lost_clear_share <= max_lost_clear, f"{s.summary(name)}; lost: {s.clear_lost}"
    return s
