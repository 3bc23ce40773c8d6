"""The ``genderprobe`` command line.

``genderprobe run PROBE`` has one subcommand per probe, built from the probe's
``Params`` dataclass, so a new probe needs no change here. Other commands live
in :mod:`genderprobe.interfaces.cli_commands`, one module each, and in each study's
``commands`` (found by :mod:`genderprobe.registry`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import signal
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from genderprobe.analysis.mark_gate import MarkGateFailed, check_threshold, enforce
from genderprobe.contract import Probe
from genderprobe.errors import RunFailed, UserError
from genderprobe.interfaces.arguments import refuse_non_utf8
from genderprobe.interfaces.userfiles import read_user_text
from genderprobe.models import BACKENDS, ModelOptions
from genderprobe.registry import all_probes, find_probe
from genderprobe.version import __version__

EXIT_CODES_HELP = (
    "Exit codes: 0 done; 1 the run failed at run time (server unreachable, failed requests above --max-error-rate, "
    "more than half the answers empty, store locked): answers received are kept, run again later; 2 bad input or usage: fix the command; "
    "3 a mark is worse than --fail-on-mark (results written); 130 interrupted."
)


class _Group(click.Group):
    """Turns user errors into one sentence, never a traceback: exit 2 for bad
    input, 1 for a run that failed at run time (answers kept, try again)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            refuse_non_utf8(ctx.args)
            return super().invoke(ctx)
        except MarkGateFailed as exc:
            click.secho(f"Error: {exc}", err=True, fg="red")
            ctx.exit(3)
        except RunFailed as exc:
            click.secho(f"Error: {exc}", err=True, fg="red")
            ctx.exit(1)
        except UserError as exc:
            click.secho(f"Error: {exc}", err=True, fg="red")
            ctx.exit(2)
        except KeyboardInterrupt as exc:
            # The runner's Interrupted says what became of the requests in flight.
            click.secho(str(exc) or "Interrupted: answers received so far are in the store; run again to resume.",
                        err=True)
            ctx.exit(130)


# The commands defined in other modules (each module's COMMANDS): name -> (module, the line
# `genderprobe --help` shows for it). They are imported when asked for, so that neither `--help` nor a
# run imports them (jinja2, the report, the suite, a study's tools); tests/harness/test_cli.py holds this
# table to the modules.
ELSEWHERE: dict[str, tuple[str, str]] = {
    "answers": ("genderprobe.interfaces.cli_commands.answers",
                "Write every answer of the runs (run folders or results files) as JSON lines: each record of the "
                "run's records file, with how the report reads it under \"read\"."),
    "bws": ("genderprobe.studies.fifty_shades.commands",
            "Best-Worst Scaling: make 4-tuples, score annotations, check their reliability."),
    "cache": ("genderprobe.interfaces.cli_commands.cache", "Look into, empty or export the response store."),
    "check": ("genderprobe.interfaces.cli_commands.check",
              "One cheap request to each model, and a store write, before a run."),
    "compare": ("genderprobe.interfaces.cli_commands.report",
                "Rank several runs side by side and test each headline difference between them (paired over "
                "items where two runs asked the same ones): here, and in HTML with -o."),
    "fifty-shades": ("genderprobe.studies.fifty_shades.commands",
                     "Fifty Shades of Bias tools (the judge probe is 'genderprobe run fifty-shades')."),
    "judge": ("genderprobe.studies.fifty_shades.commands",
              "Rate how gender-biased each sentence of FILE is (0-1), with the Fifty Shades judge."),
    "paper": ("genderprobe.interfaces.cli_commands.paper",
              "Show the result tables the probe's paper publishes, with a run's row beside them."),
    "plan": ("genderprobe.interfaces.cli_commands.plan",
             "How large a run detects a bias of a given size with a given power, and what it costs."),
    "report": ("genderprobe.interfaces.cli_commands.report",
               "Write a self-contained HTML report of one or more results files (or run folders)."),
    "suite": ("genderprobe.interfaces.cli_commands.suite", "Many probes on many models: one folder, one report."),
}


