"""``--export hf-dataset DIR``: a run as a Hugging Face dataset folder.

The folder is what ``datasets.load_dataset(DIR, "records")`` (or ``"metrics"``)
reads, and what ``huggingface-cli upload`` publishes:

    DIR/README.md              the dataset card: YAML (configs, licence, tags) and
                               what the run was (probe, model, parameters, headline)
    DIR/data/records.parquet   one row per attempt (the run's records.jsonl)
    DIR/data/metrics.parquet   one row per metric: value, 95% interval, n, mark
    DIR/results.json           the run's results, unchanged
    DIR/LICENSES/              the licences of the data genderprobe packages

The folder is written beside DIR and renamed into place, so a failure never
leaves half a dataset.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from genderprobe.errors import UserError
from genderprobe.outputs.records_parquet import jsonl_to_parquet, require_pyarrow

FORMATS = ("hf-dataset",)


def export_hf_dataset(results_path: Path, records_path: Path, out: Path) -> Path:
    """Write the dataset folder ``out`` from a run's files; returns ``out``."""
    require_pyarrow()
    require_huggingface_hub()
    if out.exists() and any(out.iterdir()):
        raise UserError(f"The export folder {out} is not empty; choose a new one for --export hf-dataset.")
    doc = json.loads(results_path.read_text(encoding="utf-8"))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as exc:
        raise UserError(f"Cannot write {out}: {exc.strerror or exc}.") from None
    try:
        (staging / "data").mkdir()
        if records_path.suffix == ".parquet":  # written as Parquet already (--records parquet)
            shutil.copyfile(records_path, staging / "data" / "records.parquet")
        else:
            jsonl_to_parquet(records_path, staging / "data" / "records.parquet")
        _metrics_parquet(doc, staging / "data" / "metrics.parquet")
        shutil.copyfile(results_path, staging / "results.json")
        licences = _copy_licences(staging / "LICENSES")
        has_prompt = "prompt" in _parquet_columns(staging / "data" / "records.parquet")
        (staging / "README.md").write_text(dataset_card(doc, licences, has_prompt), encoding="utf-8")
        if out.exists():
            out.rmdir()  # empty, checked above
        staging.rename(out)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise UserError(f"Cannot write {out}: {exc.strerror or exc}.") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def require_huggingface_hub() -> None:
    """One sentence where the Hub's library, which writes the dataset card, is missing."""
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        raise UserError("--export hf-dataset writes its dataset card with huggingface_hub, which is not "
                        "installed: pip install 'genderprobe[hf-dataset]'.") from None


def _metrics_parquet(doc: dict[str, Any], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    marks = doc.get("marks") or {}
    rows = [
        {
            "metric": name,
            "value": est.get("value"),
            "ci_low": est.get("ci_low"),
            "ci_high": est.get("ci_high"),
            "n": est.get("n"),
            "mark": (marks.get(name) or {}).get("mark"),
        }
        for name, est in (doc.get("metrics") or {}).items()
    ]
    schema = pa.schema([("metric", pa.string()), ("value", pa.float64()), ("ci_low", pa.float64()),
                        ("ci_high", pa.float64()), ("n", pa.int64()), ("mark", pa.string())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _copy_licences(folder: Path) -> list[str]:
    """The licences of the packaged data this process read (the run's data; a licence covers its folder and
    those below it), or every licence where that cannot be told: the export is made in another process, or a
    file read has no licence above it. Too many is safe, too few is not."""
    from genderprobe.data.packaged import all_data_files, keys_read

    files = all_data_files()
    licences = {key: item for key, item in files.items() if item.name.upper().startswith(("LICENSE", "LICENCE"))}

    def covers(licence: str, key: str) -> bool:
        return key.startswith(licence.rpartition("/")[0] + "/")

    read = [key for key in keys_read() if key in files and key not in licences]
    if read and all(any(covers(licence, key) for licence in licences) for key in read):
        licences = {k: v for k, v in licences.items() if any(covers(k, key) for key in read)}
    folder.mkdir()
    copied = []
    for key, item in licences.items():
        name = key.replace("/", "-")
        (folder / name).write_bytes(item.read_bytes())
        copied.append(name)
    return copied


def _parquet_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    return pq.read_schema(path).names


def dataset_card(doc: dict[str, Any], licences: list[str], has_prompt: bool = True) -> str:
    """The README.md a dataset repository shows: YAML front matter, then what the run was.

    The front matter is huggingface_hub's DatasetCardData, so it is the Hub's own schema
    and quoting (a model name with a colon or quotes stays one string)."""
    from huggingface_hub import DatasetCard, DatasetCardData

    probe, model = doc["probe"], doc["model"]
    data = DatasetCardData(
        license="other", license_name="mixed", license_link="LICENSES/",
        pretty_name=f"genderprobe {probe} on {model}",
        tags=["gender-bias", "fairness", "genderprobe"],
        configs=[{"config_name": "records", "data_files": "data/records.parquet", "default": True},
                 {"config_name": "metrics", "data_files": "data/metrics.parquet"}],
    )
    headline = [h["metric"] for h in (doc.get("headline") or {}).get("metrics", [])]
    lines = ["", f"# {probe} on {model}", "", doc.get("summary", ""), "",
             f"Measured with genderprobe {doc.get('versions', {}).get('genderprobe', '')} "
             f"on {doc.get('created', '')}.", "", "## Headline", "",
             "| metric | value | 95% interval | mark |", "| --- | --- | --- | --- |"]
    for name in headline:
        est = (doc.get("metrics") or {}).get(name) or {}
        mark = ((doc.get("marks") or {}).get(name) or {}).get("mark") or ""
        lines.append(f"| {name} | {_num(est.get('value'))} | [{_num(est.get('ci_low'))}, "
                     f"{_num(est.get('ci_high'))}] | {mark} |")
    lines += ["", "## Parameters", "", "```json", json.dumps(doc.get("parameters"), indent=2), "```", "",
              "## Files", "",
              "- `records` (data/records.parquet): one row per attempt: "
              + ("the prompt, " if has_prompt else "the scenario and names that make the prompt (rebuilt by "
                 "`genderprobe.outputs.records.read_records(path, prompts=True)`), ")
              + "the model's raw answer, the code it was read as, and what the answer cost.",
              "- `metrics` (data/metrics.parquet): every metric with its 95% bootstrap interval, n and mark.",
              "- `results.json`: the full results, as genderprobe wrote them.", "",
              "## Licences", "",
              "The prompts are built from published datasets packaged with genderprobe; the licences of "
              "the data they draw on (of all of it, where the export could not tell which) are in `LICENSES/`: "
              + ", ".join(f"`{name}`" for name in licences) + ".", ""]
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n" + "\n".join(lines)))


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
