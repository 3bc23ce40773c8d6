"""An answer with no text is an error of kind "empty", marked before it is stored.

It is kept among the errors (one row each time), so a rerun asks again, once:
an empty answer is usually a provider failure worth one more try, but a
prompt that came back empty :data:`EMPTY_TRIES` times keeps its empty answer,
so a prompt a model always answers with nothing is paid at most twice ever.
With ``keep_empty`` (``--keep-empty``) every stored empty answer is taken as
it is, so a reread (another ``--reader``) sends nothing. The runner stops a
run whose answers are mostly empty (a server sending no text). Used wherever
answers arrive: the runner, provider batches, the inspect_ai driver.
"""

from __future__ import annotations

from collections.abc import Sequence

from genderprobe.models.base import Response

# Times a prompt may come back empty before its empty answer is kept (the first try and one more).
EMPTY_TRIES = 2


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


def stored_empty_answers(store, keys: Sequence[bytes], missing: Sequence[int], *, keep_empty: bool,
                         max_age: float | None = None) -> tuple[dict[int, Response], int]:
    """Of the requests at ``missing`` (no answer in ``store``), those that came back empty before.

    Returns the empty answers taken as they are (by index: lost answers of kind "empty", costing
    nothing), and how many distinct prompts are asked again (empty once, without ``keep_empty``).
    """
    seen = store.empty_answers(list(dict.fromkeys(keys[i] for i in missing)), max_age=max_age)
    taken: dict[int, Response] = {}
    again: set[bytes] = set()
    for i in missing:
        found = seen.get(keys[i])
        if found is None:
            continue
        times, why = found
        if keep_empty or times >= EMPTY_TRIES:
            taken[i] = Response(error_kind="empty", error_message=why, cached=True)
        else:
            again.add(keys[i])
    return taken, len(again)


def asked_again_line(n: int, spec: str) -> str:
    """The line a run shows before sending when it asks again prompts whose last answer was empty."""
    return (f"{n:,} prompt{'s' if n != 1 else ''} to {spec} came back empty last time and "
            f"{'are' if n != 1 else 'is'} asked again (--keep-empty takes stored empty answers as they are).")
