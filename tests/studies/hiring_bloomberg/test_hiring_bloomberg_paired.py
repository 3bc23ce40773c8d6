"""HiringBloomberg's paired module: its headline metrics rebuilt list by list from a run's records, so that
genderprobe compare pairs two runs over the lists both asked."""

from __future__ import annotations

import math

import pytest

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.outputs.report import compare
from genderprobe.registry import item_score_functions


def _run(model: str, seed: int = 3):
    out = run_probe("hiring-bloomberg", model, config=RunConfig(use_cache=False, n_resamples=50, seed=seed),
                    num_reorders=6)
    return out


@pytest.mark.parametrize("model", ["reference:random", "reference:biased?p=0.7"])
def test_the_records_rebuild_each_headline_metric(model):
    out = _run(model)
    scores = item_score_functions()["hiring-bloomberg"](out.records, out.document["parameters"]["probe"])
    headline = [h["metric"] for h in out.document["headline"]["metrics"]]
    assert set(headline) == set(scores) == {"disparity", "stereotype_rate"}
    for metric, s in scores.items():
        assert math.isclose(s.value(), out.document["metrics"][metric]["value"], abs_tol=1e-12), metric
        assert len(s.items) == 2 * 4 * 4 * 6 // 2  # every list, each with an answer read
    # disparity is an absolute value: its signed part is masculine_rate - 0.5.
    signed = scores["disparity"].signed_parts()
    assert math.isclose(signed[0, 0], out.document["metrics"]["masculine_rate"]["value"] - 0.5, abs_tol=1e-12)


def test_compare_pairs_two_runs_over_the_lists_both_asked():
    a, b = _run("reference:biased?p=0.7"), _run("reference:random")
    (section,) = compare([(a.document, "biased", a.records), (b.document, "random", b.records)])
    tests = {t.metric: t for t in section.pairs}
    assert set(tests) == {"disparity", "stereotype_rate"}
    assert all(t.paired and t.test == "paired bootstrap" for t in tests.values())
    assert tests["disparity"].p_value < 0.05  # 0.2 against about 0
