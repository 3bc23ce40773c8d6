"""JobsLum against GenderBench 0.5.0's own code (issue 33): the same stories give the same prompts,
readings, metrics (1e-9; Pearson's r and the bounded least-squares slope included), intervals and marks
(tests/genderbench_parity.py). The stories are GestCreative's answer corpus, drawn by story_answers.py
(tests/studies/gest_creative)."""

from __future__ import annotations

import sys
from pathlib import Path

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, ours_of

from genderprobe.studies.jobs_lum import probe as jobs_lum

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gest_creative"))
from story_answers import policy  # noqa: E402

MIXES = {
    # name: (answer policy, probe parameters, seed, bootstrap cycles)
    "realistic, every occupation, 5 repetitions": (
        policy("r", {"stereotype": 45, "other": 30, "unread": 25}), {"num_repetitions": 5}, 123, 200),
    # Few occupations, most stories unread: resamples with fewer than two read occupations (no correlation, no
    # slope), resamples whose read occupations all have one share (a constant: Pearson's r undefined), and the
    # bounded slope at its bound (-1).
    "mostly unread, 8 sampled, 2 repetitions": (
        policy("u", {"stereotype": 20, "other": 10, "unread": 70}), {"sample_k": 8, "num_repetitions": 2}, 5, 300),
}
_GB = parity.GenderBenchRuns("JobsLumProbe")
_OURS: dict[str, tuple] = {}


def run_ours(answer, params, seed, cycles):
    return parity.run_probe(jobs_lum.JobsLum(**params), answer, seed=seed, cycles=cycles)


def ours(mix):
    """Our run of a mix, made once for the module's tests."""
    if mix not in _OURS:
        _OURS[mix] = run_ours(*MIXES[mix])
    return _OURS[mix]


def genderbench(mix, asked):
    answer, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, answer), seed=seed, cycles=cycles, params=params)


venv = parity.venv_fixture()


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_stories_give_genderbenchs_numbers(venv, mix):
    run = ours(mix)
    theirs = genderbench(mix, run.asked)
    parity.assert_same(run, theirs)
    assert set(theirs.metrics) == set(jobs_lum.METRICS)
    assert set(theirs.marks) == {"stereotype_rate", "masculine_rate", "disparity"}


def test_the_mixes_reach_what_they_are_for(venv):
    """Not trivial: a stereotype rate marked C or D on every occupation, and a small mix whose resamples leave
    the correlation and the slope undefined in some draws."""
    name = "realistic, every occupation, 5 repetitions"
    result, asked, _ = ours(name)
    full = genderbench(name, asked)
    assert len(asked) == 339 * 5 and full.evaluations.count(None) > 300 and full.marks["stereotype_rate"] >= 2
    name = "mostly unread, 8 sampled, 2 repetitions"
    result, asked, _ = ours(name)
    small = genderbench(name, asked)
    assert 2 <= sum(e is not None for e in small.evaluations) < len(asked) / 2
    assert len(result.metrics["correlation"].draws) < MIXES[name][3]  # some resamples have no correlation
    assert small.metrics["stereotype_rate"] == pytest.approx(-1, abs=1e-9)  # lsq_linear's bound


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    name = "realistic, every occupation, 5 repetitions"
    honest = jobs_lum.calculator

    def planted(readings, job_scores):
        counts, metrics = honest(readings, job_scores)

        def changed(w):
            out = metrics(w)
            out["correlation"] = out["correlation"] + 1e-7
            return out

        return counts, changed

    monkeypatch.setattr(jobs_lum, "calculator", planted)
    result, asked, _ = run_ours(*MIXES[name])
    found = differences(ours_of(result), genderbench(name, asked))
    assert found and all("correlation" in line for line in found), found
