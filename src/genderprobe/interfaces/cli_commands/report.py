"""``genderprobe report`` and ``genderprobe compare``: HTML from results files."""

from __future__ import annotations

from pathlib import Path

import click

from genderprobe.errors import UserError
from genderprobe.outputs.activity import display_for, shown
from genderprobe.outputs.results import load_results
from genderprobe.steps import step


def _load(paths: tuple[Path, ...]) -> list[tuple[dict, str]]:
    from genderprobe.outputs.report.compare import source_names

    files = [p / "results.json" if p.is_dir() else p for p in paths]  # a run's --out folder: its results.json
    return [(load_results(p), name) for p, name in zip(files, source_names(files))]


def _done(path: Path) -> None:
    size = path.stat().st_size
    click.echo(f"Wrote {path} ({size / 1024:,.0f} KiB)")


@click.command("report")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="HTML file to write (default: report.html beside the first results file).")
def report_command(results: tuple[Path, ...], output: Path | None) -> None:
    """Write a self-contained HTML report of one or more results files (or run folders)."""
    from genderprobe.outputs.records import records_beside
    from genderprobe.outputs.report import render_report, write_html

    # Each run with its records file, for the report's answer browser.
    docs = [(doc, source, records_beside(path, doc)) for (doc, source), path in zip(_load(results), results)]
    if output is None:
        first = results[0] if results[0].is_dir() else results[0].parent
        output = first / "report.html"
    with shown(display_for()), step(f"writing the report of {len(docs)} run{'s' * (len(docs) > 1)}"):
        write_html(output, render_report(docs))
    _done(output)


@click.command("compare")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Also write the comparison as a self-contained HTML file.")
@click.option("--equivalence-margin", type=float, default=None, metavar="D",
              help="Also test whether each difference between two runs is within +-D (two one-sided tests).")
def compare_command(results: tuple[Path, ...], output: Path | None, equivalence_margin: float | None) -> None:
    """Rank several runs side by side and test each headline difference between them
    (paired over items where two runs asked the same ones): here, and in HTML with -o."""
    from genderprobe.outputs.records import records_beside
    from genderprobe.outputs.report import compare, render_comparison, write_html
    from genderprobe.outputs.report.leaderboard import print_leaderboard

    if len(results) < 2:
        raise UserError("Give at least two results files to compare.")
    from genderprobe.analysis.equivalence import check_margin

    check_margin(equivalence_margin)
    # Each run with its records file, so the tests between runs can pair their items.
    docs = [(doc, source, records_beside(path, doc)) for (doc, source), path in zip(_load(results), results)]
    with shown(display_for()):
        with step(f"comparing {len(docs)} runs (tests between each two)"):
            compared = compare(docs, equivalence_margin)
        print_leaderboard(compared)
        if output is not None:
            with step("writing the comparison"):
                write_html(output, render_comparison(docs, equivalence_margin))
    if output is not None:
        _done(output)


COMMANDS = [report_command, compare_command]
