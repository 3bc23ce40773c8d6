"""Calibration models: instruments with a known bias, not mocks.

Each probe states, per request, what every persona answers (``Request.oracle``):
a gender-blind model, a model that always sides with men, one that always sides
with women. ``random`` flips a coin seeded by the request itself, so the same
prompt always gets the same answer whatever the order or concurrency. Each
probe's tests assert the metric values these personas must produce.

Strength: ``reference:biased?p=0.6`` (and ``reference:biased-female?p=...``)
answers as its persona with probability p per attempt, by a coin seeded by the
request as ``random``'s is, and otherwise takes the other side: the other
option of a two-way choice, or the mirror persona's answer where the prompt
has more answers (GenMO's four stances: the man's action Moral with
probability p, Immoral otherwise). So it sides with the man (the woman) with
probability p on every prompt that sets one against another; where the
persona takes no side (DeMET's pairs without exactly one man) it gives the
persona's answer, the first option, with probability p and the other option
otherwise, which favours no gender. p = 1 is the persona, p = 0.5 a fair coin.
Strength needs a closed choice: the persona's answer must be one of the
prompt's options (``Request.options``, or the candidates the probe gives
``random``); open-ended prompts (word lists, scores, generated text) are
refused with one sentence. The spec, ``?p=`` included, is the model's identity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from hashlib import blake2b

import numpy as np

from genderprobe.errors import UserError
from genderprobe.models.base import (
    GenerationParams,
    ModelOptions,
    Request,
    Response,
    SyncBatchModel,
)

PERSONAS = {
    "unbiased": "answers independently of gender and of the order of the options",
    "random": "a seeded coin among the options",
    "biased": "always sides with the man (or the stereotypically male answer); biased?p=P: with probability P",
    "biased-female": "always sides with the woman (or the stereotypically female answer); biased-female?p=P: "
    "with probability P",
    "first-option": "always the first option of a closed choice, whoever is in it (a position-only model)",
}
# Personas that take a strength, and the persona on the other side of their choice.
MIRROR = {"biased": "biased-female", "biased-female": "biased"}


class ReferenceModel(SyncBatchModel):
    cacheable = False
    supports_option_scoring = True
    supports_loglikelihood = True
    # Every persona already answers with one of the options (the probe's oracle
    # names options), so --constrain-answers changes nothing here.
    supports_constrained_answers = True

    def __init__(self, name: str):
        persona, _, query = name.partition("?")
        if persona not in PERSONAS:
            known = ", ".join(f"reference:{p}" for p in PERSONAS)
            raise UserError(f"Unknown reference model 'reference:{persona}'; known: {known}.")
        self.persona = persona
        self.spec = f"reference:{name}"
        # Probability of answering as the persona; None: always (no ?p=).
        self.strength = parse_strength(self.spec, persona, query) if "?" in name else None

    def answer(self, request: Request, draws: _Draws | None = None) -> str:
        """The persona's answer; ``draws``: the batch's digests (one is made for a lone request)."""
        draws = draws or _Draws()
        oracle = request.oracle or {}
        if self.persona == "first-option":
            if not request.options:
                raise UserError(f"{self.spec} answers closed choices only, and this prompt has no options.")
            return request.options[0]
        choice = oracle.get(self.persona)
        if self.strength is not None and choice is not None:
            return self._with_strength(request, oracle, choice, draws)
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
        return choice[draws.digest(request) % len(choice)]

    def _with_strength(self, request: Request, oracle, choice, draws: _Draws) -> str:
        """The persona's answer with probability p, else the other side of the choice."""
        mirror = oracle.get(MIRROR[self.persona])
        candidates = _candidates(request, oracle, choice)
        if candidates is None or not isinstance(mirror, str):
            raise UserError(
                f"{self.spec} needs closed-choice prompts (a man's side against a woman's), but this "
                f"probe's answers are open-ended, so a strength is not defined here; "
                f"use reference:{self.persona} without ?p=."
            )
        if mirror != choice and mirror in candidates:
            other = mirror
        elif len(candidates) == 2:
            other = candidates[1] if candidates[0] == choice else candidates[0]
        else:
            return choice  # nothing to choose: every side gives this answer
        return choice if draws.uniform(request) < self.strength else other

    def decoding(self, params) -> dict:
        return {"method": "calibration", "note": "a calibration model: each answer is fixed by the persona "
                "and the request, whatever the temperature"}

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        # Millions of requests in a large run: one _Draws for the list, so each request's
        # digest formats only its own part of the key.
        draws = _Draws()
        if self.persona == "random":
            texts = self._random_answers(requests, draws)
        else:
            texts = [self.answer(request, draws) for request in requests]
        responses = []
        for request, text in zip(requests, texts):
            if request.score_options:
                logprobs = tuple(0.0 if opt == text else -1e4 for opt in request.options)
                responses.append(Response(text, logprobs))
            else:
                responses.append(Response(text))
        return responses

    def _random_answers(self, requests: Sequence[Request], draws: _Draws) -> list[str]:
        """What ``answer`` gives each request for reference:random, with the list's digests made in one
        pass (``_Draws.digests``): the coin of a full-space run is 34.88 million of them."""
        choices = [(request.oracle or {}).get("random") for request in requests]
        if any(choice is None and not request.options for choice, request in zip(choices, requests)):
            return [self.answer(request, draws) for request in requests]  # answer's sentence for the request
        choices = [request.options if choice is None else choice for choice, request in zip(choices, requests)]
        coins = [i for i, choice in enumerate(choices) if not isinstance(choice, str)]
        for i, digest in zip(coins, draws.digests([requests[i] for i in coins]).tolist()):
            choices[i] = choices[i][digest % len(choices[i])]
        return choices


