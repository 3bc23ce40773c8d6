"""An answer with no text is an error of kind "empty", marked before it is stored.

It is kept among the errors, so a rerun asks again; the runner stops a run
whose answers are mostly empty (a server sending no text). Used wherever
answers arrive: the runner, provider batches, the inspect_ai driver.
"""

from __future__ import annotations

from genderprobe.models.base import Response


def mark_empty(r: Response) -> None:
    """Turn an answer with no text (and no option scores) into an error of kind "empty"."""
    text = r.text
    # Called for every answer: the common case (some text) is decided first, without a copy.
    if (text and not text.isspace()) or not r.ok or r.option_logprobs is not None:
        return
    if r.finish_reason == "length" and r.reasoning:
        why = "the reasoning used every token before any answer: raise --max-tokens"
    elif r.finish_reason and r.finish_reason not in ("stop", "end_turn"):
        why = f"no text, finish_reason {r.finish_reason}"
    else:
        why = "no text"
    r.error_kind, r.error_message = "empty", why
