"""``genderprobe cache info|clear|export``: look into, empty or export the response store."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path

import click

from genderprobe.engine.store import Store, store_path
from genderprobe.errors import UserError
from genderprobe.outputs.results import temp_beside

_CACHE_DIR = click.option(
    "--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Response store folder (default: the config file's, else GENDERPROBE_CACHE_DIR or ~/.cache/genderprobe).",
)
_CONFIG = click.option(
    "--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="TOML config file whose [run] cache_dir to use (default: GENDERPROBE_CONFIG).",
)


def _path(cache_dir: Path | None, config_file: Path | None) -> Path:
    if cache_dir is None:
        from genderprobe.interfaces.config import load_config

        configured = load_config(config_file).run.get("cache_dir")
        cache_dir = Path(configured).expanduser() if configured else None
    return store_path(cache_dir)


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} bytes"


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


@click.group("cache")
def cache_group() -> None:
    """Look into, empty or export the response store."""


@cache_group.command("info")
@_CACHE_DIR
@_CONFIG
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def info(cache_dir: Path | None, config_file: Path | None, as_json: bool) -> None:
    """What the store holds: answers and tokens per model, recorded errors, size."""
    path = _path(cache_dir, config_file)
    if not path.exists():
        click.echo(f"No response store at {path} yet; a run with caching creates it.")
        return
    with Store(path, create=False) as store:
        summary = store.info()
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    click.echo(f"Response store: {summary['path']} ({_size(summary['bytes'])}, schema {summary['schema']})")
    kinds = ", ".join(f"{k} {n:,}" for k, n in summary["error_kinds"].items())
    click.echo(f"Answers: {summary['responses']:,}   Errors recorded: {summary['errors']:,}" + (f" ({kinds})" if kinds else ""))
    if summary["models"]:
        table = Table(title_justify="left")
        table.add_column("model", no_wrap=True)
        for column in ("answers", "prompt tokens", "completion tokens"):
            table.add_column(column, justify="right")
        table.add_column("last written", no_wrap=True)
        for m in summary["models"]:
            table.add_row(
                m["model"], f"{m['responses']:,}", f"{m['prompt_tokens']:,}", f"{m['completion_tokens']:,}",
                _when(m["last"]),
            )
        # Model identities are long; never fold them in a pipe.
        Console(width=max(120, Console().width)).print(table)


@cache_group.command("clear")
@_CACHE_DIR
@_CONFIG
@click.option("--model", "model", default=None, help="Only this model's answers (e.g. openai:gpt-4o-mini).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def clear(cache_dir: Path | None, config_file: Path | None, model: str | None, yes: bool) -> None:
    """Delete stored answers (all, or one model's); the next run asks for them again."""
    path = _path(cache_dir, config_file)
    if not path.exists():
        click.echo(f"No response store at {path}; nothing to clear.")
        return
    with Store(path, create=False) as store:
        what = f"the answers of {model}" if model else "every stored answer"
        if not yes:
            if not sys.stdin.isatty():
                raise UserError(f"Refusing to delete {what} in {path} without confirmation; add --yes.")
            click.confirm(f"Delete {what} in {path}? Runs will pay for them again", abort=True)
        answers, errors = store.clear(model)
    if model and not answers and not errors:
        click.echo(f"The store {path} holds nothing for {model}; 'genderprobe cache info' lists its models.")
        return
    click.echo(f"Deleted {answers:,} answers and {errors:,} error records from {path}.")


@cache_group.command("export")
@click.argument("out", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@_CACHE_DIR
@_CONFIG
@click.option("--model", "model", default=None, help="Only this model's answers.")
def export(out: Path, cache_dir: Path | None, config_file: Path | None, model: str | None) -> None:
    """Write every stored answer to OUT as JSON lines ('-' for standard output)."""
    path = _path(cache_dir, config_file)
    with Store(path, create=False) as store:
        if str(out) == "-":
            n = store.export_jsonl(sys.stdout, model)
            click.echo(f"Exported {n:,} answers.", err=True)
            return
        n = _export_atomically(store, out, model)
    click.echo(f"Exported {n:,} answers to {out}.")


def _export_atomically(store: Store, out: Path, model: str | None) -> int:
    """Write to a hidden file beside ``out`` and rename it: never a half-written export."""
    try:
        fd, tmp = temp_beside(out)
    except OSError as exc:
        raise UserError(f"Cannot write {out}: {exc.strerror or exc}.") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            n = store.export_jsonl(f, model)
        os.replace(tmp, out)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"Cannot write {out}: {exc.strerror or exc}.") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


COMMANDS = [cache_group]
