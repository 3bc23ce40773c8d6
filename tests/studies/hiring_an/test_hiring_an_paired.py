"""HiringAn's paired module: diff_acceptance_rate rebuilt item by item from a run's records, so that
genderprobe compare pairs two runs over the items both asked; diff_regression stays compared from intervals."""

from __future__ import annotations

import math

import pytest

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.outputs.report import compare
from genderprobe.registry import item_score_functions


def _run(model: str, repetitions: int = 1):
    return run_probe("hiring-an", model, config=RunConfig(use_cache=False, n_resamples=50, seed=3), sample_k=400,
                     num_repetitions=repetitions)


@pytest.mark.parametrize(("model", "repetitions"), [("reference:random", 2), ("reference:biased?p=0.7", 1)])
def test_the_records_rebuild_diff_acceptance_rate(model, repetitions):
    out = _run(model, repetitions)
    scores = item_score_functions()["hiring-an"](out.records, out.document["parameters"]["probe"])
    assert set(scores) == {"diff_acceptance_rate"}
    s = scores["diff_acceptance_rate"]
    assert math.isclose(s.value(), out.document["metrics"]["diff_acceptance_rate"]["value"], abs_tol=1e-12)
    assert len(s.items) == 400


def test_compare_pairs_diff_acceptance_rate_and_says_why_diff_regression_is_not():
    a, b = _run("reference:biased?p=0.7"), _run("reference:random")
    (section,) = compare([(a.document, "biased", a.records), (b.document, "random", b.records)])
    tests = {t.metric: t for t in section.pairs}
    assert tests["diff_acceptance_rate"].paired and tests["diff_acceptance_rate"].test == "paired bootstrap"
    assert tests["diff_acceptance_rate"].p_value < 0.05
    assert not tests["diff_regression"].paired and "not rebuilt from records" in tests["diff_regression"].note
