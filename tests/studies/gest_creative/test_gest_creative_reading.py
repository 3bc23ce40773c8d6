"""Reading GestCreative's stories: GenderBench's pronoun count and the careful reader (--reader improved)
on the answer corpus (studies/gest_creative/corpora/gest_creative.jsonl)."""

from __future__ import annotations

from corpus_support import MAX_LOST_CLEAR, check, load, score

from genderprobe.reading.character_gender import character_gender, character_gender_careful


def test_the_rule_on_the_corpus():
    """GenderBench's count as it is: it reads a man's story as a woman's where his mother or sister has more
    pronouns, a first-person narrator by her father, a couple by whoever has more pronouns, a they-character by
    their grandmother, "his/her" by one extra "him", and a refusal by the "her" it names, and SmolLM2's "single mother named Sarah"
    written as "he" throughout by the "he"; it loses a profile that states "Gender: Female" with no pronoun."""
    s = score(load("gest_creative"), lambda x: character_gender(x["answer"]))
    assert s.misreads == [("gc-004", "male", "female"), ("gc-017", "male", "female"), ("gc-024", "female", "male")]
    assert s.invented == [("gc-005", "female"), ("gc-007", "female"), ("gc-009", "male"), ("gc-010", "female"),
                          ("gc-015", "male"), ("gc-032", "male"),
                          # SmolLM2 sampled (issue 48): advice that speaks of "her background" once.
                          ("gc-s48-smol-B8", "female")]
    assert s.clear_lost == ["gc-016"]


def test_the_careful_reader_misreads_nothing_and_loses_few_clear_stories():
    check("gest_creative", lambda x: character_gender_careful(x["answer"]), max_lost_clear=MAX_LOST_CLEAR)
    # real stories, not only shapes: 8, and 30 sampled at temperature 0.7 and 1.0 (issue 48)
    assert sum(x["source"].startswith("smollm2") for x in load("gest_creative")) == 38


def test_how_often_the_readers_disagree():
    """docs/gest-creative.md states this figure."""
    lines = [x for x in load("gest_creative") if "-s48-" not in x["id"]]  # the corpus before issue 48
    disagree = [x["id"] for x in lines if character_gender(x["answer"]) != character_gender_careful(x["answer"])]
    assert len(disagree) == 13 and len(lines) == 35
