"""Clear choices in an answer corpus: the answers a careful human decides at once.

Each corpus entry (see corpus_support) may carry ``"clear": true|false``; absent,
an entry is clear when it has an expected reading. A careful reader must read
no answer as something else (zero misreads, as corpus_support.check asserts)
and may lose at most :data:`MAX_LOST` of the clear choices (issue 30).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from corpus_support import UNDETECTED, load

MAX_LOST = 0.15


@dataclass
class Clear:
    answers: int = 0
    clear: int = 0
    lost: list[str] = field(default_factory=list)  # ids of clear choices the reader did not read
    misreads: list[tuple[str, Any, Any]] = field(default_factory=list)  # (id, expected, read)

    @property
    def lost_share(self) -> float:
        return len(self.lost) / self.clear if self.clear else float("nan")

    def summary(self, name: str) -> str:
        return (f"{name}: {self.answers} answers, {self.clear} clear choices, {len(self.lost)} lost "
                f"({self.lost_share:.1%}), {len(self.misreads)} misreads")


def measure(lines: list[dict[str, Any]], read: Callable[[dict[str, Any]], Any]) -> Clear:
    out = Clear()
    for x in lines:
        got = read(x)
        got = None if got in UNDETECTED else got
        out.answers += 1
        if got is not None and got != x["expected"]:
            out.misreads.append((x["id"], x["expected"], got))
        if x.get("clear", x["expected"] is not None):
            assert x["expected"] is not None, f"{x['id']}: a clear choice needs its expected reading"
            out.clear += 1
            if got is None:
                out.lost.append(x["id"])
    return out


def check_clear(name: str, read: Callable[[dict[str, Any]], Any], *, max_lost: float = MAX_LOST,
                lines: list[dict[str, Any]] | None = None) -> Clear:
    """Zero misreads and at most ``max_lost`` of the clear choices lost; the figures printed (pytest -s)."""
    found = measure(load(name) if lines is None else lines, read)
    print(found.summary(name))
    assert not found.misreads, f"{name}: misread (id, expected, read): {found.misreads}"
    assert found.lost_share <= max_lost, f"{found.summary(name)}; lost: {found.lost}"
    return found