class _MainGroup(_Group):
    """The top-level group: its own commands, and those of :data:`ELSEWHERE` imported when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *ELSEWHERE})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in ELSEWHERE:
            module = importlib.import_module(ELSEWHERE[name][0])
            for command in module.COMMANDS:
                self.commands.setdefault(command.name, command)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of commands, without importing those defined elsewhere to read their help."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, self.commands[name].get_short_help_str(limit) if name in self.commands
                 else click.utils.make_default_short_help(ELSEWHERE[name][1], limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_MainGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="genderprobe")
def main() -> None:
    """Measure gender bias in large language models."""


@main.command("probes")
def list_probes() -> None:
    """List the probes with a line each; a plugin's probes name their distribution."""
    from genderprobe.registry import probe_distribution

    for name, cls in all_probes().items():
        distribution = probe_distribution(name)
        click.echo(f"{name:24s} {cls.summary}" + (f"  [plugin from {distribution}]" if distribution else ""))


@main.command("models")
def list_models() -> None:
    """List the model backends (a plugin's name their distribution) and the reference (calibration) models."""
    from genderprobe.models import plugin_descriptions
    from genderprobe.models.reference import PERSONAS

    for prefix, (_, what) in BACKENDS.items():
        click.echo(f"{prefix + ':':12s} {what}")
    for prefix, (what, distribution) in plugin_descriptions().items():
        click.echo(f"{prefix + ':':12s} {what}  [plugin from {distribution}]")
    click.echo("")
    for persona, what in PERSONAS.items():
        click.echo(f"reference:{persona:14s} {what}")


