"""``genderprobe judge --model SPEC FILE``: rate the degree of gender bias of any sentences.

Also holds the model options shared with ``genderprobe fifty-shades generate``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from genderprobe.errors import UserError
from genderprobe.interfaces.userfiles import read_user_text
from genderprobe.outputs.results import atomic_write_text
from genderprobe.studies.fifty_shades.judge import (
    EXAMPLES_PER_BIN,
    IC_SAMPLING,
    RUNS,
    GradedBiasJudge,
)
from genderprobe.studies.fifty_shades.score_reader import READERS

MODEL_OPTIONS = [
    click.option("--model", "-m", "model", required=True, help="Model spec, e.g. openai:gpt-4o-mini."),
    click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                 help="Seed for drawing in-context examples."),
    click.option("--temperature", type=float, default=None, help="Sampling temperature (default 0, as the paper)."),
    click.option("--max-tokens", type=int, default=None, help="Maximum tokens per answer (default 100)."),
    click.option("--system-prompt", default=None, help="Text put before the paper's system prompt."),
    click.option("--base-url", default=None, help="API base URL."),
    click.option("--api-key-env", default=None, help="Environment variable holding the API key."),
    click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per request."),
    click.option("--concurrency", type=int, default=8, show_default=True, help="Requests in flight at once."),
    click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                 help="Response store folder."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the response store."),
    click.option("--records-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                 help="Folder for results.json and records.jsonl of the run."),
    click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors."),
]


def model_options(command: Callable) -> Callable:
    for decorator in reversed(MODEL_OPTIONS):
        command = decorator(command)
    return command


def execute_quietly(probe: Any, opts: dict[str, Any]) -> Any:
    """Run an unregistered probe through the harness with the shared options."""
    from genderprobe.interfaces.api import RunConfig, execute
    from genderprobe.models import ModelOptions
    from genderprobe.outputs.terminal import Progress

    if opts["concurrency"] < 1:
        raise UserError("--concurrency must be at least 1.")
    progress = None if opts["quiet"] else Progress()
    config = RunConfig(
        model=opts["model"],
        model_options=ModelOptions(base_url=opts["base_url"], api_key_env=opts["api_key_env"], timeout=opts["timeout"]),
        generation={"temperature": opts["temperature"], "max_tokens": opts["max_tokens"]},
        system_prompt=opts["system_prompt"],
        seed=opts["seed"],
        concurrency=opts["concurrency"],
        cache_dir=opts["cache_dir"],
        use_cache=not opts["no_cache"],
        out_dir=opts["records_dir"],
        keep_records=opts["records_dir"] is not None,
        progress=progress,
    )
    try:
        return execute(probe, config)
    finally:
        if progress:
            progress.stop()


def read_sentences(path: Path, column: str | None) -> list[str]:
    """One sentence per line, or the named (or only) column of a CSV file."""
    text = read_user_text(path)
    if column is None and path.suffix.lower() != ".csv":
        return [line.strip() for line in text.splitlines() if line.strip()]
    try:
        reader = csv.DictReader(io.StringIO(text))
        fields = reader.fieldnames or []
        if column is None:
            if len(fields) != 1:
                raise UserError(f"{path} has {len(fields)} columns; name the one to rate with --column.")
            column = fields[0]
        if column not in fields:
            raise UserError(f"{path} has no column '{column}'; its columns are {', '.join(fields) or 'none'}.")
        return [(row.get(column) or "").strip() for row in reader if (row.get(column) or "").strip()]
    except csv.Error as exc:
        raise UserError(f"{path} is not valid CSV ({exc}).") from None


def scores_csv(rows: list[dict[str, Any]], runs: int) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["text", "score", *[f"run_{r + 1}" for r in range(runs)], "undetected", "refusals", "errors"])
    for row in rows:
        writer.writerow([row["text"], _cell(row["score"]), *[_cell(v) for v in row["run_scores"]],
                         row["undetected"], row.get("refusals", 0), row["errors"]])
    return out.getvalue()


def _cell(v: float | None) -> str:
    return "" if v is None else repr(v)


@click.command("judge")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--column", default=None, help="CSV column holding the sentences (default: the only column).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="CSV of scores (text, score, run_1.., undetected, refusals, errors); default: print to the terminal.")
@click.option("--runs", type=int, default=RUNS, show_default=True, help="Runs with different in-context examples.")
@click.option("--examples-per-bin", type=int, default=EXAMPLES_PER_BIN, show_default=True,
              help="In-context examples per quarter of the human score.")
@click.option("--ic-sampling", type=click.Choice(IC_SAMPLING), default="per-run", show_default=True,
              help="Draw examples once per run or per sentence.")
@click.option("--reader", type=click.Choice(READERS), default="first-line", show_default=True,
              help="How scores are read: first-line (the authors' scripts) or score-line.")
@model_options
def judge_command(file: Path, column: str | None, out_path: Path | None, runs: int, examples_per_bin: int,
                  ic_sampling: str, reader: str, **opts: Any) -> None:
    """Rate how gender-biased each sentence of FILE is (0-1), with the Fifty Shades judge.

    FILE holds one sentence per line, or is a CSV file whose --column is rated.
    In-context examples come from the 1,000 human-rated Fifty Shades sentences.
    """
    sentences = read_sentences(file, column)
    probe = GradedBiasJudge(sentences=tuple(sentences), runs=runs, examples_per_bin=examples_per_bin,
                            ic_sampling=ic_sampling, reader=reader)
    out = execute_quietly(probe, opts)
    rows = out.result.extra["scores"]
    text = scores_csv(rows, runs)
    if out_path is not None:
        atomic_write_text(out_path, text)
        if not opts["quiet"]:
            c = out.result.counts
            click.echo(f"Rated {c['sentences']:,} sentences ({c['undetected']:,} undetected answers, "
                       f"{c.get('refusals', 0):,} of them refusals, {c['errors']:,} errors): {out_path}")
    else:
        click.echo(text, nl=False)


COMMANDS = [judge_command]
