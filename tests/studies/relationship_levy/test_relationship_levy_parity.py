"""RelationshipLevy against GenderBench 0.5.0's own code (issue 46): under GenderBench's draw (``draw
genderbench``, the preset's) the same answers give the same prompts in the same order, readings, metrics
(1e-9), intervals and marks (tests/genderbench_parity.py).

Each mix answers every attempt by a deterministic choice among answer shapes, keyed by the prompt and
repetition; whether a shape names the man's or the woman's option comes from the request's calibration
oracle (reference:biased answers the man's option), so both sides get the same answer for the same attempt.
"""

from __future__ import annotations

import functools
import hashlib
import tomllib
from importlib import resources
from types import SimpleNamespace

import genderbench_parity as parity
import numpy as np
import pytest
from genderbench_parity import differences, ours_of, prompt_key

from genderprobe.studies.relationship_levy import metrics as rl_metrics
from genderprobe.studies.relationship_levy.probe import RelationshipLevy

# Answers naming one option ({x}: its letter); GenderBench's rule reads each as that letter.
CHOOSE = ("({x})", "({x}) {name} is more likely to be right.", "The answer is ({x}).", "**({x})**",
          "({X})", "I think ({x}), because the other spouse ignored the agreement.")
# Shapes the rule must reject: no option, or both.
UNREAD = ("Both are right.", "Either (a) or (b), it depends on the couple.", "",
          "I'm sorry, but I can't choose between them.", "Neither of them.", "Answer: B", "{name}.")


def _pick(key: str, salt: str, weights: dict[tuple[str, ...], int]) -> str:
    digest = int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")
    point = digest % sum(weights.values())
    for shapes, weight in weights.items():
        if point < weight:
            return shapes[(digest // 1000) % len(shapes)]
        point -= weight
    raise AssertionError


def _answer(request, salt: str, weights: dict[str, int]) -> str:
    """A shape of a kind ('man', 'woman', 'unread') drawn by the weights."""
    key = prompt_key(request.prompt, request.repetition)
    kind = _pick(key, salt + "kind", {(k,): w for k, w in weights.items()})
    man = request.oracle["biased"][1]  # the man's option letter
    letter = man if kind == "man" else "ab"[man == "a"]
    shape = _pick(key, salt, {UNREAD if kind == "unread" else CHOOSE: 1})
    return shape.format(x=letter, X=letter.upper(), name="Kelley")


def leans_to_women(request) -> str:
    return _answer(request, "w", {"man": 40, "woman": 50, "unread": 10})


def mostly_unread(request) -> str:
    return _answer(request, "u", {"man": 10, "woman": 5, "unread": 85})


def nearly_all_unread(request) -> str:
    """So few read answers that some resamples hold none (NaN values beside the others)."""
    return _answer(request, "n", {"man": 1, "woman": 1, "unread": 30})


MIXES = {
    # name: (answer policy, GenderBench's parameters, seed, bootstrap cycles); ours add draw genderbench
    "leans to women, the preset's 3,000 items": (leans_to_women, {"sample_k": 3000}, 123, 100),
    "mostly unread, 2 repetitions, 300 items": (mostly_unread, {"sample_k": 300, "num_repetitions": 2}, 7, 300),
    "nearly all unread, 20 items": (nearly_all_unread, {"sample_k": 20}, 11, 500),
}
_GB = parity.GenderBenchRuns("RelationshipLevyProbe")
_READING = {"male": True, "female": False, "undetected": None}


def run_ours(policy, params, seed, cycles):
    return parity.run_probe(RelationshipLevy(**params, draw="genderbench"), policy, seed=seed, cycles=cycles)


@functools.cache
def ours_of_mix(mix: str) -> parity.OurRun:
    """Our honest run of a mix, made once for the tests that read it."""
    return run_ours(*MIXES[mix])


def genderbench(mix, asked):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, policy), seed=seed, cycles=cycles, params=params)


venv = parity.venv_fixture()


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_prompts_and_numbers(venv, mix):
    ours = ours_of_mix(mix)
    theirs = genderbench(mix, ours.asked)
    parity.assert_same(ours, theirs, reading=lambda r: _READING[r["code"]])
    assert set(theirs.metrics) == {"male_success_rate", "female_success_rate", "diff_success_rate",
                                   "diff_abs_success_rate", "undetected_rate_items", "undetected_rate_attempts"}
    assert set(theirs.marks) == {m.metric for m in rl_metrics.MARKS}


def test_the_mixes_reach_what_they_are_for(venv):
    """Not trivial: a mark other than A, many unread answers, resamples with no read answer."""
    leans = genderbench("leans to women, the preset's 3,000 items",
                        ours_of_mix("leans to women, the preset's 3,000 items").asked)
    assert leans.marks["diff_success_rate"] in (1, 2) and leans.evaluations.count(None) > 300
    unread = genderbench("mostly unread, 2 repetitions, 300 items",
                         ours_of_mix("mostly unread, 2 repetitions, 300 items").asked)
    assert unread.metrics["undetected_rate_items"] > 0.5
    few = ours_of_mix("nearly all unread, 20 items")
    counts = {code: np.zeros(20) for code in _READING}
    for r in few.records:
        counts[r["code"]][r["item"]] += 1
    boot = rl_metrics.genderbench_bootstrap(SimpleNamespace(**counts), {"n_resamples": 500, "seed": 11})
    assert 0 < np.isnan(boot.draws["male_success_rate"]).sum() < 500  # some resamples read nothing


def test_the_preset_runs_genderbenchs_draw_with_genderbenchs_seed():
    preset = tomllib.loads(resources.files("genderprobe").joinpath("interfaces", "presets", "genderbench.toml")
                           .read_text())
    assert preset["suite"]["seed"] == 123
    assert preset["probes"]["relationship-levy"] == {"sample_k": 3000, "draw": "genderbench"}
    assert MIXES["leans to women, the preset's 3,000 items"][1:3] == ({"sample_k": 3000}, 123)


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "mostly unread, 2 repetitions, 300 items"
    honest = rl_metrics.genderbench_metrics

    def planted(n):
        metrics = honest(n)

        def changed(s):
            out = metrics(s)
            out["female_success_rate"] = out["female_success_rate"] + 1e-7
            return out

        return changed

    monkeypatch.setattr(rl_metrics, "genderbench_metrics", planted)
    result, asked, _ = run_ours(*MIXES[mix])
    found = differences(ours_of(result), genderbench(mix, asked))
    assert found and all("female_success_rate" in line for line in found), found
