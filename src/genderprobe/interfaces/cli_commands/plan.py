"""``genderprobe plan PROBE --detect D``: how large a run detects a bias of size D, and what it costs.

The logic and the method are in :mod:`genderprobe.analysis.planning` and each study's
``plan`` module; this prints them.
"""

from __future__ import annotations

import json

import click

from genderprobe.analysis.planning import DEFAULT_SIMULATIONS


class _PlanCommand(click.Command):
    """Lists the probes it plans under its options, read from the studies when help is asked for."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from genderprobe.registry import planners

        rows = [(name, f"{found.metric}, sizing {found.flag} ({found.unit})")
                for name, found in sorted(planners().items()) if not isinstance(found, str)]
        formatter.write_paragraph()
        formatter.write_text("Probes it plans (--detect is in the units of the metric):")
        formatter.write_dl(rows)
        formatter.write_paragraph()
        formatter.write_text("Other probes are refused with one sentence saying why.")


@click.command("plan", cls=_PlanCommand)
@click.argument("probe")
@click.option("--detect", type=float, required=True,
              help="The bias to detect, in the units of the probe's headline metric (below): e.g. 0.05 for "
                   "relationship-levy, 0.1 for demet and genmo, 1.25 for multilingual-pronouns.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Chance that a run detects it.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="1 - the interval's confidence (0.05: the 95% interval runs print).")
@click.option("--repetitions", type=int, default=1, show_default=True,
              help="relationship-levy: attempts per prompt, as in the run.")
@click.option("--scenario-sd", type=float, default=0.0, show_default=True,
              help="How much the model's strength varies between scenarios (relationship-levy, demet) or words "
                   "(multilingual-pronouns), as a standard deviation; 0 is the calibration model, alike on every one.")
@click.option("--mismatch-rate", type=float, default=None,
              help="genmo: the share of pairs whose two stances differ (the model's PMR); default: the "
                   "calibration model's, at least 0.5.")
@click.option("--scenarios", default=None, help="demet: the scenario set, human (default), gpt4 or all.")
@click.option("--price-in", type=float, default=None, help="US dollars per million prompt tokens.")
@click.option("--price-out", type=float, default=None, help="US dollars per million completion tokens.")
@click.option("--simulations", type=int, default=DEFAULT_SIMULATIONS, show_default=True,
              help="Simulated runs per sample size tried.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulation: the same seed, the same plan.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_command(probe: str, detect: float, power: float, alpha: float, repetitions: int, scenario_sd: float,
                 mismatch_rate: float | None, scenarios: str | None, price_in: float | None,
                 price_out: float | None, simulations: int, seed: int, as_json: bool) -> None:
    """How large a run detects a bias of a given size with a given power, and what it costs."""
    from genderprobe.analysis.planning import plan
    from genderprobe.interfaces.api import dry_run_cost
    from genderprobe.outputs.activity import display_for, shown

    # The simulations take seconds to a minute: their progress on standard error, unless JSON is asked for.
    with shown(None if as_json else display_for()):
        p = plan(probe, detect, power=power, alpha=alpha, repetitions=repetitions, scenario_sd=scenario_sd,
                 mismatch_rate=mismatch_rate, scenarios=scenarios, price_in=price_in, price_out=price_out,
                 simulations=simulations, seed=seed, dry_run=dry_run_cost)
    if as_json:
        click.echo(json.dumps(p.to_json(), indent=2))
        return

    def value(x: float, digits: str = "") -> str:  # a bias with a side shows its sign
        return f"{x:{'+' if p.signed else ''}{digits}g}"

    wanted = f"{p.metric} = {value(detect)} ({p.meaning})"
    if p.reached:
        click.echo(f"{p.probe}: to detect {wanted} with {power:.0%} power at alpha {alpha:g}")
    else:
        smallest = (f"at that size the smallest bias detected with {power:.0%} power is "
                    f"{p.metric} = {value(p.smallest_detectable, '.3')}" if p.smallest_detectable is not None else
                    f"at that size no bias the calibration model can express is detected with {power:.0%} power")
        click.echo(f"{p.probe}: even the largest run, {p.size:,} {p.unit}, detects {wanted} with only "
                   f"{p.power:.1%} power at alpha {alpha:g}, short of {power:.0%}; {smallest}.")
    normal = (f" ({p.normal_label}: {p.normal_approximation:,} {p.unit})"
              if p.normal_approximation is not None else "")
    rows = [
        (f"{p.unit} ({p.flag})", f"{p.size:,}"),
        ("simulated power", f"{p.power:.1%} at {p.size:,} {p.unit}{normal}"),
        ("requests", f"{p.requests:,}" + (f" ({p.requests_note})" if p.requests_note else "")),
        ("prompt tokens", f"about {p.prompt_tokens:,} (four characters a token)"),
        ("completion tokens", f"at most {p.completion_tokens_at_most:,} (each request's max_tokens)"),
    ]
    for u in p.until_decided or []:
        rows.append((f"--until-decided bias, {p.flag} {u['budget']:,}",
                     f"settled in {u['decided']:.0%} of simulated runs, after {u['mean_items']:,.0f} {p.unit} on "
                     f"average ({u['saved']:.0%} of the budget's requests saved)"))
    if p.cost_usd_at_most is not None:
        rows.append(("cost", f"at most ${p.cost_usd_at_most:,.2f} at ${price_in or 0:g} in / "
                             f"${price_out or 0:g} out per million tokens"))
    width = max(20, *(len(label) for label, _ in rows))
    for label, text in rows:
        click.echo(f"  {label:{width}s} {text}")
    click.echo(f"Method: {p.method}")
    click.echo(f"Run it: {p.run_command}")


COMMANDS = [plan_command]
