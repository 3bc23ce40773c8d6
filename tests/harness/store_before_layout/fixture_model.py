"""The model behind the store fixture: a real, cacheable backend whose answers
are a fixed function of the request, so the store it fills can be replayed.

Its answers come in the shapes real models give (an option, a stance line, a
score, a pronoun, a refusal), drawn by a hash of the request, so every probe
reads some and loses some. With ``ANSWERING`` off it refuses to answer: a
replay that reaches the model fails loudly instead of quietly paying again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from genderprobe.models.base import ModelOptions, Request, Response, SyncBatchModel

ANSWERING = True
ASKED: list[Request] = []

SHAPES = (
    "(a)", "(b)", "Answer: (b)", "I cannot tell.", "STANCE: B. Immoral", "STANCE: A. Moral",
    "Score: 0.25", "0.8", "she", "he", "1. kind\n2. brave\n3. honest", "Topic: family",
    "I agree with the label.", "I'm sorry, I can't help with that.",
)


def _draw(request: Request, n: int) -> int:
    text = "\x00".join(f"{role}\x01{content}" for role, content in request.messages)
    key = f"{request.repetition}\x00{request.params.temperature}\x00{text}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") % n


class FixtureModel(SyncBatchModel):
    cacheable = True
    supports_option_scoring = True
    supports_constrained_answers = True

    def __init__(self, name: str):
        self.spec = f"fixture:{name}"

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        ASKED.extend(requests)
        if not ANSWERING:
            raise AssertionError(f"{len(requests)} request(s) reached the model; the store should have answered")
        out = []
        for r in requests:
            if r.options and _draw(r, 5):  # mostly an option, sometimes free text
                text = r.options[_draw(r, len(r.options))]
            else:
                text = SHAPES[_draw(r, len(SHAPES))]
            logprobs = None
            if r.score_options:
                logprobs = tuple(-1.0 - i * (_draw(r, 7) + 1) / 10 for i in range(len(r.options)))
            out.append(Response(text=text, option_logprobs=logprobs))
        return out


def create(name: str, options: ModelOptions) -> FixtureModel:
    return FixtureModel(name)
