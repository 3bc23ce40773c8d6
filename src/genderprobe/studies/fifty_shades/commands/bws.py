"""``genderprobe bws design|score|reliability``: Best-Worst Scaling annotation tools."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import click

from genderprobe.errors import UserError
from genderprobe.interfaces.userfiles import read_user_text
from genderprobe.outputs.results import atomic_write_text


@click.group("bws")
def bws_group() -> None:
    """Best-Worst Scaling: make 4-tuples, score annotations, check their reliability."""


def item_ids(path: Path, column: str | None) -> list[str]:
    """Item ids: a CSV column (default uid, then id), or one id per line of a text file."""
    text = read_user_text(path)
    if path.suffix.lower() != ".csv" and column is None:
        ids = [line.strip() for line in text.splitlines() if line.strip()]
    else:
        try:
            reader = csv.DictReader(io.StringIO(text))
            fields = reader.fieldnames or []
            column = column or next((c for c in ("uid", "id") if c in fields), None)
            if column is None or column not in fields:
                raise UserError(f"{path} has no id column; name it with --id-column (columns: {', '.join(fields) or 'none'}).")
            ids = [(row.get(column) or "").strip() for row in reader]
        except csv.Error as exc:
            raise UserError(f"{path} is not valid CSV ({exc}).") from None
        if any(not i for i in ids):
            raise UserError(f"{path} has a row with an empty '{column}' id.")
    if len(set(ids)) != len(ids):
        raise UserError(f"{path} lists an item id more than once; ids must be unique.")
    return ids


@bws_group.command("design")
@click.argument("items", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option("--n", "n_items", type=int, default=None, help="Number of items (ids 1..N) instead of an ITEMS file.")
@click.option("--id-column", default=None, help="CSV column of ITEMS holding the ids (default: uid, then id).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the design.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="CSV of tuples (Item1..Item4); default: print it.")
def design(items: Path | None, n_items: int | None, id_column: str | None, seed: int, out_path: Path | None) -> None:
    """Make 2N 4-tuples for N items: each item in 8 tuples, no two tuples sharing more than 2 items.

    ITEMS is a CSV (for instance the output of 'genderprobe fifty-shades generate')
    or a text file with one id per line.
    """
    if (items is None) == (n_items is None):
        raise UserError("Give either an ITEMS file or --n N, not both and not neither.")
    ids = item_ids(items, id_column) if items is not None else [str(i) for i in range(1, max(n_items or 0, 0) + 1)]
    from genderprobe.studies.fifty_shades import (
        bws,  # here: it imports scipy, which --help must not wait for
    )

    tuples = bws.design_tuples(len(ids) if items is not None else n_items, seed=seed)
    text = bws.tuples_csv(tuples, ids)
    if out_path is None:
        click.echo(text, nl=False)
    else:
        atomic_write_text(out_path, text)
        click.echo(f"{len(tuples):,} 4-tuples for {len(ids):,} items: {out_path}")


@bws_group.command("score")
@click.argument("annotations", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="CSV of scores (id, score, score_normalized); default: print it.")
@click.option("--digits", type=int, default=3, show_default=True,
              help="Round scores to this many decimals, as the released scores (-1: no rounding).")
def score(annotations: Path, out_path: Path | None, digits: int) -> None:
    """Counting scores: %best - %worst per item, in [-1, 1], and normalised to [0, 1]."""
    if digits < -1:
        raise UserError("--digits must be -1 (no rounding) or a number of decimals.")
    from genderprobe.studies.fifty_shades import bws

    ann = bws.parse_annotations(read_user_text(annotations), str(annotations))
    text = bws.scores_csv(bws.counting_scores(ann), None if digits == -1 else digits)
    if out_path is None:
        click.echo(text, nl=False)
    else:
        atomic_write_text(out_path, text)
        click.echo(f"Scores of {ann.n_items:,} items from {len(ann):,} annotations: {out_path}")


@bws_group.command("reliability")
@click.argument("annotations", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--repetitions", type=int, default=100, show_default=True, help="Random splits to average over.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the random splits.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def reliability(annotations: Path, repetitions: int, seed: int, as_json: bool) -> None:
    """Split-half reliability: Pearson and Spearman between scores of random halves (Section 4.3)."""
    import numpy as np

    from genderprobe.studies.fifty_shades import bws

    ann = bws.parse_annotations(read_user_text(annotations), str(annotations))
    summary = bws.split_half_reliability(ann, repetitions=repetitions, seed=seed).summary()
    per_tuple = np.bincount(ann.tuple_of).tolist()
    summary = {"items": ann.n_items, "tuples": ann.n_tuples, "annotations": len(ann),
               "annotations_per_tuple": [min(per_tuple), max(per_tuple)], **summary}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Annotation statistics and split-half reliability (Table 2 layout)", title_justify="left")
    for col in ("# items", "# annotations per tuple", "# annotations", "SHR Pearson", "SHR Spearman"):
        table.add_column(col)
    table.add_row(
        f"{ann.n_items:,}", f"{min(per_tuple)}-{max(per_tuple)}", f"{len(ann):,}",
        f"{summary['pearson_mean']:.4f} ± {summary['pearson_sd']:.4f}",
        f"{summary['spearman_mean']:.4f} ± {summary['spearman_sd']:.4f}",
    )
    Console().print(table)
    click.echo(f"Mean ± standard deviation over {repetitions} random splits of each tuple's annotations.")


COMMANDS = [bws_group]
