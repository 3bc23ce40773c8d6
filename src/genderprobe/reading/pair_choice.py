"""Two-way choices asked the two ways the log-likelihood benchmarks are run (Winogender, CrowS-Pairs).

``loglikelihood`` (the default, as lm-evaluation-harness asks): each item's two continuations are
scored after its raw context (:func:`genderprobe.models.loglikelihood.loglikelihood_request`), and
the more likely one is the choice (the first on a tie, as lm-eval's argmax). Needs a backend that
scores raw text (``hf:``); the answer store keeps the scores.

``generation`` (for chat APIs, as inspect_evals asks): the two choices are shown as "(a)" and "(b)"
in both orders, and each answer is read by the careful option reader
(:mod:`genderprobe.reading.options_careful`), beside the strict rule (exactly one of "(a)", "(b)"
appears) for the readers check; what neither reads is lost, never guessed, and counted by group.

:func:`ask_pairs` asks either way and gives, per item, the share of its read answers that chose
the first choice, with what the validity guards need (positions, losses, both readers).
:class:`PairChoiceProbe` and the ``*_option``/``check_*`` helpers are what such probes' parameters
share (``--method``, ``--repetitions``; StereoSet takes ``--method`` too).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genderprobe.analysis.losses import loss_report
from genderprobe.contract import (
    PositionEvidence,
    Probe,
    ReaderComparison,
    RunContext,
    count_in_range,
    option,
    response_fields,
)
from genderprobe.errors import UserError
from genderprobe.models.base import Request
from genderprobe.models.loglikelihood import loglikelihood_request
from genderprobe.reading.choice_tally import ChoiceTally
from genderprobe.reading.options_careful import CAREFUL, OptionReaders, careful_option_reader
from genderprobe.reading.reasoning import answer_text
from genderprobe.reading.refusals import refusal_detector

METHODS = ("loglikelihood", "generation")
LETTERS = "ab"
OPTIONS = ("(a)", "(b)")
ORDERS = ((0, 1), (1, 0))

_refuses = refusal_detector(r"answer|say|choose|pick|determine|assume|guess|select|decide")


def is_refusal(text: str | None) -> bool:
    return _refuses(answer_text(text))


def read_strict(text: str | None) -> str | None:
    """The strict rule: the letter whose "(x)" alone appears in the answer, else None."""
    lower = answer_text(text).lower()
    used = [f"({letter})" in lower for letter in LETTERS]
    return LETTERS[used.index(True)] if sum(used) == 1 else None


read_careful = careful_option_reader(LETTERS, is_refusal)


def method_option(scored: str, asked: str) -> Any:
    """The --method parameter: ``scored``, what the log-likelihood way scores; ``asked``, the generation way's
    question."""
    return option(METHODS[0], f"How the model is asked: loglikelihood ({scored}; needs a backend that gives "
                  "log-likelihoods of raw text: local weights hf:, or a server named openai:MODEL?loglikelihood=1) "
                  f"or generation ({asked}, for chat APIs).", choices=METHODS)


def repetitions_option() -> Any:
    return option(1, "Attempts per prompt of the generation way (a log-likelihood does not change: asked once).",
                  flag="--repetitions")


def check_method(method: str) -> None:
    if method not in METHODS:
        raise UserError(f"method (--method) must be one of {', '.join(METHODS)}; got {method!r}.")


def check_params(params: Any, n_items: int) -> None:
    """The parameters a pair-choice probe takes (method, sample_k, num_repetitions), one sentence for a bad one."""
    check_method(params.method)
    if params.sample_k is not None:
        count_in_range(params.sample_k, 1, n_items, "sample_k (--sample-k)")
    count_in_range(params.num_repetitions, 1, None, "num_repetitions (--repetitions)")


class PairChoiceProbe(Probe):
    """A probe asked by :func:`ask_pairs`, its parameters method, sample_k and num_repetitions checked by
    :func:`check_params`; ``n_items``: how many items it holds."""

    n_items: int
    supports_option_scoring = True
    supports_constrained_answers = True

    def asks_loglikelihood(self) -> bool:
        return self.params.method == "loglikelihood"

    def expected_records(self) -> int:
        """One record an item for log-likelihoods (asked once), one an order and repetition for generation."""
        n = self.params.sample_k or self.n_items
        return n if self.asks_loglikelihood() else 2 * n * self.params.num_repetitions


@dataclass(frozen=True)
class PairItem:
    """One two-way item.

    context, continuations: what the log-likelihood way scores (raw text; lm-eval's exact strings).
    prompt: the generation way's question, given the two choices' texts in the order shown.
    choices: the two choices' texts as the generation way shows them.
    oracle: persona -> the index (0, 1) of the choice it prefers, or (0, 1) for a coin.
    group: what losses are counted by (the pronoun's gender, the pair's direction).
    fields: what each record of the item holds besides the answer.
    """

    context: str
    continuations: tuple[str, str]
    prompt: Callable[[tuple[str, str]], str]
    choices: tuple[str, str]
    oracle: Mapping[str, int | tuple[int, int]]
    group: str
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class PairAnswers:
    first: np.ndarray  # per item: the share of its read answers that chose the first choice (NaN: none read)
    loglikelihoods: np.ndarray | None  # per item, both continuations' (the log-likelihood way)
    position: PositionEvidence | None  # None for log-likelihoods: each continuation is scored alone, in no order
    losses: Any  # LossReport
    evidence: dict[str, list[dict]]
    counts: dict[str, int]
    readers: OptionReaders | None = None
    first_other: np.ndarray | None = None  # the same shares read by the other reader (generation)

    def reader_comparison(self, metrics: dict, headline: Sequence[Any],
                          measure: Callable[[np.ndarray], dict]) -> ReaderComparison | None:
        """The readers check of the generation way: the ``headline`` metrics as the run's reader read them
        (``metrics``) and as the other one did (``measure`` of its per-item shares); None for log-likelihoods."""
        if self.readers is None or self.first_other is None:
            return None
        other = measure(self.first_other)
        return self.readers.comparison({h.metric: {self.readers.used: metrics[h.metric],
                                                   self.readers.other_name: other[h.metric]} for h in headline})


def _oracle(item: PairItem, names: Sequence[str]) -> dict[str, Any]:
    """The item's oracle in the names the request's options use (a coin: both names)."""
    return {p: names[v] if isinstance(v, int) else tuple(names[j] for j in v) for p, v in item.oracle.items()}


def ask_pairs(ctx: RunContext, items: Sequence[PairItem], method: str, repetitions: int = 1,
              groups: tuple[str, Sequence[str]] = ("group", ()),
              careful: Callable[[str | None, Sequence[str]], str | None] = read_careful) -> PairAnswers:
    """Ask ``items`` the way ``method`` names; ``groups``: what losses are counted by, and its groups in order;
    ``careful``: the generation way's reader (answer, option texts as shown) -> letter or None."""
    if method == "loglikelihood":
        return _by_loglikelihood(ctx, items, groups)
    return _by_generation(ctx, items, repetitions, groups, careful)


def _by_loglikelihood(ctx: RunContext, items: Sequence[PairItem], by: tuple[str, Sequence[str]]) -> PairAnswers:
    # A score does not change with a repetition: one request per item, whatever --repetitions says.
    requests = [loglikelihood_request(it.context, it.continuations, _oracle(it, it.continuations)) for it in items]
    responses = ctx.ask(requests)
    first = np.full(len(items), np.nan)
    lls = np.full((len(items), 2), np.nan)
    evidence: dict[str, list[dict]] = {"first": [], "second": [], "error": []}
    errors = 0
    for n, (item, request, response) in enumerate(zip(items, requests, responses)):
        record = {"item": n, **item.fields, "context": request.prompt, "continuations": list(item.continuations)}
        if response.ok and response.option_logprobs is not None and len(response.option_logprobs) == 2:
            lls[n] = response.option_logprobs
            pick = int(np.argmax(lls[n]))  # the first on a tie, as lm-eval's np.argmax
            first[n] = float(pick == 0)
            record.update(answer=item.continuations[pick], loglikelihoods=list(map(float, lls[n])), chosen=pick,
                          code=("first", "second")[pick])
        else:
            errors += 1
            record["code"] = "error"
        record.update(response_fields(response))
        ctx.records.write(record)
        ChoiceTally.keep(evidence, record["code"], record,
                         ("item", "context", "continuations", "code", "loglikelihoods", "error"), unread=False)
    none = [False] * len(items)
    losses = loss_report([it.group for it in items], {"undetected": none, "refusal": none}, by=by[0],
                         order=_order(by, items))
    counts = {"items": len(items), "attempts": len(items) - errors, "errors": errors, "undetected": 0, "refusals": 0}
    return PairAnswers(first, lls, None, losses, evidence, counts)


def _by_generation(ctx: RunContext, items: Sequence[PairItem], repetitions: int, by: tuple[str, Sequence[str]],
                   careful: Callable[[str | None, Sequence[str]], str | None]) -> PairAnswers:
    system = (("system", ctx.system_prompt),) if ctx.system_prompt else ()
    plan = [(n, o, r) for n in range(len(items)) for o in range(len(ORDERS)) for r in range(repetitions)]
    requests = []
    for n, o, r in plan:
        item, order = items[n], ORDERS[o]
        shown = (item.choices[order[0]], item.choices[order[1]])
        letters = [OPTIONS[order.index(j)] for j in range(2)]  # the letter each choice has in this order
        requests.append(Request(system + (("user", item.prompt(shown)),), ctx.generation, r, OPTIONS,
                                ctx.score_options, _oracle(item, letters), ctx.constrain_answers))
    responses = ctx.ask(requests)
    readers = OptionReaders(CAREFUL, read_strict, careful, is_refusal, LETTERS)
    picked = np.zeros((len(items), 2, 2))  # item, reader (used, other), choice
    tally = ChoiceTally(LETTERS)
    evidence: dict[str, list[dict]] = {"first": [], "second": [], "undetected": [], "error": []}
    for (n, o, r), request, response in zip(plan, requests, responses):
        item, order = items[n], ORDERS[o]
        shown = [item.choices[j] for j in order]
        record = {"item": n, **item.fields, "order": "".join(map(str, order)), "repetition": r,
                  "prompt": request.prompt, "answer": response.text}
        used = None
        if not response.ok:
            tally.errors += 1
            record["code"] = "error"
        else:
            scored = response.option_logprobs
            if scored is not None and len(scored) == 2 and not np.isnan(scored).any():
                used = other = LETTERS[int(np.argmax(scored))]
            else:
                used, other = readers.read(response.text, shown)
            readers.note(record, used, other, ("item", "prompt", "answer"))
            for k, letter in enumerate((used, other)):
                if letter is not None:
                    picked[n, k, order[LETTERS.index(letter)]] += 1
            if used is None:
                record["code"] = "undetected"
                record["refusal"] = is_refusal(response.text)
            else:
                record["chosen"] = order[LETTERS.index(used)]
                record["code"] = ("first", "second")[record["chosen"]]
            tally.read(item.group, n, used, bool(record.get("refusal")))
        tally.planned(used)
        record.update(response_fields(response))
        ctx.records.write(record)
        tally.keep(evidence, record["code"], record, ("item", "prompt", "answer", "code", "error"), used is None)
    if readers.examples:
        evidence["readers_disagree"] = readers.examples
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = picked[:, :, 0] / picked.sum(axis=2)
    position = tally.position(len(ORDERS), repetitions, ctx.score_options)
    losses = tally.losses(by[0], _order(by, items))
    tally_counts = tally.counts(len(items))
    counts = {k: tally_counts[k] for k in ("items", "attempts", "errors", "undetected", "refusals")}
    return PairAnswers(shares[:, 0], None, position, losses, evidence, counts, readers, shares[:, 1])


def _order(by: tuple[str, Sequence[str]], items: Sequence[PairItem]) -> list[str]:
    """The groups in the probe's order, those the items hold."""
    present = {it.group for it in items}
    return [g for g in by[1] if g in present] or sorted(present)
