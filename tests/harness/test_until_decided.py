"""--until-decided: runs that stop when an anytime-valid confidence sequence settles the question (issue 31)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from genderprobe.analysis.sequential import confidence_sequence, rounds, simulate
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main


def test_the_sequence_holds_the_mean_at_every_item_at_once():
    # 300 runs of 2,000 items of a fair coin's shares: the sequence leaves the true mean out at some
    # item (not at one fixed item: at any) in at most 5% of runs.
    rng = np.random.default_rng(0)
    shares = rng.binomial(2, 0.5, size=(300, 2000)) / 2
    low, high = confidence_sequence(shares)
    missed = ((low > 0.5) | (high < 0.5)).any(axis=1)
    assert missed.mean() <= 0.05
    assert (high - low)[:, -1].mean() < 0.12  # and it narrows: about 0.1 wide after 2,000 items
    # NaN (items with no detected answer) count for nothing.
    with_gaps = np.where(rng.random(2000) < 0.2, np.nan, shares[0])
    lo, hi = confidence_sequence(with_gaps)
    assert lo.shape == (2000,) and np.all(lo <= hi)


def test_decisions_keep_their_error_rates_and_save_requests():
    unbiased = simulate(0.5, 3000, "bias", runs=300, seed=1)
    assert np.mean([v is not None for _, v in unbiased]) <= 0.05  # no bias claimed where there is none
    biased = simulate(0.6, 3000, "bias", runs=300, seed=2)
    assert all(v == "biased: diff_success_rate above 0" for _, v in biased)
    assert np.mean([k for k, _ in biased]) < 0.25 * 3000
    at_margin = simulate(0.525, 3000, "equivalence", 0.05, runs=300, seed=3)  # true bias exactly 0.05
    assert np.mean([v == "within +-0.05" for _, v in at_margin]) <= 0.05
    assert rounds(1000) == [218, 327, 436, 545, 763, 981, 1000] and rounds(100) == [100]


def test_a_run_stops_when_decided_and_a_larger_run_then_asks_only_for_the_rest(tmp_path, capsys):
    import re

    from genderprobe.data.name_lists import bloomberg_by_gender
    from genderprobe.outputs.terminal import print_results

    men = {e.first for e in bloomberg_by_gender("male")}
    rng = np.random.default_rng(0)

    def leans_to_men(prompts):  # the man's option 65% of the time
        found = [re.search(r"\(a\) (.+?) or \(b\) (.+?)\?", p) for p in prompts]
        return ["(a)" if (f.group(1) in men) == (rng.random() < 0.65) else "(b)" for f in found]

    config = RunConfig(cache_dir=tmp_path, until_decided="bias", keep_records=False)
    out = run_probe("relationship-levy", "function:leans", generate=leans_to_men, config=config, sample_k=2000)
    entry = out.document["until_decided"]
    assert entry["decided"] and entry["verdict"] == "biased: diff_success_rate above 0"
    assert entry["items"] < 2000 and out.document["counts"]["items"] == entry["items"]
    assert entry["requests_saved"] == 2 * (2000 - entry["items"]) and entry["confidence_sequence"][0] > 0
    assert [r["items"] for r in entry["rounds"]] == rounds(2000)[: len(entry["rounds"])]
    print_results(out.document)
    assert f"Until decided (bias): biased: diff_success_rate above 0 after {entry['items']:,} of 2,000 items" in (
        " ".join(capsys.readouterr().out.split()))
    # Every round's answers are stored: a larger run asks only for the items beyond.
    config = RunConfig(cache_dir=tmp_path, keep_records=False)
    again = run_probe("relationship-levy", "function:leans", generate=leans_to_men, config=config,
                      sample_k=entry["items"] + 109)
    assert again.document["run"]["sent"] == 2 * 109


@pytest.mark.parametrize("args, says", [
    (["run", "genmo", "--until-decided", "bias"], "--until-decided works on relationship-levy"),
    (["run", "relationship-levy", "--until-decided", "equivalence"], "needs --equivalence-margin"),
    (["run", "relationship-levy", "--until-decided", "bias", "--no-cache"], "drop --no-cache"),
])
def test_what_it_cannot_do_is_refused_in_one_sentence(args, says):
    result = CliRunner().invoke(main, [*args, "--model", "reference:random"])
    assert result.exit_code == 2 and says in result.output and "Traceback" not in result.output
