"""Direct against GenderBench 0.5.0's own code (issue 33): the same answers give the same prompts,
readings, metrics (1e-9), intervals and mark (tests/genderbench_parity.py)."""

from __future__ import annotations

import hashlib

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, ours_of, prompt_key

from genderprobe.studies.direct import probe as direct

AGREE = ("Yes", "Yes, I agree.", "yes.", "**Yes.** Many people would say so.", "I'd say yes. It is often true.")
DISAGREE = ("No.", "no", "No, I do not agree with this statement. It is a harmful stereotype.",
            "**No.** This generalization is not accurate.", "The answer is no.")
UNREAD = ("As an AI, I don't have personal opinions.", "Yes and no. Some people are, some are not.", "",
          "I don't agree. Gender does not determine emotional capacity.", "Nobody should be judged by their gender.",
          "It depends on the person.", "Yes.That is common")


def _pick(key, salt, weights):
    digest = int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")
    point = digest % sum(weights.values())
    for shapes, weight in weights.items():
        if point < weight:
            return shapes[(digest // 1000) % len(shapes)]
        point -= weight
    raise AssertionError


def mostly_disagrees(prompt, repetition):
    return _pick(prompt_key(prompt, repetition), "a", {AGREE: 8, DISAGREE: 80, UNREAD: 12})


def half_unread(prompt, repetition):
    """Agreement common, half the answers unreadable (a small sample leaves a source unread)."""
    return _pick(prompt_key(prompt, repetition), "b", {AGREE: 30, DISAGREE: 20, UNREAD: 50})


MIXES = {
    "mostly disagrees, every stereotype": (mostly_disagrees, {}, 123, 200),
    "half unread, 2 repetitions, 400 sampled": (half_unread, {"num_repetitions": 2, "sample_k": 400}, 9, 400),
    "half unread, 6 sampled": (half_unread, {"sample_k": 6}, 4, 300),
}
_GB = parity.GenderBenchRuns("DirectProbe")


def run_ours(policy, params, seed, cycles):
    return parity.run_probe(direct.Direct(**params), lambda r: policy(r.prompt, r.repetition), seed=seed,
                            cycles=cycles)


def genderbench(mix, asked):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, lambda r: policy(r.prompt, r.repetition)), seed=seed,
                   cycles=cycles, params=params)


venv = parity.venv_fixture()


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(*MIXES[mix])
    theirs = genderbench(mix, ours.asked)
    parity.assert_same(ours, theirs)
    assert set(theirs.metrics) == {"sbic_fail_rate", "gest_fail_rate", "fail_rate", "undetected_rate_items",
                                   "undetected_rate_attempts"}
    assert set(theirs.marks) == {"fail_rate"}


def test_the_mixes_reach_what_they_are_for(venv):
    first = genderbench("mostly disagrees, every stereotype", run_ours(*MIXES["mostly disagrees, every stereotype"])[1])
    assert first.marks["fail_rate"] == 1 and first.evaluations.count(None) > 300
    small = genderbench("half unread, 6 sampled", run_ours(*MIXES["half unread, 6 sampled"])[1])
    assert small.metrics["gest_fail_rate"] is None or any(iv == (None, None) for iv in small.intervals.values())


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "mostly disagrees, every stereotype"
    honest = direct.direct_metrics

    def planted(n):
        metrics = honest(n)
        return lambda s: {**metrics(s), "gest_fail_rate": metrics(s)["gest_fail_rate"] * (1 + 1e-6)}

    monkeypatch.setattr(direct, "direct_metrics", planted)
    result, asked, _ = run_ours(*MIXES[mix])
    found = differences(ours_of(result), genderbench(mix, asked))
    assert found and all("gest_fail_rate" in line for line in found), found
