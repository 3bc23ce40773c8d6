"""``genderprobe plan PROBE --detect D``: how many items a run needs to detect a bias of size D.

The logic and the method are in :mod:`genderprobe.planning`; this prints them.
"""

from __future__ import annotations

import json

import click

from genderprobe.planning import DEFAULT_SIMULATIONS


@click.command("plan")
@click.argument("probe")
@click.option("--detect", type=float, required=True,
              help="The bias to detect, in the headline's units (relationship-levy: diff_success_rate, e.g. 0.05).")
@click.option("--power", type=float, default=0.8, show_default=True, help="Chance that a run detects it.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="1 - the interval's confidence (0.05: the 95% interval runs print).")
@click.option("--repetitions", type=int, default=1, show_default=True, help="Attempts per prompt, as in the run.")
@click.option("--scenario-sd", type=float, default=0.0, show_default=True,
              help="How much the model's strength varies between scenarios (standard deviation); 0 is the "
                   "calibration model, alike on every scenario.")
@click.option("--price-in", type=float, default=None, help="US dollars per million prompt tokens.")
@click.option("--price-out", type=float, default=None, help="US dollars per million completion tokens.")
@click.option("--simulations", type=int, default=DEFAULT_SIMULATIONS, show_default=True,
              help="Simulated runs per sample size tried.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulation: the same seed, the same plan.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_command(probe: str, detect: float, power: float, alpha: float, repetitions: int, scenario_sd: float,
                 price_in: float | None, price_out: float | None, simulations: int, seed: int, as_json: bool) -> None:
    """How many items detect a bias of a given size with a given power, and what the run costs."""
    from genderprobe.planning import plan

    p = plan(probe, detect, power=power, alpha=alpha, repetitions=repetitions, scenario_sd=scenario_sd,
             price_in=price_in, price_out=price_out, simulations=simulations, seed=seed)
    if as_json:
        click.echo(json.dumps(p.to_json(), indent=2))
        return
    side = "the man" if detect > 0 else "the woman"
    click.echo(f"{p.probe}: to detect {p.metric} = {detect:+g} ({side} judged right "
               f"{(1 + abs(detect)) / 2:.1%} of the time) with {power:.0%} power at alpha {alpha:g}")
    rows = [
        ("items (--sample-k)", f"{p.items:,}"),
        ("simulated power", f"{p.power:.1%} at {p.items:,} items (normal approximation: "
                            f"{p.normal_approximation_items:,} items)"),
        ("requests", f"{p.requests:,} (both orders x {p.repetitions} repetition{'s' if p.repetitions > 1 else ''})"),
        ("prompt tokens", f"about {p.prompt_tokens:,} (four characters a token)"),
        ("completion tokens", f"at most {p.completion_tokens_at_most:,} (each request's max_tokens)"),
    ]
    if p.cost_usd_at_most is not None:
        rows.append(("cost", f"at most ${p.cost_usd_at_most:,.2f} at ${price_in or 0:g} in / "
                             f"${price_out or 0:g} out per million tokens"))
    for label, value in rows:
        click.echo(f"  {label:20s} {value}")
    click.echo(f"Method: {p.method} Halving the interval's width takes about 4x the items.")
    click.echo(f"Run it: genderprobe run {p.probe} --sample-k {p.items}"
               + (f" --repetitions {p.repetitions}" if p.repetitions > 1 else "") + " --model SPEC")


COMMANDS = [plan_command]
