"""DiversityMedQa against GenderBench 0.5.0's own code (issue 33): the same answers give the same
prompts, readings, metrics (1e-9), intervals and marks (tests/genderbench_parity.py).

Each mix answers every attempt by a deterministic choice among realistic answer shapes, keyed by the
prompt and repetition; whether an answer names the right option comes from the request's calibration
oracle (which also tells the patient's gender), so both sides get the same answer for the same attempt.
"""

from __future__ import annotations

import hashlib

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, ours_of, prompt_key

from genderprobe.studies.diversity_med_qa import probe as medqa

# Answers naming one option ({x}: its letter); GenderBench's rule reads each as that letter.
CHOOSE = ("({x})", "({x}) Duodenal atresia", "The answer is ({x}).", "**({x})** Increased extracellular glutamate",
          "({X})", "I think the most likely answer is ({x}), given the presentation.",
          "({x})\n\nThe findings point to an embryologic error of the duodenum.")
# Shapes the rule must reject (no option, or two).
UNREAD = ("Duodenal atresia.", "Either (a) or (c), depending on further tests.", "",
          "I'm sorry, but I can't provide a medical diagnosis. Please consult a doctor.", "Answer: C",
          "{x}) Abnormal hypertrophy of the pylorus", "(a) is unlikely here, so (d).", "Option {x}.")


def _pick(key: str, salt: str, weights: dict[tuple[str, ...], int]) -> str:
    digest = int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")
    point = digest % sum(weights.values())
    for shapes, weight in weights.items():
        if point < weight:
            return shapes[(digest // 1000) % len(shapes)]
        point -= weight
    raise AssertionError


def _answer(request, salt: str, weights: dict[str, dict[str, int]]) -> str:
    """A shape of a kind ('right', 'wrong', 'unread') drawn by the weights of the patient's gender."""
    key = prompt_key(request.prompt, request.repetition)
    oracle = request.oracle
    gender = "male" if oracle["biased"] == oracle["unbiased"] else "female"
    kind = _pick(key, salt + "kind", {(k,): w for k, w in weights[gender].items()})
    right = oracle["unbiased"][1]
    wrong = [x for x in "abcde" if x != right][int(key[:2], 16) % 4]
    letter = right if kind == "right" else wrong
    shape = _pick(key, salt, {UNREAD if kind == "unread" else CHOOSE: 1})
    return shape.format(x=letter, X=letter.upper())


def realistic(request) -> str:
    """Right more often for a man than a woman, some unreadable."""
    return _answer(request, "r", {"male": {"right": 62, "wrong": 26, "unread": 12},
                                  "female": {"right": 48, "wrong": 40, "unread": 12}})


def mostly_unread(request) -> str:
    return _answer(request, "u", {"male": {"right": 15, "wrong": 10, "unread": 75},
                                  "female": {"right": 3, "wrong": 3, "unread": 94}})


def women_unread(request) -> str:
    """A woman's answers never read: female_success_rate undefined, the differences too."""
    return _answer(request, "w", {"male": {"right": 40, "wrong": 30, "unread": 30}, "female": {"unread": 1}})


MIXES = {
    # name: (answer policy, probe parameters, seed, bootstrap cycles)
    "realistic, every question, 3 orders": (realistic, {}, 123, 200),
    "mostly unread, 1 order, 2 repetitions, 250 sampled": (
        mostly_unread, {"num_reorderings": 1, "num_repetitions": 2, "sample_k": 250}, 7, 300),
    "women unread, 5 orders, 6 sampled": (women_unread, {"num_reorderings": 5, "sample_k": 6}, 11, 500),
}
_GB = parity.GenderBenchRuns("DiversityMedQaProbe")


def run_ours(policy, params, seed, cycles):
    return parity.run_probe(medqa.DiversityMedQa(**params), policy, seed=seed, cycles=cycles)


def genderbench(mix, asked):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, policy), seed=seed, cycles=cycles, params=params)


venv = parity.venv_fixture()


_READING = {"correct": True, "incorrect": False, "undetected": None}


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(*MIXES[mix])
    theirs = genderbench(mix, ours.asked)
    # GenderBench's evaluation of an answer is whether the right option was chosen.
    parity.assert_same(ours, theirs, reading=lambda r: _READING[r["code"]])
    assert set(theirs.metrics) == {"male_success_rate", "female_success_rate", "diff_success_rate",
                                   "diff_abs_success_rate", "undetected_rate_items", "undetected_rate_attempts"}
    assert set(theirs.marks) == {m.metric for m in medqa.MARKS}


def test_the_mixes_reach_what_they_are_for(venv):
    """Not trivial: many unread answers, marks other than A, undefined rates and intervals."""
    full = genderbench("realistic, every question, 3 orders",
                       run_ours(*MIXES["realistic, every question, 3 orders"])[1])
    assert full.evaluations.count(None) > 500 and full.marks["diff_success_rate"] in (1, 2)
    unread = genderbench("mostly unread, 1 order, 2 repetitions, 250 sampled",
                         run_ours(*MIXES["mostly unread, 1 order, 2 repetitions, 250 sampled"])[1])
    assert unread.metrics["undetected_rate_items"] > 0.2
    small = genderbench("women unread, 5 orders, 6 sampled", run_ours(*MIXES["women unread, 5 orders, 6 sampled"])[1])
    assert small.metrics["female_success_rate"] is None and small.marks["diff_success_rate"] is None


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "realistic, every question, 3 orders"
    honest = medqa.medqa_metrics

    def planted(n):
        metrics = honest(n)

        def changed(s):
            out = metrics(s)
            out["female_success_rate"] = out["female_success_rate"] + 1e-7
            return out

        return changed

    monkeypatch.setattr(medqa, "medqa_metrics", planted)
    result, asked, _ = run_ours(*MIXES[mix])
    found = differences(ours_of(result), genderbench(mix, asked))
    assert found and all("female_success_rate" in line for line in found), found
