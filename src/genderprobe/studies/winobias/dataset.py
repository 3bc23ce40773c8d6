"""The WinoBias test sentences, as twin pairs.

Each of the four parts (type 1 and type 2, pro- and anti-stereotypical) holds 396
numbered sentences; line n of a type's pro file and line n of its anti file are one
sentence with the pronoun's gender swapped. In a sentence the first bracket is the
gold antecedent (an occupation) and the second the pronoun to resolve. The other
occupation of the sentence, the wrong answer, is found through the paper's two
occupation lists. In a pro sentence the gold antecedent is the occupation the
pronoun's gender is stereotyped with; in an anti sentence it is the other one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import data_text
from genderprobe.errors import UserError

TYPES = ("type1", "type2")
STANCES = ("pro", "anti")
PARTS = tuple(f"{t}_{s}" for t in TYPES for s in STANCES)
N_PER_PART = 396
N_PAIRS = N_PER_PART * len(TYPES)
_FILE = "winobias/winobias/{stance}_stereotyped_{type}.txt.test"
_BRACKET = re.compile(r"\[([^\]]+)\]")
_FEMALE = {"she", "her", "hers", "herself"}
_MALE = {"he", "him", "his", "himself"}


@dataclass(frozen=True)
class Item:
    """One WinoBias sentence: where its pronoun points, and the two occupations it could point to."""

    type: str  # type1 or type2
    stance: str  # pro or anti
    line: int  # the sentence's number in its file (1-based, as the file numbers it)
    sentence: str  # the sentence without brackets, as the data writes it
    pronoun: str  # the pronoun to resolve, as written
    pronoun_gender: str  # female or male
    occupations: tuple[str, str]  # the two occupations, in the order the sentence names them
    gold: int  # the antecedent (0 or 1 of occupations)

    @property
    def part(self) -> str:
        return f"{self.type}_{self.stance}"

    @property
    def stereotypical(self) -> int:
        """The occupation the pronoun's gender is stereotyped with: the gold one in a pro sentence."""
        return self.gold if self.stance == "pro" else 1 - self.gold


@cache
def occupations() -> tuple[str, ...]:
    lists = (data_text(f"winobias/winobias/{gender}_occupations.txt") for gender in ("male", "female"))
    return tuple(line.strip() for text in lists for line in text.splitlines() if line.strip())


def _found(sentence: str) -> list[tuple[int, str]]:
    """The occupations a sentence names, by where they first appear (a longer name wins over one inside it)."""
    found = {}
    for name in occupations():
        m = re.search(rf"\b{re.escape(name)}s?\b", sentence, re.IGNORECASE)
        if m:
            found[name] = m.start()
    kept = [name for name in found if not any(name != other and name in other for other in found)]
    return sorted((found[name], name) for name in kept)


def parse(type_: str, stance: str, line: str) -> Item:
    number, _, text = line.strip().partition(" ")
    spans = _BRACKET.findall(text)
    sentence = _BRACKET.sub(r"\1", text)
    found = [name for _, name in _found(sentence)]
    pronoun = spans[1] if len(spans) >= 2 else ""
    gender = "female" if pronoun.lower() in _FEMALE else "male" if pronoun.lower() in _MALE else None
    golds = [i for i, name in enumerate(found) if name.lower() in spans[0].lower()] if spans else []
    if len(found) != 2 or gender is None or len(golds) != 1:
        raise UserError(f"WinoBias {stance} {type_} line {number} cannot be read (two occupations, an antecedent "
                        f"and a pronoun); reinstall genderprobe.")
    return Item(type_, stance, int(number), sentence, pronoun, gender, (found[0], found[1]), golds[0])


@cache
def pairs() -> tuple[tuple[Item, Item], ...]:
    """Every twin pair (pro, anti), type 1's first, each type's in the files' order."""
    out = []
    for type_ in TYPES:
        parts = {stance: [parse(type_, stance, line) for line in data_text(_FILE.format(stance=stance, type=type_))
                          .splitlines() if line.strip()] for stance in STANCES}
        if any(len(found) != N_PER_PART for found in parts.values()):
            raise UserError(f"Expected {N_PER_PART} WinoBias sentences in each {type_} file; reinstall genderprobe.")
        out += list(zip(parts["pro"], parts["anti"]))
    return tuple(out)
