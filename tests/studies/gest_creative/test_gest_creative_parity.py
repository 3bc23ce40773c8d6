"""GestCreative against GenderBench 0.5.0's own code (issue 33): the same stories give the same prompts,
readings, metrics (1e-9), intervals and marks (tests/genderbench_parity.py).

GenderBench's GestCreativeProbe reads GEST from the Hugging Face Hub, which the tests cannot reach; its
environment reads the Gest study's packaged copy of the same file instead (GENDERPROBE_PARITY_LOCAL_FILES,
see tests/genderbench_driver.py). Each mix answers every attempt with a story from the answer corpus
(story_answers.py): stories about women, men, both, nobody, refusals, reasoning blocks.
"""

from __future__ import annotations

import json

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, ours_of, require
from story_answers import policy

from genderprobe.data.packaged import data_file
from genderprobe.studies.gest.dataset import DATA
from genderprobe.studies.gest_creative import probe as gest_creative

HUB_FILE = "hf://datasets/kinit/gest/gest.csv"  # what GestCreativeProbe reads

MIXES = {
    # name: (answer policy, probe parameters, seed, bootstrap cycles). GenderBench tokenizes every story
    # with NLTK and recomputes 16 means per resample: a sample of sentences keeps this within budget.
    "realistic, 200 sampled, 4 repetitions": (
        policy("r", {"stereotype": 55, "other": 20, "unread": 25}), {"sample_k": 200, "num_repetitions": 4}, 123, 200),
    "mostly unread, 40 sampled, 2 repetitions": (
        policy("u", {"stereotype": 10, "other": 5, "unread": 85}), {"sample_k": 40, "num_repetitions": 2}, 7, 300),
}
_GB = parity.GenderBenchRuns("GestCreativeProbe")
_OURS: dict[str, tuple] = {}


def run_ours(answer, params, seed, cycles):
    return parity.run_probe(gest_creative.GestCreative(**params), answer, seed=seed, cycles=cycles)


def ours(mix):
    """Our run of a mix, made once for the module's tests."""
    if mix not in _OURS:
        _OURS[mix] = run_ours(*MIXES[mix])
    return _OURS[mix]


def genderbench(mix, asked):
    answer, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, answer), seed=seed, cycles=cycles, params=params)


@pytest.fixture(scope="module")
def venv():
    found = require()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GENDERPROBE_PARITY_LOCAL_FILES", json.dumps({HUB_FILE: str(data_file(DATA))}))
        yield found


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_stories_give_genderbenchs_numbers(venv, mix):
    run = ours(mix)
    theirs = genderbench(mix, run.asked)
    parity.assert_same(run, theirs)
    assert set(theirs.metrics) == {*(f"masculine_rate_{k}" for k in range(1, 17)), "masculine_rate", "disparity",
                                   "stereotype_rate", "undetected_rate_items", "undetected_rate_attempts"}
    assert set(theirs.marks) == {"stereotype_rate", "masculine_rate", "disparity"}


def test_the_mixes_reach_what_they_are_for(venv):
    """Not trivial: unread stories, marks beyond A, and stereotypes with no read story (NaN metrics)."""
    name = "realistic, 200 sampled, 4 repetitions"
    full = genderbench(name, ours(name)[1])
    assert full.evaluations.count(None) > 150 and full.marks["stereotype_rate"] >= 2
    name = "mostly unread, 40 sampled, 2 repetitions"
    some = genderbench(name, ours(name)[1])
    assert any(v is None for k, v in some.metrics.items() if k.startswith("masculine_rate_"))


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    name = "realistic, 200 sampled, 4 repetitions"
    honest = gest_creative.calculator

    def planted(readings, stereotypes):
        counts, metrics = honest(readings, stereotypes)

        def changed(s):
            out = metrics(s)
            out["masculine_rate_3"] = out["masculine_rate_3"] + 1e-7
            return out

        return counts, changed

    monkeypatch.setattr(gest_creative, "calculator", planted)
    result, asked, _ = run_ours(*MIXES[name])
    found = differences(ours_of(result), genderbench(name, asked))
    assert found and all("masculine_rate_3" in line for line in found), found

