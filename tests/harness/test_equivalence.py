"""--equivalence-margin D: two one-sided tests that show a bias within +-D (issue 31)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from genderprobe.analysis.equivalence import tost
from genderprobe.analysis.stats import bootstrap_ratio
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.outputs.report import render_report


def levy(model: str, k: int, margin: float | None, **kw):
    config = RunConfig(use_cache=False, equivalence_margin=margin, **kw)
    return run_probe("relationship-levy", model, config=config, sample_k=k)


def test_an_unbiased_model_is_shown_within_the_margin_and_a_biased_one_is_not():
    doc = levy("reference:biased?p=0.5", 3000, 0.05).document  # a fair coin on every attempt
    found = doc["equivalence"]["metrics"]["diff_success_rate"]
    assert found["equivalent"] and found["bounds"] == [-0.05, 0.05] and found["p_value"] < 0.05
    assert found["mark"].startswith("A: the bias is shown within [-0.05, 0.05]")
    assert doc["validity"]["verdict"] == "pass"
    # A position-only model is exactly 0, within any margin, but no A is claimed for it: its run fails validity.
    doc = levy("reference:first-option", 200, 0.05).document
    found = doc["equivalence"]["metrics"]["diff_success_rate"]
    assert found["equivalent"] and "mark" not in found and "validity checks (position)" in found["withheld"]
    biased = levy("reference:biased?p=0.6", 1000, 0.05).document["equivalence"]["metrics"]["diff_success_rate"]
    assert not biased["equivalent"] and "mark" not in biased and biased["p_value"] > 0.5
    # A small sample holds 0 in its interval and shows nothing: "no evidence of bias" is not equivalence.
    small = levy("reference:random", 30, 0.05).document
    assert small["metrics"]["diff_success_rate"]["ci_low"] < 0 < small["metrics"]["diff_success_rate"]["ci_high"]
    assert not small["equivalence"]["metrics"]["diff_success_rate"]["equivalent"]
    assert "equivalence" not in levy("reference:random", 30, None).document


def test_tost_claims_equivalence_at_most_alpha_of_the_time_at_the_margin():
    # A true bias of exactly 0.05 (the man chosen 52.5% of the time): "within +-0.05" must be claimed
    # in at most 5% of runs; at no bias, with enough items, nearly always.
    rng = np.random.default_rng(0)
    at_margin = at_zero = 0
    for seed in range(300):
        for p, hits in ((0.525, "margin"), (0.5, "zero")):
            share = rng.binomial(2, p, 3000) / 2
            est = bootstrap_ratio(share, seed=seed, transform=lambda x: 2 * x - 1)
            shown = tost(est, 0.05, "zero")["equivalent"]
            if hits == "margin":
                at_margin += shown
            else:
                at_zero += shown
    assert at_margin <= 0.065 * 300 and at_zero >= 0.8 * 300


def test_terminal_report_and_compare_say_it(tmp_path):
    paths = []
    for model in ("reference:unbiased", "reference:random"):
        out_dir = tmp_path / model.split(":")[1]
        result = CliRunner().invoke(main, ["run", "relationship-levy", "--model", model, "--sample-k", "300",
                                           "--no-cache", "--equivalence-margin", "0.2", "--out", str(out_dir)],
                                    env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.output
        assert "Equivalence of diff_success_rate within [-0.2, 0.2]: shown" in result.output
        paths.append(out_dir / "results.json")
    page = render_report([(json.loads(paths[0].read_text()), "results.json")])
    assert "<h3>Equivalence</h3>" in page and "Schuirmann" in page
    result = CliRunner().invoke(main, ["compare", *map(str, paths), "--equivalence-margin", "0.2"],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "|A − B| within [-0.2, 0.2] shown (TOST p" in result.output


@pytest.mark.parametrize("margin", ["0", "-0.1", "nan"])
def test_a_margin_that_is_not_positive_is_refused_in_one_sentence(margin):
    result = CliRunner().invoke(main, ["run", "relationship-levy", "--model", "reference:random", "--sample-k", "10",
                                       "--no-cache", "--equivalence-margin", margin])
    assert result.exit_code == 2 and "--equivalence-margin must be a positive number" in result.output
    assert "Traceback" not in result.output
