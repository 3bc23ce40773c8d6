"""``genderprobe answers``: every answer of runs, as the report's answer browser reads and filters them.

A report holds a sample of a large run's answers and names this command for the rest.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from genderprobe.errors import UserError


@click.command("answers")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--reading", default=None, help="Only answers read as this: an option such as '(a)', or "
              "undetected, refusal, error.")
@click.option("--read-by", type=click.Choice(["rules", "judge"]), default=None,
              help="Only answers read by the rules, or by the reader judge.")
@click.option("--gender", default=None, help="Only prompts of this gender order, such as 'female first'.")
@click.option("--chose", default=None, help="Only answers that chose this, such as 'the woman', 'neither' or "
              "'the stereotyped person'.")
@click.option("--readers", type=click.Choice(["agree", "disagree"]), default=None,
              help="Only answers the two readers read alike, or differently.")
@click.option("--group", "groups", multiple=True, metavar="FIELD=VALUE",
              help="Only records whose FIELD holds VALUE, such as topic=Money; repeat for several.")
@click.option("--search", default=None, help="Only answers whose prompt, answer or reasoning holds these words.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSON lines file to write (default: standard output).")
def answers_command(runs: tuple[Path, ...], reading: str | None, read_by: str | None, gender: str | None,
                    chose: str | None, readers: str | None, groups: tuple[str, ...], search: str | None,
                    output: Path | None) -> None:
    """Write every answer of the runs (run folders or results files) as JSON lines: each record of the
    run's records file, with how the report reads it under "read"."""
    from genderprobe.outputs.records import records_beside
    from genderprobe.outputs.report.answer_export import AnswerFilter, answers, group_filter
    from genderprobe.outputs.results import JsonlSink, load_results

    keep = AnswerFilter(reading, read_by, gender, group_filter(groups), search, chose, readers)
    sources = []
    for run in runs:
        doc = load_results(run / "results.json" if run.is_dir() else run)
        records = records_beside(run, doc)
        if records is None or not records.is_file():
            raise UserError(f"{run} has no records file: answers are kept by runs with --out and without --no-records.")
        sources.append((run, doc, records))
    several = len(sources) > 1
    sink = JsonlSink(output) if output is not None else None
    count = 0
    try:
        for run, doc, records in sources:
            for answer in answers(records, doc, keep):
                if several:
                    answer["run_folder"] = str(run)
                if sink is not None:
                    sink.write(answer)
                else:
                    _print_line(answer)
                count += 1
    except BaseException:
        if sink is not None:
            sink.discard()
        raise
    if sink is not None:
        sink.commit()
        click.echo(f"Wrote {count:,} answers to {output}", err=True)


def _print_line(record: dict) -> None:
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")


COMMANDS = [answers_command]
