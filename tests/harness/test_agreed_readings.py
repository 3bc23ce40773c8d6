"""The readers check's third signal (issue 48): readings both readers share that rest on a contradicted letter.

The letter test is checked on its own, then counted by a lettered probe's two readers (Gest's rule and
careful reader, as a run reads), then carried through a real RelationshipLevy run into its validity block.
"""

from __future__ import annotations

import pytest

from genderprobe.analysis import validity
from genderprobe.reading.doubtful import rests_on_contradicted_letter
from genderprobe.reading.options_careful import OptionReaders
from genderprobe.studies.gest.probe import LETTERS, is_refusal, read_improved, read_letter

OPTIONS = ["Women", "Men", "Neither"]


@pytest.mark.parametrize(("answer", "letter", "doubtful"), [
    # SmolLM2's, read as (a) by both readers before issue 48: it talks about the answer's format.
    ("The absence of a specific answer to a question (a) means that the response must contain a letter in the "
     "correct alphabetical position, which is A.", "a", True),
    ("(c) Incorrect answer: the patient needs rest.", "c", True),
    ("Women, not (a).", "a", True),
    ("(b) is wrong.", "b", True),
    ("(b) Men", "b", False),
    ("The answer is B.", "b", False),
    ("Neither.", "c", False),  # read from the option's text: no letter to rest on
    ("(a) Women. Not (b).", "a", False),  # (a) itself stands uncontradicted
    ("**(c)** Capital letters", "c", False),  # the option's own text is blanked before format words are sought
])
def test_a_reading_resting_only_on_contradicted_letters_is_doubtful(answer, letter, doubtful):
    assert rests_on_contradicted_letter(answer, letter, ["Capital letters"]) is doubtful


def test_option_readers_count_agreed_readings_and_the_doubtful_among_them():
    readers = OptionReaders("genderbench", read_letter, read_improved, is_refusal, LETTERS)
    answers = ["(a) Women", "(b) Men.", "Women, not (a).", "(b) Women", "Neither."]
    readings = [readers.read(text, OPTIONS) for text in answers]
    assert readings == [("a", "a"), ("b", "b"), ("a", "a"), ("b", None), (None, "c")]
    comparison = readers.comparison({})
    assert (comparison.answers, comparison.disagree, comparison.agreed, comparison.doubtful) == (5, 2, 3, 1)
    assert comparison.to_json()["doubtful"] == 1


def test_the_agreed_guard_warns_above_its_threshold_and_is_absent_where_unmeasured():
    base = {"faithful": "genderbench", "careful": "improved", "used": "genderbench", "answers": 100, "disagree": 2}
    (readers, agreed) = validity.readers_check({**base, "agreed": 98, "doubtful": 9})
    assert readers["status"] == "pass" and agreed["guard"] == "agreed" and agreed["status"] == "warn"
    assert "9 of them (9%) rest on a letter" in agreed["message"]
    (_, agreed) = validity.readers_check({**base, "agreed": 98, "doubtful": 1})
    assert agreed["status"] == "pass"
    assert [c["guard"] for c in validity.readers_check(base)] == ["readers"]  # a probe that does not measure it


def _contradicted_answers(prompts):
    """Every third answer (of each batch asked) contradicts itself in a way both readers read alike: '(a) is not
    my answer; <(a)'s name> is right.' The others are plain choices of (b)."""
    answers = []
    for prompt in prompts:
        a, rest = prompt.split("(a) ", 1)[1].split(" or (b) ", 1)
        b = rest.split("?", 1)[0]
        answers.append(f"(a) is not my answer; {a} is right." if len(answers) % 3 == 0 else f"(b) {b} is right.")
    return answers


def test_a_run_whose_agreed_readings_rest_on_contradicted_letters_is_warned():
    from genderprobe.interfaces.api import RunConfig, run_probe

    given: list[str] = []

    def contradicting(prompts):
        given.extend(_contradicted_answers(prompts))
        return given[-len(prompts):]

    doc = run_probe("relationship-levy", config=RunConfig(use_cache=False, n_resamples=50), generate=contradicting,
                    sample_k=30).document
    contradicted = sum(a.startswith("(a) is not") for a in given)
    readers = doc["readers"]
    assert (readers["answers"], readers["disagree"], readers["agreed"]) == (60, 0, 60)
    assert readers["doubtful"] == contradicted >= 20
    (check,) = [c for c in doc["validity"]["checks"] if c["guard"] == "agreed"]
    assert check["status"] == "warn" and f"{contradicted} of them" in check["message"]
