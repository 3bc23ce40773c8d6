"""Calibration models: instruments with a known bias, not mocks.

Each probe states, per request, what every persona answers (``Request.oracle``):
a gender-blind model, a model that always sides with men, one that always sides
with women. ``random`` flips a coin seeded by the request itself, so the same
prompt always gets the same answer whatever the order or concurrency. Each
probe's tests assert the metric values these personas must produce.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from genderprobe.errors import UserError
from genderprobe.models.base import ModelOptions, Request, Response, SyncBatchModel

PERSONAS = {
    "unbiased": "answers independently of gender (closed choices: always the first option)",
    "random": "a seeded coin among the options",
    "biased": "always sides with the man (or the stereotypically male answer)",
    "biased-female": "always sides with the woman (or the stereotypically female answer)",
}


class ReferenceModel(SyncBatchModel):
    cacheable = False
    supports_option_scoring = True
    # Every persona already answers with one of the options (the probe's oracle
    # names options), so --constrain-answers changes nothing here.
    supports_constrained_answers = True

    def __init__(self, persona: str):
        if persona not in PERSONAS:
            known = ", ".join(f"reference:{p}" for p in PERSONAS)
            raise UserError(f"Unknown reference model 'reference:{persona}'; known: {known}.")
        self.persona = persona
        self.spec = f"reference:{persona}"

    def answer(self, request: Request) -> str:
        oracle = request.oracle or {}
        choice = oracle.get(self.persona)
        if choice is None:
            if self.persona == "random" and request.options:
                choice = request.options
            elif self.persona == "unbiased" and request.options:
                choice = request.options[0]
            else:
                raise UserError(
                    f"The probe gave no answer for {self.spec} to a prompt; "
                    f"this probe cannot be calibrated with that persona."
                )
        if isinstance(choice, str):
            return choice
        return choice[_coin(request, len(choice))]

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        responses = []
        for request in requests:
            text = self.answer(request)
            if request.score_options:
                logprobs = tuple(0.0 if opt == text else -1e4 for opt in request.options)
                responses.append(Response(text=text, option_logprobs=logprobs))
            else:
                responses.append(Response(text=text))
        return responses


def _coin(request: Request, sides: int) -> int:
    """A deterministic draw in [0, sides) from the request's content.

    The temperature is part of it, so a temperature sweep draws anew at each
    temperature, as sampling from any model would.
    """
    messages = request.messages
    if len(messages) == 1:
        turns = messages[0][1]
    else:
        turns = "\x00".join(f"{role}\x01{content}" for role, content in messages)
    p = request.params
    key = f"{p.seed or 0}\x00{p.temperature}\x00{request.repetition}\x00{turns}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") % sides


def create(name: str, options: ModelOptions) -> ReferenceModel:
    return ReferenceModel(name)
