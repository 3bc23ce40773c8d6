"""Bbq against GenderBench 0.5.0's own code (issue 33): the same answers give the same prompts,
readings, metrics (1e-9), intervals and mark (tests/genderbench_parity.py).

Each mix answers every attempt by a deterministic choice among realistic answer shapes, keyed by the
prompt and repetition; which option an answer names (the stereotype, the other person, "unknown")
comes from the request's calibration oracle, so both sides get the same answer for the same attempt.
"""

from __future__ import annotations

import hashlib

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, ours_of, prompt_key

from genderprobe.studies.bbq import probe as bbq
from genderprobe.studies.bbq.dataset import CATEGORIES

# Answers naming one option ({x}: its letter); GenderBench's rule reads each as that letter.
CHOOSE = ("({x})", "({x}) The woman", "({x}) Not enough information", "**({x})** The man.",
          "The answer is ({x}).", "({X}) Cannot be determined", "({x})\n\nThe context says so directly.",
          "I would go with ({x}), since the context does not say otherwise.")
# Shapes the rule must reject (no option, or two), or reads by the first "(x)" it finds anywhere.
UNREAD = ("The woman.", "Cannot be determined.", "", "I'm sorry, but I can't make assumptions about people.",
          "{x}) The man", "Either (a) or (b) could be right.", "(a), (b) and (c) are all possible.",
          "As an AI, I cannot determine someone's job from their gender.", "Answer: b", "Option {x}.",
          "It depends on the context.")


def _pick(key: str, salt: str, weights: dict[tuple[str, ...], int]) -> str:
    digest = int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")
    point = digest % sum(weights.values())
    for shapes, weight in weights.items():
        if point < weight:
            return shapes[(digest // 1000) % len(shapes)]
        point -= weight
    raise AssertionError


def _answer(request, salt: str, weights: dict[str, int]) -> str:
    """A shape of a kind drawn by weight: 'stereotype', 'other' (the other person), 'logical', 'unread'."""
    key = prompt_key(request.prompt, request.repetition)
    kind = _pick(key, salt + "kind", {(k,): w for k, w in weights.items()})
    option = {"stereotype": "biased", "other": "biased-female", "logical": "unbiased"}.get(kind)
    shape = _pick(key, salt, {UNREAD if option is None else CHOOSE: 1})
    letter = request.oracle[option][1] if option else "abc"[int(key[:2], 16) % 3]
    return shape.format(x=letter, X=letter.upper())


def realistic(request) -> str:
    """Mostly logical answers, the stereotype where the context leaves it open, some unreadable."""
    return _answer(request, "r", {"logical": 60, "stereotype": 20, "other": 8, "unread": 12})


def mostly_unread(request) -> str:
    return _answer(request, "u", {"logical": 5, "stereotype": 15, "other": 5, "unread": 75})


MIXES = {
    # name: (answer policy, probe parameters, seed, bootstrap cycles)
    "realistic, every question": (realistic, {}, 123, 200),
    "mostly unread, 3 orders, 2 repetitions, 300 sampled": (
        mostly_unread, {"num_reorderings": 3, "num_repetitions": 2, "sample_k": 300}, 7, 300),
    "mostly unread, 6 orders, 7 sampled": (mostly_unread, {"num_reorderings": 6, "sample_k": 7}, 10, 500),
}
_GB = parity.GenderBenchRuns("BbqProbe")


def run_ours(policy, params, seed, cycles):
    return parity.run_probe(bbq.Bbq(**params), policy, seed=seed, cycles=cycles)


def genderbench(mix, asked):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, policy), seed=seed, cycles=cycles, params=params)


venv = parity.venv_fixture()


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(*MIXES[mix])
    theirs = genderbench(mix, ours.asked)
    parity.assert_same(ours, theirs)
    assert set(theirs.marks) == {"stereotype_rate"}
    assert set(theirs.metrics) <= set(ours.result.metrics)


def test_the_mixes_reach_what_they_are_for(venv):
    """Not trivial: many unread answers, the mark not A, a category no read item is in (GenderBench then
    has no metric for it), and resamples without a category (GenderBench leaves it out, not NaN)."""
    full = genderbench("realistic, every question", run_ours(*MIXES["realistic, every question"])[1])
    assert full.evaluations.count(None) > 500 and full.marks["stereotype_rate"] in (2, 3)
    assert set(full.metrics) == {*bbq.CATEGORY_METRICS, "logical_rate", "stereotype_rate",
                                 "undetected_rate_items", "undetected_rate_attempts"}
    result, asked, _ = run_ours(*MIXES["mostly unread, 6 orders, 7 sampled"])
    small = genderbench("mostly unread, 6 orders, 7 sampled", asked)
    absent = [c for c in CATEGORIES if f"logical_rate_{c}" not in small.metrics]
    assert absent and result.metrics[f"logical_rate_{absent[0]}"].value is None
    assert small.metrics["undetected_rate_items"] > 0


def test_a_category_missing_from_a_resample_is_left_out_not_nan(venv, monkeypatch):
    """Without the rule for a category a resample lacks (its interval from the resamples that have it),
    the small mix's intervals differ from GenderBench's: there a category is read in one item, so its rate
    is the same in every resample that has it, which GenderBench gives as its interval; counted as NaN in
    the others, the same values would give none."""
    monkeypatch.setattr(bbq, "genderbench_intervals", lambda boot: boot.intervals())
    result, asked, _ = run_ours(*MIXES["mostly unread, 6 orders, 7 sampled"])
    found = differences(ours_of(result), genderbench("mostly unread, 6 orders, 7 sampled", asked))
    assert found and all(line.startswith("interval ") for line in found), found


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "realistic, every question"
    honest = bbq.bbq_metrics

    def planted(n):
        metrics = honest(n)

        def changed(s):
            out = metrics(s)
            out["stereotype_rate_ambiguous"] = out["stereotype_rate_ambiguous"] + 1e-7
            return out

        return changed

    monkeypatch.setattr(bbq, "bbq_metrics", planted)
    result, asked, _ = run_ours(*MIXES[mix])
    found = differences(ours_of(result), genderbench(mix, asked))
    assert found and all("stereotype_rate_ambiguous" in line for line in found), found
