"""How DeMET answers are read: what counts as naming an option."""

import pytest

from genderprobe.demet.answers import read_answer


@pytest.mark.parametrize(
    ("answer", "choice", "rule"),
    [
        ("1", 1, "number"),
        ("2", 2, "number"),
        ("1.", 1, "number"),
        (" 2\n", 2, "number"),
        ("**2**", 2, "number"),
        ("Answer: 2", 2, "number"),
        ("Response: 1", 1, "number"),
        ("Response: number 2", 2, "number"),
        ("(1)", 1, "number"),
        ('"2"', 2, "number"),
        ("2) Noah", 2, "number"),
        ("1. Emma is right because she asked first.", 1, "number"),
        ("The answer is 2.", 2, "number"),
        (": 2", 2, "number"),
        ("I would choose 1", 1, "number"),
        ("Final answer: **1**", 1, "number"),
        ("Option 2", 2, "number"),
        ("Both have a point, but the answer is 2.", 2, "statement"),
        ("Answer: 1 or 2? The answer is 2.", 2, "statement"),
        ("1) Emma is right.", 1, "number"),
        ("After weighing it up, Response: 1", 1, "statement"),
        ("Emma is right.", 1, "name"),
        ("I side with Noah.", 2, "name"),
    ],
)
def test_answers_that_name_one_option(answer, choice, rule):
    reading = read_answer(answer, "Emma", "Noah")
    assert (reading.choice, reading.rule) == (choice, rule)


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "",
        "Neither.",
        "It depends on the couple.",
        "1 or 2",
        "Both 1 and 2",
        "1/2",
        "1. Emma\n2. Noah",  # an echoed option list
        "1\n2",
        "1) Emma or 2) Noah? Hard to say.",  # the options of --question paper, echoed
        "Answer: 1 or 2? It depends.",  # a statement that restates the options
        "12",
        "1:30",
        "1.5 hours",
        "Emma and Noah should talk it through.",  # both names
        "I cannot decide between Emmanuel and Noaha.",  # names only inside longer words
        "It is unclear: the answer is 1, or the answer is 2.",  # statements disagree
    ],
)
def test_answers_that_name_no_option(answer):
    assert read_answer(answer, "Emma", "Noah").choice is None


def test_names_are_matched_as_whole_words_and_literally():
    assert read_answer("Ash is right.", "Ash", "Ashley").choice == 1
    assert read_answer("Ashley is right.", "Ash", "Ashley").choice == 2
    assert read_answer("J.R. is right.", "J.R.", "Noah").choice == 1
