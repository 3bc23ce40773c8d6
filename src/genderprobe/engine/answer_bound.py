"""The longest answer a run takes in: a server that ignores max_tokens must not stall the readers.

A server sent 30 MB answers to requests with max_tokens 300; the readers'
regular expressions took over six minutes on four of them (issue 47). An
answer (and its reasoning, separately) longer than :func:`bound` characters
is cut to it where it enters the run, before the store, the records and every
reader, and ``Response.cut_from`` keeps how many characters arrived.

The bound is :data:`CHARS_PER_TOKEN` characters for each token of max_tokens,
at least :data:`FLOOR`; without max_tokens, that of :data:`UNSET_MAX_TOKENS`.
A token averages about four characters of English and rarely exceeds sixteen,
so a server that keeps to max_tokens is never cut, and the kept head holds all
a server that kept to it could have said: it is read like any answer. The cut
is recorded (``cut_from`` in the record, ``run.cut`` and a warning in the
results), not counted as a lost answer.
"""

from __future__ import annotations

from genderprobe.models.base import Request, Response

CHARS_PER_TOKEN = 16
FLOOR = 4_096
# A run that sets no max_tokens leaves the limit to the server; 8,192 tokens is generous for these probes.
UNSET_MAX_TOKENS = 8_192


def bound(request: Request) -> int:
    """The most characters of answer (and of reasoning) ``request`` takes in."""
    return max(FLOOR, CHARS_PER_TOKEN * (request.params.max_tokens or UNSET_MAX_TOKENS))


def cut(r: Response, request: Request) -> None:
    """Cut an answer longer than its bound, in place, noting in ``cut_from`` what arrived."""
    text, reasoning = r.text or "", r.reasoning or ""
    most = bound(request)
    if len(text) <= most and len(reasoning) <= most:
        return
    r.cut_from = len(text) + len(reasoning)
    r.text = r.text and text[:most]
    r.reasoning = r.reasoning and reasoning[:most]
