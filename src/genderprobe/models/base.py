"""The contract every model backend fulfils.

A backend turns a :class:`Request` into a :class:`Response`. Requests are plain,
hashable values so the store can key them and the runner can retry them.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """Sampling parameters sent with every request of a run."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    # How long a reasoning model thinks (OpenAI's reasoning_effort: minimal, low, medium, high).
    reasoning_effort: str | None = None

    def as_dict(self) -> dict[str, Any]:
        # Called several times per request (its cache key, its stored request, its body): the
        # fields are plain values, so read them directly, not through asdict's deep copy (20x slower).
        return {name: value for name in _GENERATION_FIELDS if (value := getattr(self, name)) is not None}

    def replace(self, **changes: Any) -> GenerationParams:
        return dataclasses.replace(self, **changes)


_GENERATION_FIELDS = tuple(f.name for f in dataclasses.fields(GenerationParams))


def last_user_turn(messages: Sequence[tuple[str, str]]) -> str:
    """The content of the last user turn ("" when there is none)."""
    for role, content in reversed(messages):
        if role == "user":
            return content
    return ""


@dataclass(slots=True)
class Request:
    """One prompt to one model.

    messages: chat turns as (role, content) pairs; a system prompt is a
        ("system", ...) turn at the front.
    repetition: which repetition of the same prompt this is (part of the cache key,
        so R repetitions are R distinct requests).
    options: the answer options of a closed-choice prompt, e.g. ("(a)", "(b)").
        Backends that score options by log-probability use them; the
        ``reference:random`` model picks among them.
    score_options: ask the backend for option log-probabilities instead of
        generated text.
    constrain: ask the backend to answer with exactly one of ``options``
        (``--constrain-answers``: vLLM's structured-outputs choice, OpenAI's
        structured outputs, the most likely option on hf). Part of the cache key,
        so constrained answers never mix with free ones.
    raw_text: the prompt is raw text and ``options`` its continuations, scored as
        lm-evaluation-harness scores them (:mod:`genderprobe.models.loglikelihood`):
        no chat template, each continuation exactly as written (its leading space
        included), ``option_logprobs`` the summed log-likelihood of its tokens.
        Built by :func:`genderprobe.models.loglikelihood.loglikelihood_request`;
        part of the cache key.
    per_token: with ``raw_text``, ``option_logprobs`` is each continuation's mean
        log-likelihood per token instead of the sum (StereoSet's normalisation, so
        that longer sentences are not penalised); part of the cache key.
    oracle: what each calibration persona answers ({"unbiased": "(a)",
        "biased": "(b)", "biased-female": "(a)"}); a value may be a tuple of
        candidates for ``reference:random``. Real backends ignore it and it is not
        part of the cache key.

    Not frozen: a probe may build tens of millions of these, and frozen
    dataclasses are several times slower to construct. Treat it as immutable.
    """

    messages: tuple[tuple[str, str], ...]
    params: GenerationParams = GenerationParams()
    repetition: int = 0
    options: tuple[str, ...] = ()
    score_options: bool = False
    oracle: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)
    constrain: bool = False
    raw_text: bool = False
    per_token: bool = False

    @classmethod
    def user(cls, prompt: str, system: str | None = None, **kwargs: Any) -> Request:
        turns = ((("system", system),) if system else ()) + (("user", prompt),)
        return cls(messages=turns, **kwargs)

    @property
    def prompt(self) -> str:
        """The last user turn: what the evidence and records show."""
        return last_user_turn(self.messages)

    def cache_identity(self) -> dict[str, Any]:
        """Everything that determines the answer, in a JSON-able form."""
        identity: dict[str, Any] = {
            "messages": [list(m) for m in self.messages],
            "params": self.params.as_dict(),
            "repetition": self.repetition,
        }
        if self.score_options:
            identity["score_options"] = list(self.options)
        if self.constrain:
            identity["constrain"] = list(self.options)
        if self.raw_text:
            identity["raw_text"] = True
        if self.per_token:
            identity["per_token"] = True
        return identity


@dataclass(slots=True)
class Response:
    """A backend's answer, or the error that replaced it.

    option_logprobs: with ``score_options``, one log-probability per option in the
        order of ``Request.options`` (normalised over the options by the probe).
    """

    text: str | None = None
    option_logprobs: tuple[float, ...] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error_kind: str | None = None
    error_message: str | None = None
    cached: bool = False
    # What the server says about the answer, kept for accounting and records:
    # a reasoning model's thinking (never read as the answer), the model that
    # actually answered (an alias such as gpt-4o resolves to a dated version),
    # the server's build fingerprint and why generation stopped.
    reasoning: str | None = None
    served_model: str | None = None
    fingerprint: str | None = None
    finish_reason: str | None = None
    # Set when the answer (with its reasoning) was longer than its bound and was cut to it
    # (genderprobe.engine.answer_bound): how many characters arrived.
    cut_from: int | None = None

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    @classmethod
    def failure(cls, kind: str, message: str) -> Response:
        return cls(error_kind=kind, error_message=message)