class _ProbeGroup(_Group):
    """``genderprobe run PROBE``: a subcommand per probe, built when it is asked
    for, so that ``genderprobe --help`` imports no study."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(all_probes())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        probe_cls = find_probe(name)
        return _probe_command(probe_cls) if probe_cls else None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0])
        if not name.startswith("-") and find_probe(name) is None:
            import difflib

            close = difflib.get_close_matches(name, list(all_probes()), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else "."
            ctx.fail(f"Unknown probe '{name}'{hint} 'genderprobe probes' lists them.")
        return super().resolve_command(ctx, args)


@main.group("run", cls=_ProbeGroup, epilog=EXIT_CODES_HELP)
def run_group() -> None:
    """Run a probe on a model: genderprobe run PROBE --model SPEC."""


# -- common run options ---------------------------------------------------------

_COMMON = [
    click.option("--model", "-m", "model", required=True, help="Model spec, e.g. openai:gpt-4o-mini or reference:random."),
    click.option("--judge", default=None, help="Judge model spec, for probes that need one."),
    click.option("--judge-base-url", default=None,
                 help="API base URL of the judge models (default: the tested model's; config [judge] base_url)."),
    click.option("--judge-api-key-env", default=None,
                 help="Environment variable holding the judge's API key (default: the tested model's)."),
    click.option("--checker", default=None, help="Model spec that checks the judge's labels (default: the judge)."),
    click.option("--reader-judge", default=None,
                 help="Model spec that reads the closed-choice answers the rules cannot (a deviation from the papers)."),
    click.option("--reader-judge-sample", type=int, default=100, show_default=True,
                 help="Answers the rules read that are also sent to the reader judge, to measure its agreement."),
    click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                 help="Folder for results.json and records.jsonl."),
    click.option("--seed", type=int, default=0, show_default=True, help="Seed for sampling items and bootstrap."),
    click.option("--temperature", type=float, default=None, help="Sampling temperature (default: the probe's)."),
    click.option("--top-p", type=float, default=None, help="Nucleus sampling top_p."),
    click.option("--max-tokens", type=int, default=None, help="Maximum tokens per answer."),
    click.option("--generation-seed", type=int, default=None, help="Seed sent to backends that take one."),
    click.option("--system-prompt", default=None, help="System prompt sent before every prompt."),
    click.option("--reasoning-effort", type=click.Choice(["minimal", "low", "medium", "high"]), default=None,
                 help="How long a reasoning model thinks (sent as reasoning_effort)."),
    click.option("--base-url", default=None, help="API base URL (default: OPENAI_BASE_URL or the provider's)."),
    click.option("--api-key-env", default=None, help="Environment variable holding the API key."),
    click.option("--timeout", type=float, default=None, help="Seconds per request [default: 60]."),
    click.option("--concurrency", type=int, default=None, help="Most requests in flight at once [default: 8]."),
    click.option("--max-requests", type=int, default=None,
                 help="Most requests a run may send to a model; above it the run stops before building its "
                      "prompts [default: 40,000,000]."),
    click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                 help="Answer requests in this process or on Ray workers."),
    click.option("--ray-address", default=None, help="Ray cluster to join (default: RAY_ADDRESS, else a local instance)."),
    click.option("--ray-workers", type=int, default=None, help="Ray workers (default: one per GPU, or per CPU)."),
    click.option("--rpm", type=float, default=None, help="Requests-per-minute limit [default: none]."),
    click.option("--tpm", type=float, default=None, help="Tokens-per-minute limit [default: none]."),
    click.option("--max-retries", type=int, default=None, help="Retries per request for transient failures [default: 6]."),
    click.option("--max-retry-wait", type=float, default=None, help="Longest Retry-After waited out, in seconds; a longer one stops the run [default: 300]."),
    click.option("--max-error-rate", type=float, default=None,
                 help="Share of requests that may fail after retries before the run fails [default: 0.03]."),
    click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
                 help="TOML file with [generation], [model] and [run] settings (default: GENDERPROBE_CONFIG); flags win."),
    click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                 help="Response store folder (default: GENDERPROBE_CACHE_DIR or ~/.cache/genderprobe)."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the response store."),
    click.option("--cache-max-age", default=None,
                 help="Ask again for stored answers older than this: seconds, or 90m, 12h, 30d [default: never]."),
    click.option("--keep-empty", is_flag=True, default=None,
                 help="Take stored empty answers as they are (lost answers) instead of asking once more; a "
                      "reread with another --reader then sends nothing."),
    click.option("--batch", is_flag=True, default=None,
                 help="Send through the provider's batch API (openai:, anthropic:): half the price, answers within 24 h."),
    click.option("--price-in", type=float, default=None, help="US dollars per million prompt tokens, for the run's cost."),
    click.option("--price-out", type=float, default=None, help="US dollars per million answer tokens, for the run's cost."),
    click.option("--dry-run", is_flag=True,
                 help="Count the requests, those already stored and the estimated tokens and cost; send nothing."),
    click.option("--resamples", type=int, default=1000, show_default=True, help="Bootstrap resamples."),
    click.option("--until-decided", type=click.Choice(["bias", "mark", "equivalence"]), default=None,
                 help="relationship-levy, genmo: ask in rounds and stop as soon as an anytime-valid confidence "
                      "sequence settles the question (a bias and its side, a mark (relationship-levy only), or "
                      "equivalence within --equivalence-margin), or --sample-k items are spent. A mark of a "
                      "near-unbiased model needs --sample-k 10000 or more (docs/statistics.md)."),
    click.option("--equivalence-margin", type=float, default=None, metavar="D",
                 help="Also test whether each headline's bias is within +-D (two one-sided tests), so a small "
                      "bias is shown, not just not ruled out."),
    click.option("--score-options", is_flag=True, help="Score answer options by log-probability instead of generating."),
    click.option("--constrain-answers", is_flag=True,
                 help="Ask the backend to answer only with one of the options (a deviation from the papers)."),
    click.option("--no-records", is_flag=True, help="Do not write per-attempt records."),
    click.option("--records", "records_format", type=click.Choice(["auto", "jsonl", "parquet"]), default="auto",
                 show_default=True,
                 help="The records' file: records.jsonl, or records.parquet (columnar, for large runs); auto takes "
                      "Parquet above 1,000,000 records."),
    click.option("--export", "export", nargs=2, type=(click.Choice(["hf-dataset"]), click.Path(path_type=Path)),
                 default=None, metavar="hf-dataset DIR",
                 help="Also write the run as a Hugging Face dataset folder (Parquet records and metrics, a dataset "
                      "card, licences), ready for datasets.load_dataset; needs --out."),
    click.option("--parquet", "records_parquet", is_flag=True,
                 help="Also write records.parquet beside records.jsonl."),
    click.option("--fail-on-mark", default=None, metavar="MARK",
                 help="Exit with 3 after writing the results when any mark is worse than MARK (A-D): a CI gate."),
    click.option("--limit", type=int, default=None, metavar="N",
                 help="A smoke run: ask at most N of each probe's items (its sample_k or size parameter), "
                      "marked in the results as not comparable with a full run."),
    click.option("--details", is_flag=True,
                 help="Print every metric, breakdown table and the paper's table, not only the verdict and a line "
                      "for each."),
    click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors."),
    click.option("--json", "as_json", is_flag=True, help="Print the results JSON to standard output."),
]


def common_options(names: tuple[str, ...] | None = None) -> list[click.Parameter]:
    """The run options (all, or those named), for commands that take some of them."""
    holder = click.Command("holder")
    for decorator in _COMMON:
        decorator(holder)
    return [p for p in holder.params if names is None or p.name in names]


def common_defaults() -> dict[str, Any]:
    """Every run option at its default, as the command line passes them (click resolves
    flags' defaults only when parsing, so parse an empty command line)."""
    holder = click.Command("holder", params=common_options())
    return holder.make_context("holder", [], resilient_parsing=True).params


def _probe_command(probe_cls: type[Probe]) -> click.Command:
    hints = typing.get_type_hints(probe_cls.Params)
    param_options = []
    for f in dataclasses.fields(probe_cls.Params):
        param_options.append(_click_option(f, hints[f.name]))

    def callback(**kwargs: Any) -> None:
        probe_kwargs = {}
        for f in dataclasses.fields(probe_cls.Params):
            value = kwargs.pop(f.name)
            if value is None:
                continue
            if f.metadata.get("from_file"):
                value = read_user_text(value, f"{f.name.removesuffix('_file').replace('_', ' ')} file")
                # Editors end files with a line break the user never meant as part
                # of the prompt (it would change every prompt and its cache key).
                value = value.removesuffix("\n").removesuffix("\r")
            probe_kwargs[f.name] = value
        _run(probe_cls, probe_kwargs, **kwargs)

    command = click.Command(
        probe_cls.name,
        callback=lambda **kwargs: callback(**{**common_defaults(), **kwargs}),
        help=(probe_cls.__doc__ or probe_cls.summary).strip(),
        short_help=probe_cls.summary,
        epilog=EXIT_CODES_HELP,
    )
    # --model first, then the probe's own options, then the run options it can use.
    common = [p for p in common_options() if _offered(probe_cls, p.name)]
    command.params = [p for p in common if p.name == "model"] + param_options + [p for p in common if p.name != "model"]
    return command


# Run options offered only to probes that can use them (probe flags, any one suffices).
_ONLY_FOR = {
    "judge": ("needs_judge",),
    "checker": ("needs_judge",),
    "judge_base_url": ("needs_judge", "supports_reader_judge"),
    "judge_api_key_env": ("needs_judge", "supports_reader_judge"),
    "reader_judge": ("supports_reader_judge",),
    "reader_judge_sample": ("supports_reader_judge",),
    "score_options": ("supports_option_scoring",),
    "constrain_answers": ("supports_constrained_answers",),
}


def _offered(probe_cls: type[Probe], option: str | None) -> bool:
    flags = _ONLY_FOR.get(option or "")
    return flags is None or any(getattr(probe_cls, flag) for flag in flags)


def _click_option(f: dataclasses.Field, hint: Any) -> click.Option:
    meta = f.metadata
    name = f.name
    flag = meta.get("flag") or "--" + name.replace("_", "-")
    origin = typing.get_origin(hint)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    base = args[0] if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)) and args else hint
    help_text = meta.get("help", "")
    if meta.get("from_file"):
        return click.Option([flag, name], type=click.Path(dir_okay=False), default=None, help=help_text)
    if base is bool:
        return click.Option([f"{flag}/--no-{flag[2:]}", name], default=None, help=help_text)
    if typing.get_origin(base) is tuple:
        item = typing.get_args(base)[0]
        return click.Option(
            [flag, name], default=None, callback=_comma_list(item), help=f"{help_text} (comma-separated)"
        )
    if meta.get("choices"):
        ctype: Any = click.Choice(meta["choices"])
    else:
        ctype = {int: int, float: float, str: str}.get(base, str)
    default = f.default if f.default is not dataclasses.MISSING else None
    return click.Option([flag, name], type=ctype, default=None,
                        help=f"{help_text} [default: {default}]" if default is not None else help_text)


