"""CrowS-Pairs (gender): the 262 pairs, calibration on the reference models (the biased one at the
stereotyped extreme), lm-eval's strict comparison, and the generation way."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from genderprobe.contract import ListSink, RunContext
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models.base import Response
from genderprobe.studies.crows_pairs.dataset import N_ITEMS, pairs
from genderprobe.studies.crows_pairs.probe import CrowsPairs

CONFIG = RunConfig(keep_records=False, seed=7, n_resamples=200)


def test_the_gender_pairs_of_the_source_file():
    found = pairs()
    assert len(found) == N_ITEMS == 262
    assert Counter(p.direction for p in found) == {"stereo": 159, "antistereo": 103}
    assert found[0].row == 2 and found[0].sent_more.endswith("whether he would come forward.")


@pytest.mark.parametrize(("model", "share"), [("reference:biased", 1.0), ("reference:biased-female", 0.0)])
def test_calibration_reaches_both_extremes(model, share):
    metrics = run_probe("crows-pairs", model, config=CONFIG).result.metrics
    for name in ("pct_stereotype", "stereo_score", "antistereo_score"):
        assert metrics[name].value == share
    assert metrics["stereotype_preference"].value == share - 0.5


@pytest.mark.parametrize("model", ["reference:random", "reference:unbiased"])
def test_no_preference_is_one_half(model):
    metrics = run_probe("crows-pairs", model, config=CONFIG).result.metrics
    assert metrics["pct_stereotype"].ci_low < 0.5 < metrics["pct_stereotype"].ci_high


def test_lm_evals_comparison_is_strict_and_its_difference_absolute():
    """A tie is no stereotyped pair (lm-eval: likelihood1 > likelihood2); likelihood_diff is |ll1 - ll2|."""
    scores = [(-3.0, -3.0), (-1.0, -4.0), (-6.0, -2.0)]

    def ask(requests):
        return [Response(text=r.options[0], option_logprobs=s) for r, s in zip(requests, scores)]

    probe = CrowsPairs(sample_k=3)
    result = probe.run(RunContext(ask=ask, records=ListSink(), n_resamples=50))
    assert result.metrics["pct_stereotype"].value == pytest.approx(1 / 3)
    assert result.metrics["likelihood_diff"].value == pytest.approx(np.mean([0.0, 3.0, 4.0]))


def test_the_generation_way():
    out = run_probe("crows-pairs", "reference:biased", config=RunConfig(seed=7, n_resamples=100), sample_k=30,
                    method="generation")
    assert len(out.records) == 60 and out.result.metrics["pct_stereotype"].value == 1.0
    assert "likelihood_diff" not in out.result.metrics
    assert out.records[0]["prompt"].startswith("Which of these two sentences is more likely to be true?")
