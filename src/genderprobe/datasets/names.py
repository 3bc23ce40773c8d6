"""Name lists: the Bloomberg hiring names (gender x race) and Levy et al.'s Table 2."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from genderprobe.datasets.files import read_csv
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


@cache
def levy_names() -> dict[str, tuple[str, ...]]:
    """Levy et al. 2024, Table 2: {"women": (...), "men": (...), "neutral": (...)}."""
    groups: dict[str, list[str]] = {"women": [], "men": [], "neutral": []}
    for row in read_csv("names/levy_names.csv", ("name", "group")):
        group = row["group"].strip().lower()
        if group not in groups:
            raise UserError(f"names/levy_names.csv has an unknown group '{row['group']}'.")
        groups[group].append(row["name"].strip())
    return {g: tuple(v) for g, v in groups.items()}
