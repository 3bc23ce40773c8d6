"""Log-likelihoods of text continuations, as lm-evaluation-harness 0.4.13 computes them.

lm-eval's ``loglikelihood`` requests are (context, continuation) pairs of raw
text: no chat template, no system turn, the continuation exactly as the task
writes it (a multiple-choice task puts its ``target_delimiter``, a space by
default, in front of each choice; CrowS-Pairs scores whole sentences after an
empty context). A probe asks for them with :func:`loglikelihood_request`: one
request per context, its continuations as the options; a backend that can
(``Model.supports_loglikelihood``) answers with each continuation's summed
log-likelihood in ``Response.option_logprobs``, and the answer store keeps
them like any answer, so a pair is never scored twice.

The tokens are lm-eval's (its HFLM ``_encode_pair`` and empty-context rule),
decided here once for every local backend: :func:`encode_pair`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genderprobe.errors import UserError
from genderprobe.models.base import GenerationParams, Request

# Nothing is generated: one token, so that no server or backend default spends more.
SCORING = GenerationParams(max_tokens=1)


def loglikelihood_request(context: str, continuations: Sequence[str], oracle: Mapping[str, Any] | None = None,
                          repetition: int = 0, per_token: bool = False) -> Request:
    """The request for the log-likelihood of each of ``continuations`` after ``context`` (raw text).

    ``oracle`` says which continuation each calibration persona prefers (see
    :mod:`genderprobe.models.reference`), as for any closed choice; ``per_token``: the mean
    log-likelihood per continuation token instead of the sum (``Request.per_token``)."""
    if not continuations or any(not c for c in continuations):
        raise UserError("A log-likelihood request needs continuations, none of them empty.")
    return Request(messages=(("user", context),), params=SCORING, repetition=repetition,
                   options=tuple(continuations), score_options=True, oracle=oracle, raw_text=True,
                   per_token=per_token)


def prefix_token_id(tokenizer: Any) -> int:
    """The token lm-eval puts before a continuation with an empty context: BOS, else end-of-text."""
    for value in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if isinstance(value, int):
            return value
    raise UserError("The tokenizer has neither a beginning- nor an end-of-text token to score a text after an "
                    "empty context with.")


def encode_pair(tokenizer: Any, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """The context's and the continuation's tokens, as lm-eval's HFLM makes them (``add_bos_token`` unset).

    Spaces that end the context move to the continuation; the continuation's tokens are those of
    context + continuation after the context's own, so a word split across the join is tokenized as
    the model saw it in training. Texts get the tokenizer's own special tokens (a Llama tokenizer's
    BOS), unless they start with the prefix token's text. An empty context is the prefix token alone,
    before the continuation's tokens without special tokens (or their first, where it is that token)."""
    prefix = prefix_token_id(tokenizer)
    if context == "":
        tail = _ids(tokenizer, continuation, special=False)
        return ([prefix], tail) if tail[:1] != [prefix] else (tail[:1], tail[1:])
    spaces = len(context) - len(context.rstrip())
    if spaces:
        context, continuation = context[:-spaces], context[-spaces:] + continuation
    marker = tokenizer.decode(prefix)

    def ids(text: str) -> list[int]:
        return _ids(tokenizer, text, special=not (marker and text.startswith(marker)))

    whole, head = ids(context + continuation), ids(context)
    return head, whole[len(head):]


def _ids(tokenizer: Any, text: str, special: bool) -> list[int]:
    return list(tokenizer(text, add_special_tokens=special)["input_ids"])
