"""Name lists: the Bloomberg hiring names (gender x race) and Levy et al.'s Table 2."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import data_text, read_csv
from genderprobe.errors import UserError

RACES = ("white", "black", "asian", "hispanic")


@dataclass(frozen=True)
class NameEntry:
    first: str
    last: str
    gender: str  # "male" | "female"
    race: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"


@cache
def bloomberg_names() -> tuple[NameEntry, ...]:
    """The 800 entries in file order (400 male, 400 female; first names repeat across races)."""
    rows = read_csv("names/bloomberg_names.csv", ("first_name", "last_name", "gender", "race"))
    out = []
    for i, row in enumerate(rows, start=2):
        gender, race = row["gender"].strip().lower(), row["race"].strip().lower()
        if gender not in ("male", "female") or race not in RACES:
            raise UserError(f"names/bloomberg_names.csv line {i} has an unknown gender or race.")
        out.append(NameEntry(row["first_name"].strip(), row["last_name"].strip(), gender, race))
    return tuple(out)


def bloomberg_by_gender(gender: str) -> tuple[NameEntry, ...]:
    return tuple(e for e in bloomberg_names() if e.gender == gender)


# Levy et al.'s three lists, and the spellings of their group labels we accept.
LEVY_GROUPS = ("women", "men", "neutral")
_GROUP_ALIASES = {
    "women": "women", "woman": "women", "female": "women", "f": "women", "w": "women",
    "men": "men", "man": "men", "male": "men", "m": "men",
    "neutral": "neutral", "gender-neutral": "neutral", "gender neutral": "neutral",
    "nonbinary": "neutral", "non-binary": "neutral", "n": "neutral",
}
# A same-group relationship needs two different people.
MIN_NAMES_PER_GROUP = 2


def _cap(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]


def parse_name_lists(text: str, where: str) -> dict[str, tuple[str, ...]]:
    """Name lists from CSV text with the columns ``name`` and ``group``.

    Groups are women, men and neutral (common spellings such as "female" or "W"
    are accepted); each needs at least two different names, and no name may sit
    in two groups, so every relationship type can be filled.
    """
    try:
        reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
        rows = list(reader)
    except csv.Error as exc:
        raise UserError(f"{_cap(where)} is not valid CSV ({exc}).") from None
    fields = [f.strip().lower() for f in (reader.fieldnames or [])]
    if "name" not in fields or "group" not in fields:
        raise UserError(f"{_cap(where)} needs a header line with the columns name and group.")
    groups: dict[str, list[str]] = {g: [] for g in LEVY_GROUPS}
    seen: dict[str, str] = {}
    for line, row in enumerate(rows, start=2):
        row = {k.strip().lower(): (v or "").strip() for k, v in row.items() if k is not None}
        name, raw_group = row.get("name", ""), row.get("group", "")
        if not name and not raw_group:
            continue
        group = _GROUP_ALIASES.get(raw_group.lower())
        if group is None:
            raise UserError(
                f"Line {line} of {where} has the unknown group '{raw_group}'; use women, men or neutral."
            )
        if not name:
            raise UserError(f"Line {line} of {where} has an empty name.")
        if name.lower() in seen:
            raise UserError(f"The name '{name}' appears twice in {where} (line {line}).")
        seen[name.lower()] = group
        groups[group].append(name)
    for group in LEVY_GROUPS:
        if len(groups[group]) < MIN_NAMES_PER_GROUP:
            raise UserError(
                f"{_cap(where)} has {len(groups[group])} name(s) in the group '{group}'; "
                f"every group needs at least {MIN_NAMES_PER_GROUP} different names."
            )
    return {g: tuple(v) for g, v in groups.items()}


@cache
def levy_names() -> dict[str, tuple[str, ...]]:
    """Levy et al. 2024, Table 2: {"women": (...), "men": (...), "neutral": (...)}."""
    return parse_name_lists(data_text("names/levy_names.csv"), "the packaged name list names/levy_names.csv")
