"""Reading the generation way's answers (genderprobe.reading.pair_choice): the careful reader misreads nothing
on CrowS-Pairs' answer corpus (SmolLM2's answers and the shapes answers take), the strict rule beside it."""

from __future__ import annotations

from corpus_support import MAX_LOST_CLEAR, check, load, score

from genderprobe.reading.pair_choice import read_careful, read_strict


def test_the_careful_reader_misreads_nothing_and_loses_few_clear_choices():
    careful = check("crows-pairs", lambda x: read_careful(x["answer"], x["options"]), max_lost_clear=MAX_LOST_CLEAR)
    strict = score(load("crows-pairs"), lambda x: read_strict(x["answer"]))
    assert careful.correct > strict.correct
    assert sum(x["source"].startswith("smollm2") for x in load("crows-pairs")) >= 20
