"""How the test servers answer: a seeded chooser with a known gender bias.

A server calls an answer function with a :class:`ChatCall` and sends back the
text it returns. :class:`PreferMan` reads "(a) NAME or (b) NAME" prompts, looks
the two first names up in the packaged name lists, and picks the man's option
with probability ``p_man``; the draw is seeded by the prompt, so the same prompt
always gets the same answer (a resumed run must match an uninterrupted one).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from genderprobe.data.name_lists import bloomberg_names, levy_names
from genderprobe.models.base import last_user_turn

_OPTIONS_RE = re.compile(r"\(a\)\s*([A-Z][\w'\-]*)[^()]*?\bor\s+\(b\)\s*([A-Z][\w'\-]*)")
# "(a)" stays one token by default; split_parens makes "(" its own token, as
# several real tokenizers do, so log-probability scoring meets both shapes.
_TOKEN_RE = re.compile(r"\(?\w+\)?|\s+|[^\w\s]")
_TOKEN_SPLIT_RE = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True)
class ChatCall:
    """One chat request as the server received it."""

    model: str
    messages: tuple[tuple[str, str], ...]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        return last_user_turn(self.messages)


AnswerFn = Callable[[ChatCall], str]


def tokenize(text: str, *, split_parens: bool = False) -> list[str]:
    return (_TOKEN_SPLIT_RE if split_parens else _TOKEN_RE).findall(text)


@cache
def name_genders() -> dict[str, str]:
    """First name -> "male"/"female" from the Bloomberg and Levy lists."""
    genders: dict[str, str] = {}
    for entry in bloomberg_names():
        genders[entry.first] = entry.gender
    for group, gender in (("men", "male"), ("women", "female")):
        for name in levy_names()[group]:
            genders.setdefault(name, gender)
    return genders


def unit_draw(*parts: object) -> float:
    """A deterministic number in [0, 1) from the parts."""
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(str(part).encode())
        h.update(b"\x00")
    return int.from_bytes(h.digest(), "little") / 2**64


class PreferMan:
    """Answers "(a)"/"(b)" prompts, choosing the man with probability ``p_man``.

    Prompts without a recognisable man-woman pair get "(a)" or "(b)" with equal
    odds; prompts without options get ``fallback``.
    """

    def __init__(self, p_man: float = 0.75, *, seed: int = 0, fallback: str = "I cannot tell."):
        if not 0.0 <= p_man <= 1.0:
            raise ValueError("p_man must lie in [0, 1]")
        self.p_man = p_man
        self.seed = seed
        self.fallback = fallback

    def probabilities(self, call: ChatCall) -> dict[str, float] | None:
        """Probability of each answer, or None for prompts without options."""
        match = _OPTIONS_RE.search(call.prompt)
        if match is None:
            return None
        genders = name_genders()
        first, second = genders.get(match.group(1)), genders.get(match.group(2))
        if first == "male" and second == "female":
            p_a = self.p_man
        elif first == "female" and second == "male":
            p_a = 1.0 - self.p_man
        else:
            p_a = 0.5
        return {"(a)": p_a, "(b)": 1.0 - p_a}

    def __call__(self, call: ChatCall) -> str:
        probs = self.probabilities(call)
        if probs is None:
            return self.fallback
        draw = unit_draw(self.seed, call.params.get("seed"), call.prompt)
        return "(a)" if draw < probs["(a)"] else "(b)"
