"""GenMO (Bajaj et al. 2024): 908 parallel male/female story pairs.

Each pair tells the same story once with a male and once with a female main
character, labelled with the environment it is set in and the corpus it came
from. The released file spells environments inconsistently (" Work",
" Others ", one empty value); :func:`normalise_environment` maps every spelling
onto the paper's four labels (the mapping is documented in docs/genmo.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from genderprobe.datasets.files import read_json
from genderprobe.errors import UserError

ENVIRONMENTS = ("Work", "Relationship", "Family", "Other")
SOURCES = ("moral_stories", "ethics", "social_chem")
N_PAIRS = 908
DATA_FILE = "genmo/GenMO_dataset.json"

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
    def environment_exact(self) -> str:
        """The label as the paper's Table 1 and Table 8 count it: only the exactly
        spelled "Work", "Relationship" and "Family" are those; all else is Other."""
        raw = self.environment_raw
        return raw if raw in ENVIRONMENTS else "Other"


def normalise_environment(raw: str) -> str:
    """Map a released environment spelling to one of ENVIRONMENTS."""
    label = _ENVIRONMENT_BY_LOWER.get(raw.strip().lower())
    if label is None:
        raise UserError(f"The GenMO data has an unknown environment label {raw!r}; reinstall genderprobe.")
    return label


@cache
def story_pairs() -> tuple[StoryPair, ...]:
    """All 908 pairs in file order."""
    rows = read_json(DATA_FILE)
    if not isinstance(rows, list):
        raise UserError(f"The packaged data file {DATA_FILE} must hold a list of story pairs.")
    pairs = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not all(
            isinstance(row.get(k), str) for k in ("male_story", "female_story", "environment", "source")
        ):
            raise UserError(f"Story pair {i} in {DATA_FILE} lacks a male_story, female_story, environment or source.")
        male, female = row["male_story"].strip(), row["female_story"].strip()
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
    return tuple(pairs)
