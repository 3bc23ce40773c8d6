"""Isear against GenderBench 0.5.0's own code (issue 33): the same answers give the same prompts,
readings, metrics (1e-9), intervals and mark (tests/genderbench_parity.py).

Each mix answers every attempt by a deterministic choice among realistic answer shapes keyed by the prompt and
repetition, the emotion drawn with weights that differ by gender; the shapes include what the rule must reject
(refusals, two emotions, adjectives, none), what it misreads ("Not joy."), reasoning blocks (where GenderBench,
which reads them, and we, who set them aside, read the same), and case variants.
"""

from __future__ import annotations

import hashlib

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, ours_of, prompt_key

from genderprobe.reading.emotion import EMOTIONS
from genderprobe.studies.isear import probe as isear

# {e}: the emotion, {E} capitalised, {U} upper-cased, {f}: another emotion.
CHOOSE = ("{e}", "{E}", "{e}.", "{U}", "**{E}**", "{E}\n\nThe situation would leave me feeling hurt.",
          "My main emotion would be {e}.", "<think>\nThe event involves someone close.\n</think>\n\n{E}",
          "<think>Maybe {e}.</think>{E}")
UNREAD = ("", "As an AI, I don't have emotions.", "{E} and {f}.", "Angry.", "I would feel a mix of emotions.",
          "{e}/{f}", "<think>Is it {e}? Or {f}?</think>", "Sad")
# Read as the emotion by the rule, though it is not the answer (docs/isear.md).
ODD = ("Not {e}.",)
WEIGHTS = {"a man": {"anger": 30, "frustration": 20}, "a woman": {"sadness": 25, "fear": 20, "anxiety": 10},
           "a non-binary person": {}}


def _digest(request, salt: str) -> int:
    key = f"{salt}:{prompt_key(request.prompt, request.repetition)}"
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def _answer(request, salt: str, unread: int, gender_unread: str | None = None) -> str:
    d = _digest(request, salt)
    gender = next(g for g in WEIGHTS if f"Imagine you are {g}." in request.prompt)
    weights = {e: WEIGHTS[gender].get(e, 5) for e in EMOTIONS}
    point = (d >> 8) % sum(weights.values())
    emotion = next(e for k, e in enumerate(EMOTIONS) if point < sum(list(weights.values())[: k + 1]))
    other = EMOTIONS[(EMOTIONS.index(emotion) + 1 + (d >> 40) % 11) % len(EMOTIONS)]
    kind = d % 100
    shapes = UNREAD if kind < unread or gender == gender_unread else ODD if kind < unread + 2 else CHOOSE
    shape = shapes[(d >> 20) % len(shapes)]
    return shape.format(e=emotion, E=emotion.capitalize(), U=emotion.upper(), f=other)


def realistic(request) -> str:
    return _answer(request, "r", 8)


def mostly_unread(request) -> str:
    """A woman's answer never read (GenderBench then counts each of her emotions as 0, not undefined)."""
    return _answer(request, "u", 70, gender_unread="a woman")


# name: (answer policy, probe parameters, seed, bootstrap cycles). GenderBench's side costs about 4 s a mix.
MIXES = {
    "realistic, 400 sampled": (realistic, {"sample_k": 400}, 123, 200),
    "mostly unread, a woman never, 2 repetitions, 10 sampled": (
        mostly_unread, {"sample_k": 10, "num_repetitions": 2}, 5, 200),
}
_GB = parity.GenderBenchRuns("IsearProbe")


def run_ours(policy, params, seed, cycles):
    return parity.run_probe(isear.Isear(**params), policy, seed=seed, cycles=cycles)


def genderbench(mix, asked):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, policy), seed=seed, cycles=cycles, params=params)


venv = parity.venv_fixture()


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(*MIXES[mix])
    theirs = genderbench(mix, ours.asked)
    parity.assert_same(ours, theirs)
    assert set(theirs.metrics) == {f"max_diff_{e}" for e in EMOTIONS} | {
        "max_diff", "undetected_rate_items", "undetected_rate_attempts"}
    assert set(theirs.marks) == {"max_diff"}


def test_the_mixes_reach_what_they_are_for(venv):
    """Not trivial: a gap between genders that marks B or worse, and a gender with no read answer."""
    mix = "realistic, 400 sampled"
    full = genderbench(mix, run_ours(*MIXES[mix])[1])
    assert full.metrics["max_diff"] > 0.1 and full.marks["max_diff"] >= 1
    assert 0.05 < full.evaluations.count(None) / len(full.evaluations) < 0.2
    mix = "mostly unread, a woman never, 2 repetitions, 10 sampled"
    result, asked, _ = run_ours(*MIXES[mix])
    small = genderbench(mix, asked)
    assert result.metrics["female_anger_rate"].value is None  # ours: undefined; GenderBench's gaps take it as 0
    assert small.metrics["max_diff"] > 0


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "realistic, 400 sampled"
    honest = isear.isear_metrics

    def planted(n):
        metrics = honest(n)
        return lambda s: {**metrics(s), "max_diff_guilt": metrics(s)["max_diff_guilt"] + 1e-7}

    monkeypatch.setattr(isear, "isear_metrics", planted)
    result, asked, _ = run_ours(*MIXES[mix])
    found = differences(ours_of(result), genderbench(mix, asked))
    assert found and all("max_diff_guilt" in line for line in found), found
