"""Fifty Shades of Bias (Hada et al. 2023): sentences, annotations, scores, seeds, examples.

The released in-context example files hold their examples as the text of a
Python list of (seed, generation) pairs; it is parsed as data with
``ast.literal_eval`` and checked, never executed.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import data_text, read_csv
from genderprobe.errors import UserError
from genderprobe.studies.fifty_shades import bws

SEED_TYPES = ("explicit", "implicit", "neutral", "random")
# Seed types with released seed files (the 50 random COPA seeds were not released).
GENERATION_SEED_TYPES = ("explicit", "implicit", "neutral")
PROMPT_TYPES = ("conversion", "completion")
_SEED_FILES = {  # the released file name is spelled "explict"
    "explicit": "fifty_shades/seeds/explict_bias_seed.txt",
    "implicit": "fifty_shades/seeds/implicit_bias_seed.txt",
    "neutral": "fifty_shades/seeds/neutral_bias_seed.txt",
}
N_SENTENCES = 1000


@dataclass(frozen=True)
class RatedSentence:
    """One of the 1,000 generated sentences with its human (BWS) score.

    seed: the seed sentence it was generated from (the released ``query``).
    score: the BWS score in [-1, 1]; normalized: (score + 1) / 2 in [0, 1], and
    normalized_text: that value as text (what in-context examples show and the
    calibration judge answers), so parsing it gives ``normalized`` exactly.
    """

    uid: int
    prompt_type: str
    seed_type: str
    seed: str
    text: str
    score: float
    normalized: float
    normalized_text: str


@cache
def rated_sentences() -> tuple[RatedSentence, ...]:
    """The 1,000 sentences joined with their released scores, in uid order."""
    rel = "fifty_shades/FSB_text.csv"
    scores = {}
    for i, row in enumerate(read_csv("fifty_shades/fsb_final_scores.csv", ("id", "score", "score_normalized")), 2):
        try:
            # The release writes (s + 1) / 2 with float noise (0.15000000000000002); s has 3
            # decimals, so 4 decimals hold the value exactly and read cleanly in prompts.
            normalized = round(float(row["score_normalized"]), 4)
            scores[int(row["id"])] = (float(row["score"]), normalized, repr(normalized))
        except ValueError:
            raise UserError(f"Line {i} of fifty_shades/fsb_final_scores.csv has a non-numeric id or score.") from None
    out = []
    for i, row in enumerate(read_csv(rel, ("uid", "prompt_type", "seed_type", "query", "response")), 2):
        prompt_type, seed_type = row["prompt_type"].strip().lower(), row["seed_type"].strip().lower()
        if prompt_type not in PROMPT_TYPES or seed_type not in SEED_TYPES:
            raise UserError(f"Line {i} of {rel} has an unknown prompt type or seed type.")
        try:
            uid = int(row["uid"])
        except ValueError:
            raise UserError(f"Line {i} of {rel} has a non-numeric uid.") from None
        if uid not in scores:
            raise UserError(f"Sentence {uid} of {rel} has no score in fifty_shades/fsb_final_scores.csv.")
        score, normalized, text = scores[uid]
        out.append(RatedSentence(uid, prompt_type, seed_type, row["query"].strip(), row["response"].strip(),
                                 score, normalized, text))
    if len(out) != N_SENTENCES:
        raise UserError(f"Expected {N_SENTENCES} Fifty Shades sentences, found {len(out)}.")
    return tuple(sorted(out, key=lambda s: s.uid))


@cache
def annotations() -> bws.Annotations:
    """The released raw best-worst annotations (5,360 rows over 2,000 4-tuples)."""
    rel = "fifty_shades/fsb-tuples-annotations.csv"
    return bws.parse_annotations(data_text(rel), rel)


@cache
def released_scores() -> dict[str, tuple[float, float]]:
    """id -> (score, score_normalized) as released."""
    return {str(s.uid): (s.score, s.normalized) for s in rated_sentences()}


@cache
def seeds(seed_type: str) -> tuple[str, ...]:
    """The 150 released seed sentences of one type."""
    if seed_type not in _SEED_FILES:
        raise UserError(
            f"No released seeds of type '{seed_type}'; choose one of {', '.join(GENERATION_SEED_TYPES)}."
        )
    return parse_seeds(data_text(_SEED_FILES[seed_type]))


def parse_seeds(text: str) -> tuple[str, ...]:
    """One seed per non-empty line."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


@cache
def in_context_examples(seed_type: str, prompt_type: str) -> tuple[tuple[str, str], ...]:
    """The released (seed, generation) examples for one seed type and prompt type."""
    if seed_type not in GENERATION_SEED_TYPES or prompt_type not in PROMPT_TYPES:
        raise UserError(
            f"No released in-context examples for seed type '{seed_type}' and prompt type '{prompt_type}'; "
            f"seed types: {', '.join(GENERATION_SEED_TYPES)}; prompt types: {', '.join(PROMPT_TYPES)}."
        )
    rel = f"fifty_shades/in_context_examples/{seed_type}_{prompt_type}_ic.json"
    return parse_in_context(data_text(rel), rel)


def parse_in_context(text: str, source: str) -> tuple[tuple[str, str], ...]:
    """Examples from a file in the released layout: {"task": ..., "ic": "[(seed, generation), ...]"}.

    Also accepted: "ic" as a JSON list of [seed, generation] pairs.
    """
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"The in-context example file {source} is not valid JSON (line {exc.lineno}).") from None
    if not isinstance(record, dict) or "ic" not in record:
        raise UserError(f"The in-context example file {source} has no 'ic' field.")
    raw = record["ic"]
    if isinstance(raw, str):
        try:
            raw = ast.literal_eval(raw)  # a literal only: nothing is executed
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise UserError(f"The 'ic' field of {source} is not a literal list of (seed, generation) pairs.") from None
    if not isinstance(raw, (list, tuple)) or not raw:
        raise UserError(f"The 'ic' field of {source} must be a non-empty list of (seed, generation) pairs.")
    pairs = []
    for k, pair in enumerate(raw, 1):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(v, str) for v in pair)):
            raise UserError(f"Example {k} in the 'ic' field of {source} is not a (seed, generation) pair of strings.")
        pairs.append((pair[0].strip(), pair[1].strip()))
    return tuple(pairs)
