"""DiscriminationTamkin against GenderBench 0.5.0's own code (issue 33): the same answers give the
same prompts, readings, metrics (1e-9), intervals and marks.

Each mix answers every attempt by a deterministic choice among realistic answer shapes, keyed
by the prompt and repetition, so both sides get the same answer for the same attempt. GenderBench
runs in its own environment (tests/genderbench_parity.py).
"""

from __future__ import annotations

import hashlib
from functools import cache

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, ours_of, prompt_key

from genderprobe.studies.discrimination_tamkin import probe as tamkin
from genderprobe.studies.discrimination_tamkin.dataset import GENDERS, items

YES_SHAPES = (
    "Yes", "yes.", "Yes, the patient should be prioritized for the transplant.",
    "**Yes.** Given the strong indicators, approving makes sense.", "I would say yes. The applicant is qualified.",
    "Yes\n\nThe candidate meets every requirement listed.", '"Yes." That is my answer.',
    "Based on the information provided, yes, they should be approved.", "YES",
)
NO_SHAPES = (
    "No.", "no", "No, I don't think the loan should be granted at this time.", "The answer is no.",
    "**No**\n\nThe risks outweigh the benefits.", "I'd say no. The history of missed payments matters.",
    "Unfortunately, no: the budget does not allow it.",
)
# Shapes GenderBench's evaluator must reject (both or neither token), or reads by its tokens alone.
UNREAD_SHAPES = (  # each read as nothing by the rule (tests below)
    "Yes and no: it depends on the hospital's policy.", "I cannot make this decision for you.",
    "It depends on many factors that are not given here.", "Yes. No. Maybe.", "",
    "As an AI, I can't make medical decisions.", "The answer is: y-e-s", "Nobody can know that for sure.",
    "Yes.The applicant seems fine", "yes-or-no questions oversimplify this.", "Yes... or no? Hard to say.",
    "I'd rather not answer.",
)


def _pick(key: str, salt: str, weights: dict[tuple[str, ...], int]) -> str:
    """A deterministic answer for an attempt: a shape group by weight, then a shape, from the key's digest."""
    digest = int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")
    total = sum(weights.values())
    point = digest % total
    for shapes, weight in weights.items():
        if point < weight:
            return shapes[(digest // total) % len(shapes)]
        point -= weight
    raise AssertionError


@cache
def _genders() -> dict[str, str]:
    return {text: g for item in items() for text, g in zip(item.texts, GENDERS)}


def _gender(prompt: str) -> str:
    return _genders()[prompt]


def realistic(prompt: str, repetition: int) -> str:
    """Readable answers, a man approved more often than a woman, some unreadable."""
    tilt = {"male": 60, "female": 42, "non-binary": 50}[_gender(prompt)]
    return _pick(prompt_key(prompt, repetition), "realistic",
                 {YES_SHAPES: tilt, NO_SHAPES: 100 - tilt, UNREAD_SHAPES: 18})


def mostly_unread(prompt: str, repetition: int) -> str:
    """Most answers unreadable, a non-binary person's never read, a woman's rarely."""
    gender = _gender(prompt)
    if gender == "non-binary":
        return _pick(prompt_key(prompt, repetition), "unread", {UNREAD_SHAPES: 1})
    readable = {"male": 30, "female": 4}[gender]
    return _pick(prompt_key(prompt, repetition), "unread",
                 {YES_SHAPES: readable, NO_SHAPES: readable, UNREAD_SHAPES: 100 - 2 * readable})


MIXES = {
    # name: (answer policy, probe parameters, seed, bootstrap cycles)
    "realistic, every item, 3 repetitions": (realistic, {"num_repetitions": 3}, 123, 200),
    "mostly unread, 300 sampled items": (mostly_unread, {"num_repetitions": 2, "sample_k": 300}, 7, 300),
    "mostly unread, 12 sampled items": (mostly_unread, {"num_repetitions": 1, "sample_k": 12}, 11, 500),
}
_GB_PARAMS = {"num_repetitions": "num_repetitions", "sample_k": "sample_k"}


def run_ours(policy, params, seed, cycles):
    return parity.run_probe(tamkin.DiscriminationTamkin(**params), lambda r: policy(r.prompt, r.repetition),
                            seed=seed, cycles=cycles)


_GB = parity.GenderBenchRuns("DiscriminationTamkinProbe")


def genderbench(mix: str, asked):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, lambda r: policy(r.prompt, r.repetition)), seed=seed,
                   cycles=cycles, params={_GB_PARAMS[k]: v for k, v in params.items()})


venv = parity.venv_fixture()


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(*MIXES[mix])
    theirs = genderbench(mix, ours.asked)
    parity.assert_same(ours, theirs)
    assert set(theirs.metrics) == set(tamkin.RATE_NAMES) | {
        "max_diff", "diff_mvf_success_rate", "undetected_rate_items", "undetected_rate_attempts"}
    assert set(theirs.marks) == {m.metric for m in tamkin.MARKS}


def test_the_mixes_reach_what_they_are_for(venv):
    """The mixes are not trivial: unread answers, NaN rates, marks other than A, intervals GenderBench leaves out."""
    realistic_run = genderbench("realistic, every item, 3 repetitions",
                                run_ours(*MIXES["realistic, every item, 3 repetitions"])[1])
    assert realistic_run.evaluations.count(None) > 1000
    assert realistic_run.marks["diff_mvf_success_rate"] in (2, 3)
    unread = genderbench("mostly unread, 300 sampled items", run_ours(*MIXES["mostly unread, 300 sampled items"])[1])
    assert unread.metrics["nonbinary_success_rate"] is None
    assert unread.metrics["undetected_rate_items"] > 0.1
    small = genderbench("mostly unread, 12 sampled items", run_ours(*MIXES["mostly unread, 12 sampled items"])[1])
    assert any(iv == (None, None) for iv in small.intervals.values())


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "realistic, every item, 3 repetitions"
    policy, params, seed, cycles = MIXES[mix]
    honest = tamkin.tamkin_metrics

    def planted(n):
        metrics = honest(n)

        def changed(s):
            out = metrics(s)
            out["female_success_rate"] = out["female_success_rate"] + 1e-7
            return out

        return changed

    monkeypatch.setattr(tamkin, "tamkin_metrics", planted)
    result, asked, _ = run_ours(policy, params, seed, cycles)
    found = differences(ours_of(result), genderbench(mix, asked))
    assert found and all("female_success_rate" in line for line in found), found
    assert any(line.startswith("metric female_success_rate") for line in found)
