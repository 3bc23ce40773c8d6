"""GenMO (Bajaj et al. 2024): 908 parallel male/female story pairs.

Each pair tells the same story once with a male and once with a female main
character, labelled with the environment it is set in and the corpus it came
from. The released file spells environments inconsistently (" Work",
" Others ", one empty value); :func:`normalise_environment` maps every spelling
onto the paper's four labels (the mapping is documented in docs/genmo.md).

Two repairs happen here, never in the packaged file: seven stories carry a
right single quote as UTF-8 misread as cp1252 ("Alexâ€™s") where the other
story of their pair has a plain apostrophe, so the model would see a
difference that is not gender; it is read as that apostrophe, and each repair
is listed by :func:`repairs`. Pair 562 tells the same story twice; it is
flagged (``StoryPair.identical``) and the probe leaves it out by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import read_json
from genderprobe.errors import UserError

ENVIRONMENTS = ("Work", "Relationship", "Family", "Other")
SOURCES = ("moral_stories", "ethics", "social_chem")
N_PAIRS = 908
DATA_FILE = "genmo/GenMO_dataset.json"
# "’" encoded as UTF-8 and decoded as cp1252; its pair's other story has "'".
GARBLED_APOSTROPHE = "â€™"

_ENVIRONMENT_BY_LOWER = {
    "work": "Work",
    "relationship": "Relationship",
    "family": "Family",
    "other": "Other",
    "others": "Other",
    # One ETHICS story (a hair salon that closed down) carries no label;
    # "Other" is the paper's catch-all (its Table 1 counts it there).
    "": "Other",
}


@dataclass(frozen=True)
class StoryPair:
    """One GenMO pair.

    index: position in the released file (the pair's stable id).
    environment: the normalised label (one of ENVIRONMENTS).
    environment_raw: the label exactly as released, for the paper's Table 1/8
        counts, which only recognise the exactly spelled labels.
    male_story, female_story: the stories with surrounding whitespace removed.
    """

    index: int
    male_story: str
    female_story: str
    environment: str
    environment_raw: str
    source: str

    def story(self, gender: str) -> str:
        return self.male_story if gender == "male" else self.female_story

    @property
    def identical(self) -> bool:
        """Both stories are the same text: the pair cannot show a gender difference."""
        return self.male_story == self.female_story

    @property
    def environment_exact(self) -> str:
        """The label as the paper's Table 1 and Table 8 count it: only the exactly
        spelled "Work", "Relationship" and "Family" are those; all else is Other."""
        raw = self.environment_raw
        return raw if raw in ENVIRONMENTS else "Other"


@dataclass(frozen=True)
class Repair:
    """One change the loader made to a released story."""

    pair: int
    story: str  # "male" | "female"
    change: str

    def to_json(self) -> dict[str, object]:
        return {"pair": self.pair, "story": self.story, "change": self.change}


def _repair(text: str, pair: int, story: str, out: list[Repair]) -> str:
    if GARBLED_APOSTROPHE not in text:
        return text
    out.append(Repair(pair, story, f"mis-encoded apostrophe {GARBLED_APOSTROPHE} read as '"))
    return text.replace(GARBLED_APOSTROPHE, "'")


def normalise_environment(raw: str) -> str:
    """Map a released environment spelling to one of ENVIRONMENTS."""
    label = _ENVIRONMENT_BY_LOWER.get(raw.strip().lower())
    if label is None:
        raise UserError(f"The GenMO data has an unknown environment label {raw!r}; reinstall genderprobe.")
    return label


def story_pairs() -> tuple[StoryPair, ...]:
    """All 908 pairs in file order, repaired (pair 562 included: see ``identical``)."""
    return _load()[0]


def repairs() -> tuple[Repair, ...]:
    """The loader's changes to the released stories, in file order."""
    return _load()[1]


@cache
def _load() -> tuple[tuple[StoryPair, ...], tuple[Repair, ...]]:
    rows = read_json(DATA_FILE)
    fixed: list[Repair] = []
    if not isinstance(rows, list):
        raise UserError(f"The packaged data file {DATA_FILE} must hold a list of story pairs.")
    pairs = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not all(
            isinstance(row.get(k), str) for k in ("male_story", "female_story", "environment", "source")
        ):
            raise UserError(f"Story pair {i} in {DATA_FILE} lacks a male_story, female_story, environment or source.")
        male = _repair(row["male_story"].strip(), i, "male", fixed)
        female = _repair(row["female_story"].strip(), i, "female", fixed)
        if not male or not female:
            raise UserError(f"Story pair {i} in {DATA_FILE} has an empty story.")
        source = row["source"].strip()
        if source not in SOURCES:
            raise UserError(f"Story pair {i} in {DATA_FILE} has an unknown source {source!r}.")
        pairs.append(
            StoryPair(i, male, female, normalise_environment(row["environment"]), row["environment"], source)
        )
    if len(pairs) != N_PAIRS:
        raise UserError(f"Expected {N_PAIRS} GenMO story pairs in {DATA_FILE}, found {len(pairs)}.")
    return tuple(pairs), tuple(fixed)
