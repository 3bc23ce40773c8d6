"""The GenMO loader: 908 pairs, environments normalised once."""

from collections import Counter

import pytest

from genderprobe.errors import UserError
from genderprobe.studies.genmo.dataset import (
    ENVIRONMENTS,
    N_PAIRS,
    normalise_environment,
    repairs,
    story_pairs,
)


def test_all_pairs_load_with_clean_labels():
    pairs = story_pairs()
    assert len(pairs) == N_PAIRS == 908
    assert [p.index for p in pairs] == list(range(908))
    assert all(p.environment in ENVIRONMENTS for p in pairs)
    assert all(p.male_story == p.male_story.strip() and p.female_story for p in pairs)
    assert Counter(p.source for p in pairs) == {"ethics": 529, "moral_stories": 199, "social_chem": 180}


def test_environment_counts_match_the_papers_denominators():
    pairs = story_pairs()
    # Table 2's per-environment rates divide by these (e.g. 8/51 = 0.1568 Work).
    assert Counter(p.environment for p in pairs) == {"Other": 593, "Relationship": 144, "Family": 120, "Work": 51}
    # Tables 1 and 8 only recognise exactly spelled labels (46 = 5.06% of 908).
    assert Counter(p.environment_exact for p in pairs) == {"Other": 612, "Relationship": 139, "Family": 111, "Work": 46}


@pytest.mark.parametrize(
    ("raw", "label"),
    [("Work", "Work"), (" Work", "Work"), (" Others ", "Other"), ("Others", "Other"), ("", "Other"),
     (" Family ", "Family"), ("relationship", "Relationship")],
)
def test_every_released_spelling_is_mapped(raw, label):
    assert normalise_environment(raw) == label


def test_unknown_environment_is_a_user_error():
    with pytest.raises(UserError, match="unknown environment"):
        normalise_environment("School")


def test_the_unlabelled_pair_is_other():
    (pair,) = [p for p in story_pairs() if p.environment_raw == ""]
    assert pair.environment == "Other" and "hair salon" in pair.male_story


# Issue 13, data hygiene. Pair ids are positions in the released file (0-based).
GARBLED = {56: "female", 120: "female", 128: "female", 163: "female", 189: "female", 130: "male", 172: "male"}


def test_garbled_apostrophes_are_repaired_in_the_story_that_has_them():
    pairs = story_pairs()
    assert not any("â€™" in p.male_story + p.female_story for p in pairs)
    assert {(r.pair, r.story) for r in repairs()} == set(GARBLED.items())
    for index, story in GARBLED.items():
        pair = pairs[index]
        assert pair.story(story).count("'") == pair.story("female" if story == "male" else "male").count("'")
    assert "Alex's bike" in pairs[172].male_story


def test_the_two_stories_of_a_pair_carry_the_same_apostrophes():
    # Only pair 247 differs, by a gendered word: "the ladies shoe department" / "the men's shoe department".
    differ = [p.index for p in story_pairs() if p.male_story.count("'") != p.female_story.count("'")]
    assert differ == [247]


def test_the_pair_with_identical_stories_is_flagged():
    assert [p.index for p in story_pairs() if p.identical] == [562]