def _comma_list(item: type) -> Any:
    def convert(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
        if value is None:
            return None
        try:
            return tuple(item(v.strip()) for v in value.split(",") if v.strip())
        except ValueError:
            raise click.BadParameter(f"expected comma-separated {item.__name__} values") from None

    return convert


def _run(probe_cls: type[Probe], probe_kwargs: dict[str, Any], **opts: Any) -> None:
    from genderprobe.interfaces.api import execute
    from genderprobe.outputs.terminal import Progress, print_results, print_summary

    probe = probe_cls(**probe_kwargs)
    config = _run_config(opts)
    gate = check_threshold(opts["fail_on_mark"]) if opts["fail_on_mark"] else None
    if opts["export"]:
        from genderprobe.outputs.hf_dataset import require_huggingface_hub
        from genderprobe.outputs.records_parquet import require_pyarrow

        if config.out_dir is None or not config.keep_records:
            raise UserError("--export hf-dataset needs the run's files: add --out DIR and drop --no-records.")
        require_pyarrow()
        require_huggingface_hub()  # before the run, not after paying for it
    quiet = opts["quiet"] or opts["as_json"]
    progress = None if quiet else Progress()
    config.progress = progress
    try:
        with _terminate_as_interrupt():
            out = execute(probe, config)
    finally:
        if progress:
            progress.stop()
    if config.dry_run:
        _print_dry_run(out.document, as_json=opts["as_json"])
        return
    if opts["as_json"]:
        import json

        from genderprobe.outputs.results import to_jsonable

        click.echo(json.dumps(to_jsonable(out.document), indent=2, ensure_ascii=False))
    elif not quiet:
        (print_results if opts["details"] else print_summary)(out.document)
        if out.results_path:
            click.echo(f"Results: {out.results_path}")
        if out.records_path:
            click.echo(f"Records: {out.records_path}")
        if out.parquet_path:
            click.echo(f"Records (Parquet): {out.parquet_path}")
        click.echo(reading_guide(out.document, out.results_path))
        if opts["model"].startswith("reference:"):
            click.echo(
                "This was a calibration model. To measure a real one: --model openai:MODEL "
                "(key in OPENAI_API_KEY; --base-url for vLLM, Ollama, llama.cpp, TGI or OpenRouter), "
                "--model anthropic:MODEL, or --model hf:PATH for local weights."
            )
    elif opts["quiet"]:  # quiet drops the summary, never the warnings about what it measured
        for warning in out.document.get("warnings") or []:
            click.echo(f"Warning: {warning}", err=True)
        from genderprobe.analysis.validity import problem_lines

        for line in problem_lines(out.document):
            click.echo(f"Validity: {line}", err=True)
    if opts["export"] and out.results_path and out.records_path:
        from genderprobe.outputs.hf_dataset import export_hf_dataset

        folder = export_hf_dataset(out.results_path, out.records_path, opts["export"][1])
        if not quiet:
            click.echo(f"Dataset: {folder} (datasets.load_dataset('{folder}', 'records'))")
    if gate:
        enforce([(f"{probe.name} on {opts['model']}", out.document)], gate)


def reading_guide(doc: dict[str, Any], results_path: Path | None) -> str:
    """Two lines on how to read the headline (its sign, the marks) and how to make the report."""
    headline = doc.get("headline", {}).get("metrics") or []
    first = next((h for h in headline if h.get("better") in ("zero", "one")), headline[0] if headline else None)
    reading = f"How to read it: {first['metric']} is the {first['description'][:1].lower()}{first['description'][1:]}" \
        if first else "How to read it:"
    reading = reading.rstrip(".") + "."
    if doc.get("marks"):
        reading += " Marks run from A (healthy) to D (catastrophic), from where the 95% interval lies."
    if results_path is not None:
        report = f"More: --details, the HTML report (genderprobe report {results_path.parent})"
    else:
        report = "More: --details, or run again with --out DIR for the HTML report (genderprobe report DIR)"
    # Only where genderprobe packages the paper's tables (the WinoBias and StereoSet papers publish none here).
    tables = f", the paper's own tables (genderprobe paper {doc['probe']})" if doc.get("paper") else ""
    return f"{reading}\n{report}{tables}."


def _print_dry_run(doc: dict[str, Any], *, as_json: bool) -> None:
    if as_json:
        import json

        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    from genderprobe.engine.dry_run import dry_run_lines

    for line in dry_run_lines(doc):
        click.echo(line)


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """Let SIGTERM (kill, timeout, a scheduler) end a run as Ctrl-C does.

    Python's default dies on the spot, losing the answers of the last flush
    interval and leaving a temporary records file; as an interrupt, the answers
    received are flushed to the store and every file and connection is closed.
    """
    def interrupt(signum: int, frame: Any) -> None:
        # Whatever handles Ctrl-C now (the runner's event loop cancels its run).
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):
            on_sigint(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_config(opts: dict[str, Any]) -> Any:
    """The run's settings: flags first, then the config file, then defaults."""
    from genderprobe.engine.work_bounds import DEFAULT_MAX_REQUESTS
    from genderprobe.interfaces.api import RunConfig
    from genderprobe.interfaces.config import check_option, load_config, merged, parse_duration

    # A suite passes its file's run sections already read (genderprobe.interfaces.cli_commands.suite).
    fc = opts.get("file_config") or load_config(opts["config_file"])
    for section, key, flag in (
        ("generation", "temperature", "--temperature"), ("generation", "top_p", "--top-p"),
        ("generation", "max_tokens", "--max-tokens"), ("model", "timeout", "--timeout"),
        ("run", "concurrency", "--concurrency"), ("run", "rpm", "--rpm"), ("run", "tpm", "--tpm"),
        ("run", "max_retries", "--max-retries"), ("run", "max_error_rate", "--max-error-rate"),
        ("run", "max_requests", "--max-requests"), ("run", "max_retry_wait", "--max-retry-wait"),
    ):
        check_option(section, key, opts[key], flag)
    if opts["resamples"] < 1:
        raise UserError("--resamples must be at least 1.")
    if opts["limit"] is not None and opts["limit"] < 1:
        raise UserError("--limit must be at least 1 (the most items each probe asks in a smoke run).")
    model_options, judge_options = _connections(opts, fc)
    for key, flag in (("price_in", "--price-in"), ("price_out", "--price-out")):
        check_option("run", key, opts[key], flag)
    max_age = merged(opts["cache_max_age"], fc, "run", "cache_max_age")
    if max_age is not None:
        check_option("run", "cache_max_age", max_age, "--cache-max-age")
    cache_dir = merged(opts["cache_dir"], fc, "run", "cache_dir")
    return RunConfig(
        model=opts["model"],
        judge=opts["judge"],
        checker=opts["checker"],
        reader_judge=opts["reader_judge"],
        reader_judge_sample=opts["reader_judge_sample"],
        model_options=model_options,
        judge_options=judge_options,
        checker_options=judge_options,
        reader_judge_options=judge_options,
        generation={key: merged(opts[flag], fc, "generation", key) for key, flag in _GENERATION_FLAGS},
        system_prompt=merged(opts["system_prompt"], fc, "generation", "system_prompt"),
        seed=opts["seed"],
        n_resamples=opts["resamples"],
        equivalence_margin=opts["equivalence_margin"],
        until_decided=opts["until_decided"],
        score_options=opts["score_options"],
        constrain_answers=opts["constrain_answers"],
        concurrency=merged(opts["concurrency"], fc, "run", "concurrency", 8),
        max_requests=merged(opts["max_requests"], fc, "run", "max_requests", DEFAULT_MAX_REQUESTS),
        limit=opts["limit"],
        rpm=merged(opts["rpm"], fc, "run", "rpm"),
        tpm=merged(opts["tpm"], fc, "run", "tpm"),
        max_retries=merged(opts["max_retries"], fc, "run", "max_retries", 6),
        max_retry_wait=merged(opts["max_retry_wait"], fc, "run", "max_retry_wait", 300.0),
        max_error_rate=merged(opts["max_error_rate"], fc, "run", "max_error_rate", 0.03),
        executor=opts["executor"],
        ray_address=opts["ray_address"],
        ray_workers=opts["ray_workers"],
        cache_dir=Path(cache_dir).expanduser() if cache_dir else None,
        use_cache=not opts["no_cache"],
        out_dir=opts["out_dir"],
        keep_records=not opts["no_records"],
        records_format=opts["records_format"],
        records_parquet=opts["records_parquet"],
        cache_max_age=parse_duration(max_age) if max_age is not None else None,
        keep_empty=bool(merged(opts["keep_empty"], fc, "run", "keep_empty", False)),
        batch=bool(merged(opts["batch"], fc, "run", "batch", False)),
        batch_poll_interval=fc.run.get("batch_poll_interval", 30.0),
        price_in=merged(opts["price_in"], fc, "run", "price_in"),
        price_out=merged(opts["price_out"], fc, "run", "price_out"),
        judge_price_in=fc.judge.get("price_in"),
        judge_price_out=fc.judge.get("price_out"),
        dry_run=opts["dry_run"],
    )


# [generation] keys and the options that set them.
_GENERATION_FLAGS = (("temperature", "temperature"), ("top_p", "top_p"), ("max_tokens", "max_tokens"),
                     ("seed", "generation_seed"), ("reasoning_effort", "reasoning_effort"))


def _connections(opts: dict[str, Any], fc: Any) -> tuple[ModelOptions, ModelOptions | None]:
    """How to reach the model, and the judges where they have an endpoint of their own (else None)."""
    from genderprobe.interfaces.config import merged

    model_options = ModelOptions(
        base_url=merged(opts["base_url"], fc, "model", "base_url"),
        api_key=fc.model.get("api_key"),
        api_key_env=merged(opts["api_key_env"], fc, "model", "api_key_env"),
        timeout=merged(opts["timeout"], fc, "model", "timeout", 60.0),
        extra=fc.model_extra(),
    )
    judge_base_url = merged(opts["judge_base_url"], fc, "judge", "base_url")
    judge_key_env = merged(opts["judge_api_key_env"], fc, "judge", "api_key_env")
    if not (judge_base_url or judge_key_env or "timeout" in fc.judge):
        return model_options, None
    # The judges have their own endpoint: nothing of the tested model's connection carries over.
    return model_options, ModelOptions(base_url=judge_base_url, api_key_env=judge_key_env,
                                       timeout=fc.judge.get("timeout", model_options.timeout))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
