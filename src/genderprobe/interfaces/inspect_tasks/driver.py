"""Runs a probe's own ``run()`` with inspect_ai answering its requests.

A probe asks through ``ctx.ask(requests)``, perhaps several times (DeMET asks
again, reworded, for the answers it could not read; Fifty Shades asks for
reasons after reading the scores; multilingual-dialogue sends dialogues to a
judge). :class:`ProbeDriver` is the task's inspect ``SampleSource``: it runs
``probe.run`` in a worker thread, turns each ask into one round of inspect
samples, and hands the round's answers back to the probe once inspect has no
sample of it left in flight. The probe then reads the answers and computes its
metrics exactly as under ``genderprobe run``; nothing is re-implemented here.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from inspect_ai import SampleSource
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    model_roles,
)

# The generate config of the running eval (--temperature, ...); inspect has no public accessor for it.
from inspect_ai.model._generate_config import active_generate_config

from genderprobe.contract import ListSink, Probe, ProbeResult, RunContext
from genderprobe.engine.empty_answers import mark_empty
from genderprobe.errors import UserError
from genderprobe.models.base import GenerationParams, Request, Response

_MESSAGE = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
# inspect's stop reasons in the words genderprobe's backends use.
_FINISH = {"max_tokens": "length", "model_length": "length", "unknown": None}


def chat_messages(request: Request) -> list[ChatMessage]:
    return [_MESSAGE[role](content=content) for role, content in request.messages]


def generation_overrides(config: GenerateConfig) -> dict[str, Any]:
    """The genderprobe generation fields set in inspect's config (``--temperature`` ...)."""
    fields = GenerationParams.__dataclass_fields__
    return {k: v for k, v in config.model_dump(exclude_none=True).items() if k in fields}


def response_of(sample: EvalSample) -> Response:
    """A finished inspect sample as the Response a genderprobe backend would have returned."""
    if sample.error is not None:
        return Response.failure("error", sample.error.message)
    output = sample.output
    if output.error:
        return Response.failure("error", output.error)
    choice = output.choices[0] if output.choices else None
    content = choice.message.content if choice else ""
    reasoning = "" if isinstance(content, str) else "".join(
        c.reasoning for c in content if isinstance(c, ContentReasoning))
    response = Response(
        text=output.completion,
        prompt_tokens=output.usage.input_tokens if output.usage else 0,
        completion_tokens=output.usage.output_tokens if output.usage else 0,
        reasoning=reasoning or None,
        served_model=output.model or None,
        finish_reason=_FINISH.get(choice.stop_reason, choice.stop_reason) if choice else None,
    )
    mark_empty(response)  # an answer without text fails, as under genderprobe run
    return response


