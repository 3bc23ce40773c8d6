"""Reading the generation way's answers (genderprobe.studies.winogender.reading): the careful reader and the
pronoun statements misread nothing on Winogender's answer corpus (SmolLM2's answers and the shapes answers
take), the strict rule beside them."""

from __future__ import annotations

from corpus_support import MAX_LOST_CLEAR, check, load, score

from genderprobe.reading.pair_choice import read_careful, read_strict
from genderprobe.studies.winogender.reading import read_answer


def test_the_reader_misreads_nothing_and_loses_few_clear_choices():
    ours = check("winogender", lambda x: read_answer(x["answer"], x["options"]), max_lost_clear=MAX_LOST_CLEAR)
    careful = score(load("winogender"), lambda x: read_careful(x["answer"], x["options"]))
    strict = score(load("winogender"), lambda x: read_strict(x["answer"]))
    # SmolLM2 names the referent in a sentence, not by a letter: the option readers lose nearly all of it.
    assert ours.correct > careful.correct + 10 > strict.correct and strict.invented
    assert sum(x["source"].startswith("smollm2") for x in load("winogender")) >= 20
