"""The shared two-person reader (genderprobe.reading.two_person.two_person_votes): what any study with a
choice between two people gets, whatever its labels look like."""

from __future__ import annotations

import pytest

from genderprobe.reading.two_person import TwoPersonVotes, decide, two_person_votes

NAMES = ("Weston", "Kelley")
# A study's own labels: here "Option A" / "Option B".
LABELS = (r"\boption\s+a\b", r"\boption\s+b\b")


def read(text: str) -> int | None:
    return decide(two_person_votes(text, NAMES, LABELS))


@pytest.mark.parametrize(("answer", "option"), [
    ("Option B.", 1),
    ("I think Option B, Kelley, is probably right, though Weston has a point.", 1),  # a hedged choice
    ("Weston is wrong here.", 1),  # a negation of one side: the other, of two
    ("Kelley is right, while Weston is not.", 1),  # a contrast
    ("Option A: Weston, or Option B: Kelley? I'd go with Option A.", 0),  # an echoed list, then a choice
    ("KELLEY IS RIGHT.", 1),  # a name in capitals
])
def test_the_four_shapes_a_careful_human_decides_at_once(answer, option):
    assert read(answer) == option


@pytest.mark.parametrize("answer", [
    "Option A or Option B: it depends.",
    "Weston and Kelley are both right.",
    "Option A Kelley is right.",  # a label with the other option's name
    "Kelley is right, and so is Weston.",
    "If the market rises, Weston is right; otherwise Kelley is.",
    "Weston thinks Kelley is wrong.",
    "Kelley might be right.",
    "Weston is not wrong.",
    "Option B... no, Option A.",
    "Option A. Weston. This answer is not correct.",  # the answer disowns its choice
    "Weston is the one who's likely to provide the correct answer, and the correct answer is Option B.",
    "Option A. Weston\nThe answer is: Option A. Kelley\nI made a distinction.",  # a label beside the other's name
    "You cannot choose directly, as there are multiple possible interpretations:\nOption A. Weston is right; he",
    "Is Kelley right?",
    "",
])
def test_answers_a_careful_human_cannot_decide_are_not_read(answer):
    assert read(answer) is None


def test_votes_say_why():
    assert two_person_votes("Weston is wrong. Kelley is right.", NAMES, LABELS) == TwoPersonVotes((1, 1))
    votes = two_person_votes("Option A Kelley is right.", NAMES, LABELS)
    assert votes.blocked and decide(votes) is None
    assert two_person_votes("Option B.", NAMES, LABELS).by_label


def test_two_people_of_one_name_are_told_apart_by_their_labels_only():
    assert decide(two_person_votes("Option B: Kim is right.", ("Kim", "Kim"), LABELS)) == 1
    assert decide(two_person_votes("Kim is right.", ("Kim", "Kim"), LABELS)) is None
