"""--until-decided: runs that stop when an anytime-valid confidence sequence settles the question (issue 31)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from genderprobe.analysis.sequential import (
    DESIGNS,
    confidence_sequence,
    rounds,
    simulate,
    simulate_genmo,
)
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


def test_scenarios_of_opposite_bias_in_a_cycle_claim_no_bias():
    # The first 54 scenarios always side with the man, the last 54 never: no bias over the 109 (issue 48).
    # Inside a cycle the sequence aimed at the scenarios asked so far, and intersecting every item's bounds
    # claimed a bias in every run; read at the ends of whole cycles it holds the mean of all 109.
    strengths = np.r_[np.ones(54), 0.5, np.zeros(54)]
    assert all(v is None for _, v in simulate(strengths, 1000, "bias", runs=20, seed=4))
    low, high = confidence_sequence(np.tile(strengths, 3))
    assert np.all(low[:108] == 0) and np.all(high[:108] == 1) and low[108] <= 0.5 <= high[108]
    assert (low[109:217] == low[108]).all()  # between cycle ends: the last end's bound


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


def test_the_results_file_holds_the_verdict_and_warns_that_fixed_size_intervals_do_not_hold_after_stopping(tmp_path):
    # The last round's results were written before the verdict joined them: results.json (and the report
    # built from it) said nothing of the early stop, and its 95% intervals read as if the size were fixed.
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "relationship-levy", "--model", "reference:biased?p=0.6",
                                       "--until-decided", "bias", "--cache-dir", str(tmp_path / "store"),
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    entry = saved["until_decided"]
    assert entry["decided"] and entry["items"] < entry["budget"] == 3000
    assert saved["counts"]["items"] == entry["items"]
    lo, hi = entry["confidence_sequence"]
    warning = [w for w in saved["warnings"] if w.startswith("This run stopped after")]
    assert warning and f"[{lo:.3f}, {hi:.3f}]" in warning[0]
    assert "This run stopped after" in " ".join(result.output.split())
    # A run that spent its whole budget was read at the size fixed in advance: no warning.
    whole = run_probe("relationship-levy", "reference:random", sample_k=218,
                      config=RunConfig(cache_dir=tmp_path / "store", until_decided="bias", keep_records=False))
    assert not whole.document["until_decided"]["decided"]
    assert not any(w.startswith("This run stopped after") for w in whole.document["warnings"])


@pytest.mark.parametrize("args, says", [
    (["run", "demet", "--until-decided", "bias"], "--until-decided works on relationship-levy and genmo"),
    (["run", "relationship-levy", "--until-decided", "equivalence"], "needs --equivalence-margin"),
    (["run", "relationship-levy", "--until-decided", "bias", "--no-cache"], "drop --no-cache"),
])
def test_what_it_cannot_do_is_refused_in_one_sentence(args, says):
    result = CliRunner().invoke(main, [*args, "--model", "reference:random"])
    assert result.exit_code == 2 and says in result.output and "Traceback" not in result.output


# -- genmo: fbr_minus_half, a mismatched pair's female_favoured in the order its pairs are drawn ----------


def _genmo_leaning(share_to_men: float):
    """A function model whose GenMO stances judge the man's story Moral and the woman's Immoral
    ``share_to_men`` of the time (each story alone, so pairs mismatch about half the time)."""
    from genderprobe.studies.genmo.dataset import story_pairs
    from genderprobe.studies.genmo.stance import COT_TEMPLATE, IMMORAL, MORAL, stance_answer

    male = {p.story("male") for p in story_pairs()}
    rng = np.random.default_rng(0)

    def answer(prompts):
        out = []
        for prompt in prompts:
            is_man = prompt.removesuffix(" " + COT_TEMPLATE) in male
            sides = rng.random() < share_to_men
            out.append(stance_answer(MORAL if is_man == sides else IMMORAL, "cot"))
        return out

    return answer


def test_genmo_stops_when_decided_and_tells_its_pairs(tmp_path, capsys):
    from genderprobe.outputs.terminal import print_results

    config = RunConfig(cache_dir=tmp_path, until_decided="bias", keep_records=False)
    out = run_probe("genmo", "reference:biased", config=config)  # the man's action Moral, the woman's Immoral
    entry = out.document["until_decided"]
    assert entry["decided"] and entry["verdict"] == "biased: fbr_minus_half below 0"
    assert entry["items"] == 100 and entry["budget"] == 907 and out.document["counts"]["pairs"] == 100
    assert entry["requests_saved"] == 2 * (907 - 100) and entry["confidence_sequence"][1] < 0
    assert entry["metric"] == "fbr_minus_half" and out.result.metrics["fbr_minus_half"].value == -0.5
    print_results(out.document)
    assert ("Until decided (bias): biased: fbr_minus_half below 0 after 100 of 907 pairs, 1,614 requests saved; "
            "95% confidence sequence of fbr_minus_half") in " ".join(capsys.readouterr().out.split())
    # Both templates: a pair costs four requests, and the headline is CoT's.
    both = run_probe("genmo", "reference:biased", config=config, template="both", sample_k=300)
    assert both.document["until_decided"]["requests_saved"] == 4 * (300 - 100)
    # A model that never mismatches gives the sequence nothing: it is never settled, and runs the budget.
    config = RunConfig(cache_dir=tmp_path, until_decided="equivalence", equivalence_margin=0.1, keep_records=False)
    none = run_probe("genmo", "reference:unbiased", config=config, sample_k=300).document["until_decided"]
    assert not none["decided"] and none["items"] == 300 and none["requests_saved"] == 0


def test_genmo_reads_its_pairs_in_the_order_drawn_so_a_round_extends_the_last(tmp_path):
    # The values of 100 pairs are the first 100 of those of 157 (the next round): new pairs come after
    # the old. Read in dataset order (as selected_pairs lists them) they would not be.
    from genderprobe.studies.genmo.probe import Genmo

    design, model = DESIGNS["genmo"], _genmo_leaning(0.7)
    config = RunConfig(cache_dir=tmp_path, seed=3)
    values, dataset_order = {}, {}
    for k in (100, 157):
        out = run_probe("genmo", "function:leaning", generate=model, config=config, sample_k=k)
        values[k] = design.values(Genmo(sample_k=k), out, k, 3)
        found = {int(i): (n if d else np.nan) for i, n, d in zip(*_female_favoured(out))}
        dataset_order[k] = np.array([found[i] for i in sorted(found)])
    assert np.isfinite(values[157]).sum() > 30  # mismatches to read
    assert np.array_equal(values[157][:100], values[100], equal_nan=True)
    assert not np.array_equal(dataset_order[157][:100], dataset_order[100], equal_nan=True)
    # A run whose pairs are not the first k of the permutation is refused, not misread.
    with pytest.raises(RuntimeError, match="first sample_k"):
        design.values(Genmo(sample_k=157), out, 157, 4)


def _female_favoured(out):
    from genderprobe.studies.genmo.paired import item_scores

    found = item_scores(out.records, out.document["parameters"]["probe"])["fbr_minus_half"]
    return found.items, found.num, found.den


def test_genmo_stores_every_round_so_a_larger_run_asks_only_the_new_pairs(tmp_path):
    config = RunConfig(cache_dir=tmp_path, until_decided="bias", keep_records=False)
    out = run_probe("genmo", "function:leaning", generate=_genmo_leaning(0.9), config=config)
    entry = out.document["until_decided"]
    assert entry["decided"] and entry["verdict"] == "biased: fbr_minus_half below 0" and entry["items"] < 907
    assert [r["items"] for r in entry["rounds"]] == DESIGNS["genmo"].rounds(907)[: len(entry["rounds"])]
    again = run_probe("genmo", "function:leaning", generate=_genmo_leaning(0.9),
                      config=RunConfig(cache_dir=tmp_path, keep_records=False), sample_k=entry["items"] + 50)
    assert again.document["run"]["sent"] == 2 * 50


def test_genmo_decisions_keep_their_error_rates_without_replacement():
    # Pairs drawn without replacement from a finite population whose FBR is exactly the truth.
    unbiased = simulate_genmo(0.5, 0.6, 907, "bias", runs=300, seed=1)
    assert np.mean([v is not None for _, v in unbiased]) <= 0.05
    biased = simulate_genmo(0.75, 0.6, 907, "bias", runs=300, seed=2)
    assert all(v == "biased: fbr_minus_half above 0" for _, v in biased)
    assert np.mean([k for k, _ in biased]) < 0.25 * 907
    at_margin = simulate_genmo(0.6, 0.6, 907, "equivalence", 0.1, runs=300, seed=3)
    assert np.mean([v == "within +-0.1" for _, v in at_margin]) <= 0.05
    assert DESIGNS["genmo"].rounds(907) == [100, 125, 157, 197, 247, 309, 387, 484, 605, 757, 907]


@pytest.mark.parametrize("args, says", [
    (["run", "genmo", "--until-decided", "mark"],
     "--until-decided mark reads GenderBench's mark ranges, which genmo's fbr_minus_half has none of; "
     "ask bias or equivalence."),
    (["run", "genmo", "--until-decided", "bias", "--ablation", "names"],
     "--until-decided on genmo reads the main run's stances alone; drop --ablation"),
])
def test_what_genmo_cannot_do_is_refused_in_one_sentence(args, says):
    result = CliRunner().invoke(main, [*args, "--model", "reference:random"])
    assert result.exit_code == 2 and says in " ".join(result.output.split()) and "Traceback" not in result.output
