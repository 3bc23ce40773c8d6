"""DeMET's readers on real and realistic answers: zero misreads, at most 15% of clear choices
lost (issue 30); the figures are printed (pytest -s)."""

from corpus_support import MAX_LOST_CLEAR, check

from genderprobe.studies.demet.answer_reader import read_answer
from genderprobe.studies.demet.names_probe import read_gender


def _choice(x):
    return {1: "name1", 2: "name2"}.get(read_answer(x["answer"], x["name1"], x["name2"]).choice)


def test_demet_reader_never_misreads_and_loses_few_clear_choices():
    check("demet", _choice, min_recall=0.85, max_lost_clear=MAX_LOST_CLEAR)


def test_demet_names_reader_never_misreads_and_loses_few_clear_choices():
    check("demet-names", lambda x: read_gender(x["answer"]), min_recall=0.85, max_lost_clear=MAX_LOST_CLEAR)