class Model(ABC):
    """A model backend.

    spec: the model spec without secrets (``openai:gpt-4o-mini``); it is part of the
        cache key and appears in results.
    cacheable: whether answers go to the store. Free deterministic models
        (``reference:*``) skip it.
    batch_native: the backend answers a whole list at once (local weights, reference
        models): the runner calls :meth:`generate_batch` instead of many
        concurrent :meth:`generate` calls.
    """

    spec: str
    cacheable: bool = True
    batch_native: bool = False
    supports_option_scoring: bool = False
    # Scores Request.raw_text requests: continuations of raw text, as lm-eval does.
    supports_loglikelihood: bool = False
    # Answers only with one of Request.options when Request.constrain asks it.
    supports_constrained_answers: bool = False
    # One sentence for each thing the backend changed to be answered (a field
    # renamed or dropped for a reasoning model); the results warn with them.
    notes: Sequence[str] = ()
    # Local weights decode greedily when a run sets no temperature; a server applies its own default.
    greedy_when_unset: bool = False
    # The weights' number format, for local weights (bfloat16 and float32 can answer differently).
    dtype: str | None = None
    # The credentials the backend sends (key, header values, the URL's; genderprobe.models.credentials):
    # the runner scrubs them from every answer and error before anything keeps or shows one.
    secrets: Sequence[str] = ()
    # Set by the runner around a generate_batch call: a backend that answers a long list
    # (local weights) calls it with how many more of the list's requests it has finished,
    # so the progress line moves while the list is answered.
    progress: Callable[[int], None] | None = None
    # Set by the runner next to progress: a backend that answers a long list in parts calls
    # it with each part it finishes ({position in the list: answer}) instead of progress, so
    # those answers are stored while the rest is computed and a killed run loses only the part
    # under way. The list generate_batch returns still holds every answer.
    answered: Callable[[dict[int, Response]], None] | None = None

    async def generate(self, request: Request) -> Response:
        """Answer one request. Raise :class:`genderprobe.errors.ModelError` on failure."""
        return self.generate_batch([request])[0]

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        raise NotImplementedError

    def check_credentials(self) -> None:
        """Raise UserError, one sentence, where the backend cannot send without a secret it lacks.

        Called before a run that sends anything; a dry run, which sends nothing, skips it."""

    async def aclose(self) -> None:
        """Release connections; called once when a run ends."""

    def close(self) -> None:
        """Release local resources (GPU memory, worker processes)."""

    @property
    def endpoint(self) -> str | None:
        """Where requests go, without credentials (None for local models)."""
        return None

    def effective_params(self, params: GenerationParams) -> dict[str, Any]:
        """The generation fields this backend actually sends for ``params`` (its defaults and renamings applied)."""
        return params.as_dict()

    def decoding(self, params: GenerationParams) -> dict[str, Any]:
        """How answers to ``params`` are decoded: "greedy", "sampling" (with its temperature
        and top_p) or "server default" (no temperature sent, so the server's own decides),
        with the dtype of local weights. Results record it; compare splits runs on it."""
        sent = self.effective_params(params)
        temperature = sent.get("temperature")
        if temperature is None and not self.greedy_when_unset:
            out: dict[str, Any] = {"method": "server default", "temperature": None,
                                   "note": "no temperature was sent, so the server's default decides "
                                           "(for most APIs sampling at temperature 1)"}
        elif not temperature:
            out = {"method": "greedy", "temperature": 0.0}
        else:
            out = {"method": "sampling", "temperature": float(temperature)}
        if out["method"] != "greedy" and sent.get("top_p") is not None:
            out["top_p"] = sent["top_p"]
        if sent.get("seed") is not None:
            out["seed"] = sent["seed"]
        if self.dtype:
            out["dtype"] = self.dtype
        return out

    @property
    def identity(self) -> str:
        return self.spec


class SyncBatchModel(Model, ABC):
    """A backend that answers lists of requests synchronously."""

    batch_native = True

    @abstractmethod
    def generate_batch(self, requests: Sequence[Request]) -> list[Response]: ...


@dataclass
class ModelOptions:
    """Connection options that are not part of a model's identity.

    api_key is never stored, logged or written to results.
    """

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str | None = None
    timeout: float = 60.0
    extra: dict[str, Any] = field(default_factory=dict)