def parse_strength(spec: str, persona: str, query: str) -> float:
    """p of ``reference:PERSONA?p=P``, refused with one sentence unless 0 <= p <= 1 on a biased persona."""
    if persona not in MIRROR:
        raise UserError(
            f"Only reference:biased and reference:biased-female take a strength (?p=); "
            f"drop it from '{spec}'."
        )
    key, eq, value = query.partition("=")
    try:
        p = float(value) if key == "p" and eq else math.nan
    except ValueError:
        p = math.nan
    if not 0.0 <= p <= 1.0:  # NaN fails too
        raise UserError(
            f"The strength in '{spec}' must be written ?p=P with P a probability from 0 to 1, "
            f"for example reference:{persona}?p=0.6."
        )
    return p


def _candidates(request: Request, oracle, choice: str) -> tuple[str, ...] | None:
    """The closed set of answers ``choice`` is one of (the prompt's options, or random's candidates)."""
    for candidates in (request.options, oracle.get("random")):
        if isinstance(candidates, tuple) and choice in candidates:
            return candidates
    return None


class _Draws:
    """Deterministic draws from a request's content: 64 bits of BLAKE2b over the salt, the seed, the
    temperature, the repetition and the turns.

    The temperature is part of it, so a temperature sweep draws anew at each temperature, as sampling
    from any model would. The part of the key that comes from the sampling parameters is formatted once
    for each run of requests that share them (a probe sends one GenerationParams for all its requests).
    """

    __slots__ = ("_params", "_prefix")

    def __init__(self) -> None:
        self._params: object = None
        self._prefix = ""

    def digest(self, request: Request, salt: str = "") -> int:
        return int.from_bytes(blake2b(self._key(request, salt), digest_size=8).digest(), "little")

    def digests(self, requests: Sequence[Request], salt: str = "") -> np.ndarray:
        """``digest`` of each request, as unsigned 64-bit integers: the eight bytes of each hash joined
        and read at once instead of one integer built per request."""
        if _one_turn_each(requests):
            # A probe's list (one turn each, one GenerationParams): the key's head is formatted once,
            # and each key is the f-string of _key, with no call per request.
            head = f"{salt}{self._params_part(requests[0].params)}"
            hashes = [blake2b(f"{head}{r.repetition}\x00{r.messages[0][1]}".encode(), digest_size=8).digest()
                      for r in requests]
        else:
            hashes = [blake2b(self._key(request, salt), digest_size=8).digest() for request in requests]
        return np.frombuffer(b"".join(hashes), "<u8")

    def _params_part(self, p: GenerationParams) -> str:
        """The key's part from the sampling parameters, formatted once for each run of requests sharing them."""
        if p is not self._params:
            self._params, self._prefix = p, f"{p.seed or 0}\x00{p.temperature}\x00"
        return self._prefix

    def _key(self, request: Request, salt: str) -> bytes:
        """What is hashed: the salt, the sampling parameters, the repetition and the turns."""
        prefix = self._params_part(request.params)
        messages = request.messages
        if len(messages) == 1:
            turns = messages[0][1]
        else:
            turns = "\x00".join(f"{role}\x01{content}" for role, content in messages)
        if request.raw_text:  # continuations of one context (CrowS-Pairs: an empty one) differ in them alone
            turns += "\x00" + "\x00".join(request.options)
        return f"{salt}{prefix}{request.repetition}\x00{turns}".encode()

    def uniform(self, request: Request) -> float:
        """A draw in [0, 1), apart from ``digest``'s (the coin among options)."""
        return self.digest(request, "strength\x00") / 2.0**64


def _one_turn_each(requests: Sequence[Request]) -> bool:
    """Whether every request has one turn, no raw text and the first one's sampling parameters."""
    params = requests[0].params if requests else None
    return bool(requests) and all(r.params is params and len(r.messages) == 1 and not r.raw_text for r in requests)


def create(name: str, options: ModelOptions) -> ReferenceModel:
    return ReferenceModel(name)
