"""genderprobe plan: items to detect a bias, checked against the calibration models it simulates."""

import json

import pytest
from click.testing import CliRunner

from genderprobe.api import RunConfig, run_probe
from genderprobe.cli import main
from genderprobe.planning import interval_halving, plan, simulated_power

FAST = {"simulations": 200, "resamples": 500}


def invoke(*args):
    return CliRunner().invoke(main, ["plan", *args])


def test_a_large_effect_needs_fewer_items_than_a_small_one():
    large, small = plan("relationship-levy", 0.2, **FAST), plan("relationship-levy", 0.05, **FAST)
    assert large.items < small.items
    # Width ~ 1/sqrt(n): a quarter of the effect takes about sixteen times the items.
    assert 10 < small.items / large.items < 25


def test_simulated_power_at_the_plan_reaches_the_target():
    p = plan("relationship-levy", 0.1, power=0.8, seed=7, **FAST)
    assert p.power >= 0.8
    assert simulated_power(p.items, 0.55, 0.05, 1, seed=7, **FAST) == p.power  # the same seed, the same plan
    assert p.requests == 2 * p.items and p.calibration_model == "reference:biased?p=0.55"


def test_the_simulation_agrees_with_real_runs_of_the_calibration_model():
    """Real runs of relationship-levy on reference:biased?p=0.6 at the planned items detect the bias
    about as often as planned (60 seeds: within 0.12 of 80%)."""
    p = plan("relationship-levy", 0.2, **FAST)
    detected = 0
    for seed in range(60):
        config = RunConfig(use_cache=False, keep_records=False, seed=seed, n_resamples=500, generation={"seed": seed})
        d = run_probe("relationship-levy", "reference:biased?p=0.6", config=config, sample_k=p.items)
        detected += d.result.metrics["diff_success_rate"].ci_low > 0
    assert abs(detected / 60 - 0.8) <= 0.12


def test_repetitions_and_prices_reach_requests_and_cost():
    p = plan("relationship-levy", 0.1, repetitions=2, price_in=1.0, price_out=2.0, **FAST)
    assert p.requests == 4 * p.items
    assert p.cost_usd_at_most == pytest.approx((p.prompt_tokens * 1.0 + p.completion_tokens_at_most * 2.0) / 1e6, abs=1e-5)


def test_the_command_prints_the_plan_and_its_method():
    result = invoke("relationship-levy", "--detect", "0.2", "--simulations", "200", "--price-in", "0.15",
                    "--price-out", "0.6")
    assert result.exit_code == 0, result.output
    assert "items (--sample-k)" in result.output and "simulated power" in result.output
    assert "Method: 200 simulated runs of reference:biased?p=0.6" in result.output and "4x the items" in result.output
    doc = json.loads(invoke("relationship-levy", "--detect", "0.2", "--simulations", "200", "--json").output)
    assert doc["items"] > 0 and doc["power"] >= 0.8


@pytest.mark.parametrize("args", [
    ("relationship-levy", "--detect", "0"), ("relationship-levy", "--detect", "1"),
    ("relationship-levy", "--detect", "0.1", "--power", "1.2"), ("relationship-levy", "--detect", "0.1", "--alpha", "0"),
    ("relationship-levy", "--detect", "0.1", "--repetitions", "0"),
    ("relationship-levy", "--detect", "0.1", "--price-in", "-1"),
    ("relationship-levy", "--detect", "0.1", "--scenario-sd", "0.6"),
    ("genmo", "--detect", "0.1"), ("no-such-probe", "--detect", "0.1"),
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
