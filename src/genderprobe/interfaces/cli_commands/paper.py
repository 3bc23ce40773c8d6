"""``genderprobe paper PROBE``: the paper's own published tables, beside a run if given."""

from __future__ import annotations

import json
from pathlib import Path

import click

from genderprobe.errors import UserError


@click.command("paper")
@click.argument("probe")
@click.option("--results", "results_path", type=click.Path(path_type=Path), default=None,
              help="A results.json (or run folder) to show beside the paper's rows.")
@click.option("--json", "as_json", is_flag=True, help="Print the tables as JSON.")
def paper_command(probe: str, results_path: Path | None, as_json: bool) -> None:
    """Show the result tables the probe's paper publishes, with a run's row beside them."""
    from genderprobe.outputs.paper_tables import paper_section
    from genderprobe.outputs.results import load_results
    from genderprobe.outputs.terminal import output_console, print_paper_table
    from genderprobe.registry import get_probe

    probe_cls = get_probe(probe)
    doc = None
    if results_path is not None:
        if results_path.is_dir():
            results_path = results_path / "results.json"
        doc = load_results(results_path)
        if doc["probe"] != probe_cls.name:
            raise UserError(f"{results_path} holds a '{doc['probe']}' run, not '{probe_cls.name}'.")
    tables = paper_section(probe_cls, doc)
    if as_json:
        click.echo(json.dumps(tables, indent=2, ensure_ascii=False))
        return
    if not tables:
        click.echo(f"genderprobe packages no published result tables for '{probe_cls.name}'.")
        return
    console = output_console()
    for t in tables:
        print_paper_table(t, console)


COMMANDS = [paper_command]
