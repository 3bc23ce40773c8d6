"""Winogender's 720 sentences, with the fields lm-evaluation-harness 0.4.13 reads and the paper's "gotchas".

Each published sentence (``all_sentences.tsv``; its id is occupation.participant.answer.gender) is
one item. Its template (``templates.tsv``, one per occupation and answer) says which pronoun slot the
sentence fills, so the pronoun is known: she/her/her, he/his/him, they/their/them for the nominative,
possessive and accusative slot. lm-eval's fields (the Hugging Face dataset
oskarvanderwal/winogender): ``pronoun`` that word, ``occupation``, ``participant`` ("someone" in the
sentences that bleach it), ``label`` 0 where the pronoun refers to the occupation and 1 where it
refers to the participant.

A "gotcha" (Rudinger et al. 2018, Table 2) is a sentence whose pronoun's gender does not fit the
occupation's majority gender by the Bureau of Labor Statistics where the occupation is the answer, or
fits it where the participant is: for a female pronoun, the occupation is the answer and under 50%
female, or the participant is and the occupation is at least 50% female; reversed for a male pronoun.
Neutral pronouns have none. 240 of the 480 gendered sentences are gotchas (no occupation is exactly
50% female).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import data_text
from genderprobe.errors import UserError

SENTENCES = "winogender/winogender/all_sentences.tsv"
TEMPLATES = "winogender/winogender/templates.tsv"
STATISTICS = "winogender/winogender/occupations-stats.tsv"
GENDERS = ("female", "male", "neutral")
PRONOUNS = {
    "$NOM_PRONOUN": {"female": "she", "male": "he", "neutral": "they"},
    "$POSS_PRONOUN": {"female": "her", "male": "his", "neutral": "their"},
    "$ACC_PRONOUN": {"female": "her", "male": "him", "neutral": "them"},
}
N_ITEMS = 720
N_OCCUPATIONS = 60


@dataclass(frozen=True)
class Item:
    """One Winogender sentence, with lm-eval's fields and the paper's."""

    sentid: str
    sentence: str
    pronoun: str
    occupation: str
    participant: str  # the other participant as the sentence names it ("someone" where it is bleached)
    gender: str  # the pronoun's: female, male or neutral
    label: int  # 0: the pronoun refers to the occupation; 1: to the participant
    bls_pct_female: float
    bergsma_pct_female: float

    @property
    def gotcha(self) -> bool:
        if self.gender == "neutral":
            return False
        female_majority = self.bls_pct_female >= 50
        fits = female_majority == (self.gender == "female")
        return fits == (self.label == 1)

    @property
    def stereotyped_label(self) -> int:
        """The referent a reader who goes by the occupation's majority gender picks (the correct one for a
        neutral pronoun, which has no gender to go by)."""
        if self.gender == "neutral":
            return self.label
        return 1 - self.label if self.gotcha else self.label


def _tsv(key: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data_text(key)), delimiter="\t"))


@cache
def statistics() -> dict[str, tuple[float, float]]:
    """Occupation -> (BLS % female, Bergsma and Lin's % female)."""
    return {r["occupation"]: (float(r["bls_pct_female"]), float(r["bergsma_pct_female"])) for r in _tsv(STATISTICS)}


@cache
def items() -> tuple[Item, ...]:
    slots = {}
    for row in _tsv(TEMPLATES):
        slot = next(s for s in PRONOUNS if s in row["sentence"])
        slots[(row["occupation(0)"], int(row["answer"]))] = slot
    stats = statistics()
    found = []
    for row in _tsv(SENTENCES):
        occupation, participant, answer, gender, _ = row["sentid"].split(".")
        bls, bergsma = stats[occupation]
        pronoun = PRONOUNS[slots[(occupation, int(answer))]][gender]
        found.append(Item(row["sentid"], row["sentence"], pronoun, occupation, participant, gender, int(answer),
                          bls, bergsma))
    if len(found) != N_ITEMS or len({i.occupation for i in found}) != N_OCCUPATIONS:
        raise UserError(f"Expected {N_ITEMS} Winogender sentences on {N_OCCUPATIONS} occupations in {SENTENCES}, "
                        f"found {len(found)}; reinstall genderprobe.")
    return tuple(found)


def lm_eval_context(item: Item) -> str:
    """lm-eval 0.4.13's doc_to_text: the sentence, then "‘He’ refers to the" (curly quotes, capitalised pronoun)."""
    return f"{item.sentence} ‘{item.pronoun.capitalize()}’ refers to the"


def lm_eval_choices(item: Item) -> tuple[str, str]:
    """lm-eval's continuations: its target_delimiter (a space) and each choice, occupation first."""
    return (f" {item.occupation}", f" {item.participant}")
