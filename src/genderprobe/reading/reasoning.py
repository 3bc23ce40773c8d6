"""Setting a reasoning model's thinking aside before an answer is read.

Reasoning models put their thinking before the answer, in ``<think>`` (or
``<thinking>``, ``<reasoning>``) blocks, or send it separately. Thinking often
weighs every option ("stance: Moral ... but on reflection ...") and must never
be read as the answer. :func:`split_reasoning` returns the answer with the
reasoning removed, and the reasoning, which records keep.

An unclosed block (the answer was cut off by ``max_tokens`` while the model
was still thinking) holds no answer at all: the whole text is reasoning.
"""

from __future__ import annotations

import re

_TAGS = "think|thinking|reasoning|reflection|scratchpad"
_CLOSED = re.compile(rf"<({_TAGS})>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_OPEN = re.compile(rf"<({_TAGS})>", re.IGNORECASE)
# Some servers strip the opening tag and leave only "...</think>" before the answer.
_ORPHAN_CLOSE = re.compile(rf"^(.*?)</({_TAGS})\s*>", re.IGNORECASE | re.DOTALL)


def split_reasoning(text: str | None) -> tuple[str, str]:
    """(answer, reasoning) of a raw answer; both "" for no text."""
    if not text:
        return "", ""
    if "<" not in text:  # no tag at all: the common case, read on every answer
        return text.strip(), ""
    reasoning: list[str] = []

    def keep(match: re.Match[str]) -> str:
        reasoning.append(match.group(2).strip())
        return " "

    answer = _CLOSED.sub(keep, text)
    orphan = _ORPHAN_CLOSE.match(answer)
    if orphan and not _OPEN.search(orphan.group(1)):
        reasoning.insert(0, orphan.group(1).strip())
        answer = answer[orphan.end():]
    opened = _OPEN.search(answer)
    if opened:  # cut off while thinking: what follows the tag is reasoning, not an answer
        reasoning.append(answer[opened.end():].strip())
        answer = answer[: opened.start()]
    return answer.strip(), "\n\n".join(r for r in reasoning if r)


def answer_text(text: str | None) -> str:
    """The answer with reasoning removed: what readers read."""
    return split_reasoning(text)[0]
