"""Gest against GenderBench 0.5.0's own code (issue 33): the same answers give the same prompts,
readings, metrics (1e-9), intervals and mark (tests/genderbench_parity.py).

GenderBench's GestProbe reads GEST from the Hugging Face Hub, which the tests cannot reach; its
environment reads our packaged copy of the same file instead (GENDERPROBE_PARITY_LOCAL_FILES, see
tests/genderbench_driver.py), so both sides build their items from one file. Each mix answers every
attempt by a deterministic choice among realistic answer shapes keyed by the prompt and repetition;
which option an answer names comes from the request's calibration oracle.
"""

from __future__ import annotations

import hashlib
import json

import genderbench_parity as parity
import numpy as np
import pytest
from genderbench_parity import differences, ours_of, prompt_key, require

from genderprobe.data.packaged import data_file
from genderprobe.studies.gest import probe as gest
from genderprobe.studies.gest.dataset import DATA

HUB_FILE = "hf://datasets/kinit/gest/gest.csv"  # what GestProbe reads

# Answers naming one option ({x}: its letter, {o}: its text); GenderBench's rule reads each as that letter.
CHOOSE = ("({x})", "({x}) {o}", "The answer is ({x}) {o}.", "**({x})** {o}", "({X}) {o}",
          "({x}) {o}\n\nThis sentence reflects a common stereotype.", "I would say ({x}), {o}.")
# Shapes the rule must reject (no option, or two).
UNREAD = ("Neither.", "Women.", "", "I'm sorry, but I can't attribute a quote to a gender.",
          "Both (a) and (b) could say it.", "{x}) {o}", "It could be anyone: (a), (b) or (c).",
          "Anyone could say this.")
_TEXT = {"unbiased": "Neither", "stereotype": None, "other": None}


def _pick(key: str, salt: str, weights: dict[tuple[str, ...], int]) -> str:
    digest = int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")
    point = digest % sum(weights.values())
    for shapes, weight in weights.items():
        if point < weight:
            return shapes[(digest // 1000) % len(shapes)]
        point -= weight
    raise AssertionError


def _answer(request, salt: str, weights: dict[str, int]) -> str:
    """A shape of a kind drawn by weight: 'stereotype', 'other' (the other gender), 'neither', 'unread'."""
    key = prompt_key(request.prompt, request.repetition)
    kind = _pick(key, salt + "kind", {(k,): w for k, w in weights.items()})
    persona = {"stereotype": "biased", "other": "biased-female", "neither": "unbiased"}.get(kind)
    letter = request.oracle[persona][1] if persona else "abc"[int(key[:2], 16) % 3]
    text = request.prompt.split(f"({letter}) ")[1].split("\n")[0]
    shape = _pick(key, salt, {UNREAD if persona is None else CHOOSE: 1})
    return shape.format(x=letter, X=letter.upper(), o=text)


def realistic(request) -> str:
    return _answer(request, "r", {"neither": 55, "stereotype": 25, "other": 8, "unread": 12})


def mostly_unread(request) -> str:
    return _answer(request, "u", {"neither": 5, "stereotype": 15, "other": 5, "unread": 75})


def male_stereotypes_unread(request) -> str:
    """A sentence of a male stereotype never read: the male-stereotype metrics, stereotype_rate and its mark
    undefined."""
    male = "(" + request.oracle["biased"][1] + ") Men" in request.prompt
    weights = {"unread": 1} if male else {"neither": 5, "stereotype": 15, "other": 5, "unread": 75}
    return _answer(request, "m", weights)


MIXES = {
    # name: (answer policy, probe parameters, seed, bootstrap cycles); GenderBench's metric calculator
    # takes about 0.1 s a resample on every sentence, so the full mix bootstraps 200 times.
    "realistic, every sentence, 6 orders": (realistic, {}, 123, 200),
    "mostly unread, 2 orders, 2 repetitions, 300 sampled": (
        mostly_unread, {"num_reorderings": 2, "num_repetitions": 2, "sample_k": 300}, 7, 300),
    "male stereotypes unread, 6 sampled": (male_stereotypes_unread, {"sample_k": 6}, 11, 500),
}
_GB = parity.GenderBenchRuns("GestProbe")


def run_ours(policy, params, seed, cycles):
    return parity.run_probe(gest.Gest(**params), policy, seed=seed, cycles=cycles)


def genderbench(mix, asked):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, policy), seed=seed, cycles=cycles, params=params)


@pytest.fixture(scope="module")
def venv():
    found = require()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GENDERPROBE_PARITY_LOCAL_FILES", json.dumps({HUB_FILE: str(data_file(DATA))}))
        yield found


def rounding_edge(result, cycles: int) -> list[str]:
    """Metrics some resamples leave undefined (NaN) and all the others give one value: a normal fitted to
    those values has a spread of 0 or of about 1e-16, as the rounding of the values and their mean has it,
    so the interval is none or that value, on either side as its own arithmetic rounds (docs/gest.md)."""
    return [name for name, e in result.metrics.items()
            if e.draws is not None and 0 < len(e.draws) < cycles and np.ptp(e.draws) < 1e-12]


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(*MIXES[mix])
    result, theirs = ours.result, genderbench(mix, ours.asked)
    edge = rounding_edge(result, MIXES[mix][3])
    # GenderBench's evaluation of an answer is the option's gender (or neither).
    parity.assert_same(ours, theirs, excluded=edge)
    for name in edge:  # the one difference left: on each side none or a point within 1e-9 of the value
        value = result.metrics[name].value
        assert abs(theirs.metrics[name] - value) < 1e-9
        for low, high in (result.extra["genderbench"]["intervals"][name] or (None, None), theirs.intervals[name]):
            assert low is None or abs(low - value) < 1e-9 and abs(high - value) < 1e-9, (name, low, high)
    assert len(theirs.metrics) == 3 + 16 * 3 + 2 * 3 + 1 + 2 and set(theirs.metrics) <= set(result.metrics)
    assert set(theirs.marks) == {"stereotype_rate"}


def test_the_mixes_reach_what_they_are_for(venv):
    """Not trivial: many unread answers, the mark not A, stereotypes with no read sentence (NaN metrics),
    and metrics some resamples leave undefined."""
    full = genderbench("realistic, every sentence, 6 orders", run_ours(*MIXES["realistic, every sentence, 6 orders"])[1])
    assert full.evaluations.count(None) > 1000 and full.marks["stereotype_rate"] in (2, 3)
    mix = "male stereotypes unread, 6 sampled"
    result, asked, _ = run_ours(*MIXES[mix])
    small = genderbench(mix, asked)
    assert sum(v is None for v in small.metrics.values()) > 30
    assert small.metrics["stereotype_rate"] is None and small.marks["stereotype_rate"] is None
    assert rounding_edge(result, MIXES[mix][3])  # the documented difference is reached


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "realistic, every sentence, 6 orders"
    honest = gest.gest_metrics

    def planted(n):
        metrics = honest(n)

        def changed(s):
            out = metrics(s)
            out["stereotype_3_frequency_neither_option"] = out["stereotype_3_frequency_neither_option"] + 1e-7
            return out

        return changed

    monkeypatch.setattr(gest, "gest_metrics", planted)
    result, asked, _ = run_ours(*MIXES[mix])
    found = differences(ours_of(result), genderbench(mix, asked))
    assert found and all("stereotype_3_frequency_neither_option" in line for line in found), found
