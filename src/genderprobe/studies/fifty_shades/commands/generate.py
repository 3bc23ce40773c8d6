"""``genderprobe fifty-shades generate``: the dataset generation pipeline of Hada et al. (2023)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from genderprobe.errors import UserError
from genderprobe.interfaces.userfiles import read_user_text
from genderprobe.outputs.results import atomic_write_text
from genderprobe.studies.fifty_shades.commands.judge import execute_quietly, model_options
from genderprobe.studies.fifty_shades.dataset import GENERATION_SEED_TYPES
from genderprobe.studies.fifty_shades.generation import (
    EXAMPLES_PER_PROMPT,
    PROMPT_TYPES,
    FiftyShadesGeneration,
    rows_csv,
)


@click.group("fifty-shades")
def fifty_shades_group() -> None:
    """Fifty Shades of Bias tools (the judge probe is 'genderprobe run fifty-shades')."""


def _names(value: str, known: tuple[str, ...], what: str) -> tuple[str, ...]:
    names = tuple(v.strip() for v in value.split(",") if v.strip())
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise UserError(f"Unknown {what} '{(bad or [value])[0]}'; choose from {', '.join(known)} (comma-separated).")
    return names


@fifty_shades_group.command("generate")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="CSV of generated statements (uid, prompt_type, seed_type, query, response).")
@click.option("--seed-types", default=",".join(GENERATION_SEED_TYPES), show_default=True,
              help="Released seed types (comma-separated).")
@click.option("--prompt-types", default="conversion,completion", show_default=True,
              help=f"Prompt types, from {', '.join(PROMPT_TYPES)} (comma-separated).")
@click.option("--seeds-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Your own seeds, one per line (e.g. in another language).")
@click.option("--seed-type", "seed_type_name", default="custom", show_default=True,
              help="Seed type recorded for --seeds-file (a released type also selects its examples).")
@click.option("--ic-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Your own in-context examples: JSON {\"ic\": [[seed, generation], ...]}.")
@click.option("--limit", type=int, default=0, show_default=True, help="Only the first N seeds of each type (0: all).")
@click.option("--examples-per-prompt", type=int, default=EXAMPLES_PER_PROMPT, show_default=True,
              help="In-context examples per prompt.")
@model_options
def generate(out_path: Path, seed_types: str, prompt_types: str, seeds_file: Path | None, seed_type_name: str,
             ic_file: Path | None, limit: int, examples_per_prompt: int, **opts: Any) -> None:
    """Generate graded gender-biased statements from seeds with the Appendix A.1 prompts.

    Then 'genderprobe bws design OUT.csv' makes the 4-tuples to annotate them.
    """
    probe = FiftyShadesGeneration(
        seed_types=_names(seed_types, GENERATION_SEED_TYPES, "seed type") if seeds_file is None else (),
        prompt_types=_names(prompt_types, PROMPT_TYPES, "prompt type"),
        seeds_text=read_user_text(seeds_file, "seeds file") if seeds_file else "",
        seed_type_name=seed_type_name,
        ic_text=read_user_text(ic_file, "in-context example file") if ic_file else "",
        limit=limit,
        examples_per_prompt=examples_per_prompt,
    )
    out = execute_quietly(probe, opts)
    rows = out.result.extra["rows"]
    atomic_write_text(out_path, rows_csv(rows))
    if not opts["quiet"]:
        c = out.result.counts
        click.echo(f"Generated {c['generated']:,} statements from {c['seeds']:,} seeds "
                   f"({c['empty']:,} empty, {c['errors']:,} errors): {out_path}")


COMMANDS = [fifty_shades_group]
