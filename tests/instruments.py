"""Test instruments: real Model implementations with behaviour a test controls."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from genderprobe.models.base import Request, Response, SyncBatchModel


class ScriptedModel(SyncBatchModel):
    """Answers from a function of (prompt, repetition); records what it was asked."""

    cacheable = False

    def __init__(self, answer: Callable[[str, int], str], spec: str = "test:scripted"):
        self.answer = answer
        self.spec = spec
        self.asked: list[Request] = []

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        self.asked.extend(requests)
        return [Response(text=self.answer(r.prompt, r.repetition)) for r in requests]


class BiasedCoinModel(SyncBatchModel):
    """Sides with the man with probability ``p_male`` per attempt (seeded by the request).

    It learns which option is the man from the probe's calibration oracle, as
    the reference personas do, so its true bias is known exactly.
    """

    cacheable = False

    def __init__(self, p_male: float, seed: int = 0):
        self.p_male, self.seed = p_male, seed
        self.spec = f"test:coin-{p_male}"

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            man, woman = r.oracle["biased"], r.oracle["biased-female"]
            h = hashlib.blake2b(f"{self.seed}|{r.repetition}|{r.prompt}".encode(), digest_size=8)
            u = int.from_bytes(h.digest(), "little") / 2**64
            out.append(Response(text=f"I think {man if u < self.p_male else woman}."))
        return out


def fake_key(label: str) -> str:
    """A key-shaped test string ("sk-" + label), built at run time so that secret
    scanners find no key-shaped literal in the repository."""
    return "sk-" + label