class ProbeDriver(SampleSource):
    """One probe run whose rounds of requests become batches of inspect samples.

    When inspect ends the task, ``result`` holds the probe's ProbeResult,
    ``records`` its per-attempt records, and ``codes`` the code the probe gave
    each sample's answer (male, female, undetected, ...), by sample id.
    """

    def __init__(self, probe: Probe, *, seed: int = 0, n_resamples: int = 1000,
                 system_prompt: str | None = None):
        self.probe = probe
        self.seed, self.n_resamples, self.system_prompt = seed, n_resamples, system_prompt
        self.result: ProbeResult | None = None
        self.records = ListSink()
        self.codes: dict[int, str] = {}
        self._events: queue.Queue = queue.Queue()   # probe thread -> loop: ("ask", role, requests), ("done", result), ("error", exc)
        self._replies: queue.Queue = queue.Queue()  # loop -> probe thread: a round's responses
        self._thread: threading.Thread | None = None
        self._ids: list[int] = []                   # sample ids of the last round
        self._responses: list[Response] = []        # its answers, as handed to the probe
        self._records_before = 0                    # records written before the probe read them
        self._answers: dict[int, Response] = {}
        self._rounds = 0
        self.started = 0                            # samples inspect has begun to answer
        self._told = False

    # -- inspect's side (the task's event loop) ---------------------------------

    def initial_samples(self) -> list[Sample]:
        return []  # the first round comes from next_samples(), once the task runs

    async def sample_complete(self, sample: EvalSample) -> None:
        if sample.epoch != 1:
            raise UserError("A genderprobe task asks each prompt once; drop --epochs and use the probe's "
                            "repetitions parameter where it has one (-T num_repetitions=N).")
        self._answers[int(sample.id)] = response_of(sample)

    async def next_samples(self) -> list[Sample] | None:
        """Called by inspect when no sample is in flight: the next round, or None when the probe is done."""
        if self._thread is None:
            self._start()
        else:
            self._answer_round()
        kind, *payload = await anyio.to_thread.run_sync(self._events.get, abandon_on_cancel=True)
        self._match_codes()
        if kind == "error":
            raise payload[0]
        if kind == "done":
            self.result = payload[0]
            return None
        return self._round(*payload)

    def _start(self) -> None:
        probe, roles = self.probe, model_roles()
        if probe.needs_judge and "judge" not in roles:
            raise UserError(f"Probe '{probe.name}' needs a judge model; pass --model-role judge=PROVIDER/MODEL.")
        ctx = RunContext(
            ask=self._asker("model"),
            generation=probe.default_generation.replace(**generation_overrides(active_generate_config())),
            records=self.records,
            judge=self._asker("judge") if "judge" in roles else None,
            checker=self._asker("checker") if "checker" in roles else None,
            n_resamples=self.n_resamples,
            seed=self.seed,
            system_prompt=self.system_prompt,
        )
        self._thread = threading.Thread(target=self._run, args=(ctx,), name=f"genderprobe-{probe.name}", daemon=True)
        self._thread.start()

    def _round(self, role: str, requests: list[Request]) -> list[Sample]:
        self._rounds += 1
        first = self._ids[-1] + 1 if self._ids else 1
        self._ids = list(range(first, first + len(requests)))
        return [
            Sample(id=sid, input=chat_messages(r),
                   metadata={"round": self._rounds, "index": i, "role": role, "generation": r.params.as_dict()})
            for i, (sid, r) in enumerate(zip(self._ids, requests))
        ]

    def cut_short(self, scored: int) -> str | None:
        """Why the metrics are empty, once: every sample inspect began is scored, yet the round is
        not whole, so inspect left the rest out (--limit, --sample-id) and the probe cannot finish."""
        if self._told or not self._ids or scored != self.started or len(self._answers) >= len(self._ids):
            return None
        self._told = True
        return (f"No metrics: inspect ran {len(self._answers):,} of the {len(self._ids):,} samples of round "
                f"{self._rounds} (--limit or --sample-id), and the probe computes its metrics from all of them; "
                f"size the run with the probe's own parameters (-T sample_k=N where it has one).")

    def _answer_round(self) -> None:
        """Hand the round's answers to the probe (failed samples count as failed requests, as in genderprobe run)."""
        missing = sum(sid not in self._answers for sid in self._ids)
        if missing:
            error = UserError(
                f"inspect ran {len(self._ids) - missing:,} of the {len(self._ids):,} samples of round {self._rounds} "
                "and the probe needs them all; drop --limit and --sample-id and size the run with the probe's own "
                "parameters (-T sample_k=N where it has one).")
            self._replies.put(error)  # ends the probe's thread
            raise error
        self._responses = [self._answers.pop(sid) for sid in self._ids]
        self._records_before = len(self.records.records)
        self._replies.put(self._responses)

    def _match_codes(self) -> None:
        """The codes of the round the probe has just read, where its records line up with its samples.

        Probes write a record with the answer and its code for every answer, in
        the order they asked; a round whose records do not match its answers
        one to one (a judge's labels, written later with the dialogues) gets no codes.
        """
        written = [r for r in self.records.records[self._records_before:] if "code" in r and "answer" in r]
        if self._responses and len(written) == len(self._responses) and all(
                w["answer"] == resp.text for w, resp in zip(written, self._responses)):
            self.codes.update((sid, str(w["code"])) for sid, w in zip(self._ids, written))
        self._responses = []

    # -- the probe's side (its worker thread) -----------------------------------

    def _asker(self, role: str) -> Callable[[Sequence[Request]], list[Response]]:
        def ask(requests: Sequence[Request]) -> list[Response]:
            if not requests:
                return []
            self._events.put(("ask", role, list(requests)))
            reply = self._replies.get()
            if isinstance(reply, BaseException):
                raise reply
            return reply

        return ask

    def _run(self, ctx: RunContext) -> None:
        try:
            self._events.put(("done", self.probe.run(ctx)))
        except BaseException as exc:  # raised again in the task, by next_samples()
            self._events.put(("error", exc))
