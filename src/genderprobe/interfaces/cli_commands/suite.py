"""``genderprobe suite``: many probes on many models, one folder, one report.

    genderprobe suite --model openai:gpt-4o-mini --model reference:unbiased --out suites/first
    genderprobe suite nightly.toml --out suites/nightly --fail-on-mark C

The folder, the suite file and resuming are described in :mod:`genderprobe.interfaces.suite`
and docs/suites.md; the report in :mod:`genderprobe.outputs.report.suite_report`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from genderprobe.errors import UserError

# Run options the suite takes in its own way (several models, a suite file, a folder of
# runs) or not at all (one run's JSON on standard output, one run's dataset export).
_OWN = ("model", "out_dir", "config_file", "as_json", "export")


def _suite(suite_file: Path | None, models: tuple[str, ...], probes: str | None, out_dir: Path,
           config_file: Path | None, preset: str | None, **opts: Any) -> None:
    """Run every probe on every model into one folder, then write its report."""
    from rich.text import Text

    from genderprobe.analysis.mark_gate import check_threshold, enforce
    from genderprobe.engine.dry_run import dry_run_lines, suite_dry_run_lines
    from genderprobe.interfaces import suite as suites
    from genderprobe.interfaces.cli import (
        _run_config,
        _terminate_as_interrupt,
        common_defaults,
    )
    from genderprobe.outputs.activity import display_for, shown
    from genderprobe.outputs.records import records_beside
    from genderprobe.outputs.report import compare, genderbench_card, suite_report
    from genderprobe.outputs.report.compare import Entry
    from genderprobe.outputs.report.leaderboard import print_leaderboard
    from genderprobe.outputs.report.secrets import redact
    from genderprobe.outputs.suite_terminal import print_card, run_outcome
    from genderprobe.outputs.terminal import Progress, output_console
    from genderprobe.steps import step

    if suite_file and config_file and suite_file != config_file:
        raise UserError("Give the suite file once, as an argument or with --config, not both.")
    if preset and (suite_file or config_file):
        raise UserError("A preset is a suite file: give --preset or a suite file, not both.")
    gate = check_threshold(opts["fail_on_mark"]) if opts["fail_on_mark"] else None  # before anything is paid for
    path = suite_file or config_file
    if preset:
        spec, file_config = suites.load_preset(preset)
    else:
        spec, file_config = suites.load_suite_file(path) if path else (suites.SuiteSpec(), None)
    # Flags win over the suite file; the file wins over the flags' defaults.
    seed_given = click.get_current_context().get_parameter_source("seed") is not ParameterSource.DEFAULT
    run_opts = {**common_defaults(), **opts, "model": None, "judge": opts["judge"] or spec.judge,
                "seed": opts["seed"] if seed_given or spec.seed is None else spec.seed, "config_file": None}
    if file_config is not None:
        run_opts["file_config"] = file_config
    config = _run_config(run_opts)
    names = [p.strip() for p in probes.split(",") if p.strip()] if probes else spec.probes
    suite = suites.plan(list(models) or spec.models, names or suites.default_probes(bool(config.judge)),
                        spec.parameters, config, out_dir, every_probe=not names)

    quiet = opts["quiet"]
    if not quiet:
        for line in suite.left_out:
            click.echo(line)
    estimates: list[dict[str, Any]] = []

    def told(run: suites.SuiteRun, out: Any) -> None:
        if out is not None and config.dry_run:
            estimates.append(out.document)
            if not quiet:
                for line in dry_run_lines(out.document)[:-1]:  # the note once, under the total
                    click.echo(line)
            return
        if quiet:
            return
        line = Text(f"[{suite.runs.index(run) + 1}/{len(suite.runs)}] {run.probe.name} on {run.model}: ")
        if run.skipped:
            line.append(f"done before, skipped ({run.results})")
        elif run.status == "failed":
            line.append(f"failed: {run.error}")
        else:
            line.append_text(run_outcome(out.document))  # the marks as the run's verdict has them
        output_console().print(line, highlight=False, soft_wrap=True)

    with _terminate_as_interrupt():
        suites.run(suite, on_run=told, progress=None if quiet else Progress)
    if config.dry_run:
        if estimates:
            for line in suite_dry_run_lines(estimates):
                click.echo(line)
        return
    # After the runs (each shows its own status): the report and the comparison, which take seconds.
    console = output_console()
    with shown(None if quiet else display_for()):
        with step("writing the suite's report"):
            report = suite_report.write(suite.out)
        docs = suites.documents(suite)
        if not quiet and docs:
            # Each run with its records, so runs of one probe are compared item by item.
            with step(f"comparing the suite's {len(docs)} runs"):
                compared = compare([(doc, run.results, records_beside(suite.out / run.results, doc))
                                    for run, doc in docs])
            print_leaderboard(compared, console)
    if not quiet:
        click.echo(f"Suite: {suite.out / suites.SUITE_JSON}")
        click.echo(f"Report: {report}")
        if genderbench_card.shown(suite.probes):  # the card last, where it is read first
            entries = {run.results: Entry(doc, run.results) for run, doc in docs}
            print_card(genderbench_card.model_rows(redact(suites.manifest(suite)), entries), console)
    suites.raise_failures(suite)
    if gate:
        enforce([(f"{run.probe.name} on {run.model}", doc) for run, doc in docs], gate)


def _command() -> click.Command:
    from genderprobe.interfaces.cli import EXIT_CODES_HELP, common_options
    from genderprobe.interfaces.suite import presets

    command = click.Command(
        "suite",
        callback=_suite,
        help="Run every chosen probe on every model into one folder (one run each, as 'genderprobe run --out' "
             "writes it, and suite.json), then write one report of them all: an overview of marks and headline "
             "numbers, each probe's section and a leaderboard. Run it again to continue where it stopped: finished "
             "runs are skipped and stored answers are not asked again.",
        short_help="Many probes on many models: one folder, one report.",
        epilog=EXIT_CODES_HELP,
    )
    command.params += [
        click.Argument(["suite_file"], required=False, type=click.Path(dir_okay=False, path_type=Path)),
        click.Option(["--model", "-m", "models"], multiple=True,
                     help="Model spec; repeat for each model (default: the suite file's [suite] models)."),
        click.Option(["--probes"], default=None,
                     help="Comma-separated probes (default: the suite file's, else every probe; "
                          "probes that need a judge only with --judge)."),
        click.Option(["--out", "out_dir"], required=True, type=click.Path(file_okay=False, path_type=Path),
                     help="Folder of the suite: suite.json, report.html and a folder per model and probe."),
        click.Option(["--config", "config_file"], type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Suite file (TOML): [suite], [probes.NAME] and a config file's sections; flags win."),
        click.Option(["--preset"], type=click.Choice(presets()), default=None,
                     help="A packaged suite file: genderbench is GenderBench 0.5.0's DefaultHarness (its 14 probes, "
                          "sample sizes, repetitions and seed); its report carries GenderBench's report card. "
                          "classic is the field's classic benchmarks (winobias, winogender, crows-pairs, stereoset) at "
                          "their defaults. "
                          "Flags win, as over a suite file."),
    ]
    command.params += [p for p in common_options() if p.name not in _OWN]
    return command


COMMANDS = [_command()]
