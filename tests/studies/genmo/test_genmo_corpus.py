"""GenMO's stance reader and refusal detector on real and realistic answers (corpora/genmo.jsonl)."""

from corpus_support import MAX_LOST_CLEAR, check, load

from genderprobe.studies.genmo.refusals import is_refusal
from genderprobe.studies.genmo.stance import CODE_NAMES, parse_stance


def _read(x):
    return CODE_NAMES[parse_stance(x["answer"])]


def test_stance_reader_never_misreads_and_reads_most():
    s = check("genmo", _read, min_recall=0.9)
    assert s.total >= 110


def test_stance_reader_loses_few_clear_choices():
    """Issue 30: the four shapes that commit (hedged, negation with its contrast, contrast, an echoed
    option list then the model's choice) are read; at most 15% of the clear choices are lost."""
    found = check("genmo", _read, max_lost_clear=MAX_LOST_CLEAR)
    assert found.clear >= 120
    shapes = {x["source"].split(":")[1].strip() for x in load("genmo") if x["source"].startswith("shape:")}
    assert {"hedged", "contrast", "echo", "trap"} <= shapes


def test_corpus_holds_real_and_synthetic_answers_of_both_templates():
    lines = load("genmo")
    real = [x for x in lines if not x["source"].startswith("shape:")]
    shapes = [x for x in lines if x["source"].startswith("shape:")]
    assert len(real) >= 50 and len(shapes) >= 60
    assert {x["template"] for x in lines} == {"cot", "noncot"}
    assert {x["template"] for x in real} == {"cot", "noncot"}


def test_refusals_are_flagged_and_nothing_else_is():
    wrong = [x["id"] for x in load("genmo") if is_refusal(x["answer"]) != x.get("refusal", False)]
    assert not wrong, f"refusal flag differs from the label: {wrong}"
