"""`genderprobe suite`: many probes on many models, one folder, one report; resumable."""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.interfaces.cli import main
from genderprobe.interfaces.suite import default_probes
from genderprobe.outputs.results import load_results
from genderprobe.testing.openai_server import OpenAITestServer

MODELS = ("reference:biased", "reference:unbiased")
SMALL = """
[probes.relationship-levy]
sample_k = 30

[probes.genmo]
sample_k = 30
"""
KEY = fake_key("suite-test-key-7c1e")


def suite(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, ["suite", "--resamples", "100", "-q", *args], env=env)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Two reference models x two probes, from a suite file."""
    base = tmp_path_factory.mktemp("suite")
    toml = write(base / "suite.toml", f'[suite]\nmodels = {json.dumps(list(MODELS))}\n'
                                      f'probes = ["relationship-levy", "genmo"]\n{SMALL}')
    result = suite(str(toml), "--out", str(base / "out"), "--no-cache")  # module-wide: no store of any test's
    assert result.exit_code == 0, result.output
    return base / "out"


def overview(page: str) -> dict[tuple[str, str, str], dict[str, str]]:
    """(probe, metric, model) -> the data-* attributes of its overview cell."""
    table = re.search(r'<table class="data overview">(.*?)</table>', page, re.S).group(1)
    cells = {}
    for probe, metric, row in re.findall(r'<tr data-probe="([^"]*)" data-metric="([^"]*)">(.*?)</tr>', table, re.S):
        for attrs in re.findall(r"<td ([^>]*data-model[^>]*)>", row):
            found = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', attrs))
            cells[(probe, metric, html.unescape(found["model"]))] = found
    return cells


def test_each_run_has_its_folder_and_suite_json_lists_them(folder):
    manifest = json.loads((folder / "suite.json").read_text())
    assert manifest["models"] == list(MODELS) and manifest["probes"] == ["relationship-levy", "genmo"]
    assert manifest["seed"] == 0 and manifest["complete"] is True
    assert manifest["parameters"]["probes"]["relationship-levy"]["sample_k"] == 30
    assert manifest["parameters"]["n_resamples"] == 100
    runs = {(r["model"], r["probe"]): r for r in manifest["runs"]}
    assert list(runs) == [(m, p) for m in MODELS for p in ("relationship-levy", "genmo")]
    for (model, probe), run in runs.items():
        assert run["status"] == "done" and run["error"] is None and run["skipped"] is False
        assert isinstance(run["seconds"], float) and run["seconds"] > 0  # how long the run took
        assert run["results"] == f"{model.replace(':', '-')}/{probe}/results.json"
        doc = load_results(folder / run["results"])
        assert (doc["model"], doc["probe"], doc["parameters"]["seed"]) == (model, probe, 0)
        assert (folder / run["results"]).with_name("records.jsonl").is_file()
    assert (folder / "report.html").is_file()


def test_the_overview_holds_each_runs_own_numbers_and_marks(folder):
    cells = overview((folder / "report.html").read_text())
    manifest = json.loads((folder / "suite.json").read_text())
    checked = 0
    for run in manifest["runs"]:
        doc = load_results(folder / run["results"])
        for h in doc["headline"]["metrics"]:
            cell, est = cells[(run["probe"], h["metric"], run["model"])], doc["metrics"][h["metric"]]
            assert [json.loads(cell[k]) for k in ("value", "ci-low", "ci-high")] == \
                [est["value"], est["ci_low"], est["ci_high"]]
            assert cell["mark"] == ((doc["marks"].get(h["metric"]) or {}).get("mark") or "")
            checked += 1
    assert checked == len(cells) >= 8
    assert cells[("relationship-levy", "diff_success_rate", "reference:biased")]["mark"] == "D"
    assert cells[("relationship-levy", "diff_success_rate", "reference:unbiased")]["mark"] == "A"


def test_the_report_has_each_probes_section_and_a_leaderboard(folder):
    page = (folder / "report.html").read_text()
    assert page.count('<section class="probe"') == 2
    for probe in ("relationship-levy", "genmo"):
        section = re.search(rf'<section class="probe" id="probe-\d" data-probe="{probe}">(.*?)</section>', page, re.S)
        assert section and section.group(1).count('<figure class="chart"') >= 2
        ranked = re.findall(r'<tr data-model="([^"]+)"><td class="rank">', section.group(1))
        assert ranked == ["reference:unbiased", "reference:biased"]  # the unbiased model is best on both
    board = re.search(r'<table class="data leaderboard suite-leaderboard">(.*?)</table>', page, re.S).group(1)
    assert re.findall(r'<tr data-model="([^"]+)">', board) == ["reference:unbiased", "reference:biased"]
    only_the_answer_browser_runs(page)


def only_the_answer_browser_runs(page: str) -> None:
    """The page's scripts are the answer browser's data (never run) and its own code, named by hash."""
    assert re.findall(r"<script([^>]*)>", page.lower()) == [' type="application/json" id="answer-data"', ""]
    assert "default-src 'none'" in page and "script-src 'sha256-" in page


def test_a_suite_run_again_skips_what_is_done_and_reruns_what_changed(folder, tmp_path):
    folder = Path(shutil.copytree(folder, tmp_path / "copy"))
    before = {p: p.stat().st_mtime_ns for p in folder.glob("*/*/results.json")}
    toml = write(tmp_path / "suite.toml", f'[suite]\nmodels = {json.dumps(list(MODELS))}\n'
                                          f'probes = ["relationship-levy", "genmo"]\n'
                                          + SMALL.replace("[probes.genmo]\nsample_k = 30", "[probes.genmo]\nsample_k = 35"))
    result = suite("--config", str(toml), "--out", str(folder))
    assert result.exit_code == 0, result.output
    after = {p: p.stat().st_mtime_ns for p in folder.glob("*/*/results.json")}
    assert {p.parent.name for p in before if before[p] != after[p]} == {"genmo"}
    runs = json.loads((folder / "suite.json").read_text())["runs"]
    assert {r["probe"]: r["skipped"] for r in runs} == {"relationship-levy": True, "genmo": False}
    assert {r["probe"]: r["seconds"] is None for r in runs} == {"relationship-levy": True, "genmo": False}
    assert all(r["status"] == "done" for r in runs)
    assert load_results(folder / runs[1]["results"])["parameters"]["probe"]["sample_k"] == 35


@pytest.mark.parametrize("text,named", [
    ('[suite]\nmodel = ["reference:biased"]\n', "'model'"),
    ('[suite]\nmodels = "reference:biased"\n', "suite.models"),
    ('[suite]\nprobes = ["relationship-levi"]\n', "suite.probes"),
    ('[suite]\nseed = -1\n', "suite.seed"),
    ('[probes.relationship-levi]\nsample_k = 3\n', "[probes.relationship-levi]"),
    ('[probes.relationship-levy]\nsampel_k = 3\n', "probes.relationship-levy.sampel_k"),
    ('[probes.relationship-levy]\nsample_k = "many"\n', "probes.relationship-levy.sample_k"),
    ('[probes.genmo]\nablation = "gender"\n', "probes.genmo.ablation"),
    ('[sweet]\nmodels = []\n', "[sweet]"),
    ('[generation]\ntemperature = 9\n', "generation.temperature"),
])
def test_a_mistake_in_the_suite_file_is_one_sentence_naming_the_key(tmp_path, text, named):
    result = suite(str(write(tmp_path / "bad.toml", text)), "-m", "reference:biased", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert message.startswith("Error: ") and "\n" not in message and "Traceback" not in message
    assert named in message and str(tmp_path / "bad.toml") in message
    assert not (tmp_path / "o").exists()


def test_the_suite_file_holds_the_run_settings_and_flags_win(tmp_path):
    toml = write(tmp_path / "suite.toml", '[suite]\nmodels = ["reference:unbiased"]\nprobes = ["relationship-levy"]\n'
                                          'seed = 3\n\n[generation]\nmax_tokens = 7\n\n[run]\nconcurrency = 3\n'
                                          '\n[probes.relationship-levy]\nsample_k = 5\nrepetitions = 2\n')
    assert suite(str(toml), "--out", str(tmp_path / "a")).exit_code == 0
    doc = load_results(tmp_path / "a/reference-unbiased/relationship-levy/results.json")
    assert doc["parameters"]["seed"] == 3 and doc["parameters"]["generation"]["max_tokens"] == 7
    assert doc["parameters"]["probe"]["num_repetitions"] == 2
    result = suite(str(toml), "--out", str(tmp_path / "b"), "--seed", "5", "--max-tokens", "9",
                   "-m", "reference:biased")
    assert result.exit_code == 0, result.output
    doc = load_results(tmp_path / "b/reference-biased/relationship-levy/results.json")
    assert doc["parameters"]["seed"] == 5 and doc["parameters"]["generation"]["max_tokens"] == 9
    assert not (tmp_path / "b/reference-unbiased").exists()


def test_fail_on_mark_exits_3_naming_the_run_after_writing_everything(tmp_path):
    toml = write(tmp_path / "suite.toml", SMALL)
    result = suite(str(toml), *[a for m in MODELS for a in ("-m", m)], "--probes", "relationship-levy",
                   "--out", str(tmp_path / "out"), "--fail-on-mark", "b")
    assert result.exit_code == 3, result.output
    message = result.output.strip()
    assert "\n" not in message and "relationship-levy on reference:biased diff_success_rate: D" in message
    assert "reference:unbiased" not in message
    assert json.loads((tmp_path / "out/suite.json").read_text())["complete"] is True
    assert (tmp_path / "out/report.html").is_file()
    assert (tmp_path / "out/reference-unbiased/relationship-levy/results.json").is_file()


def test_probes_that_need_a_judge_run_only_with_one(tmp_path):
    assert "multilingual-dialogue" not in default_probes(False)
    assert "multilingual-dialogue" in default_probes(True) and "relationship-levy" in default_probes(False)
    result = suite("-m", "reference:biased", "--probes", "multilingual-dialogue", "--out", str(tmp_path))
    assert result.exit_code == 2 and "--judge" in result.output and not list(tmp_path.iterdir())


def test_a_failed_run_is_recorded_and_the_others_go_on(tmp_path):
    toml = write(tmp_path / "suite.toml", '[suite]\nmodels = ["openai:nobody-listens", "reference:biased"]\n'
                                          'probes = ["relationship-levy"]\n' + SMALL)
    result = suite(str(toml), "--out", str(tmp_path / "out"), "--base-url", "http://127.0.0.1:9/v1",
                   "--max-retries", "0", env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 1, result.output
    assert "1 of 2 runs failed" in result.output and "openai:nobody-listens" in result.output
    failed, done = json.loads((tmp_path / "out/suite.json").read_text())["runs"]
    assert failed["status"] == "failed" and "cannot connect" in failed["error"]
    assert done["status"] == "done" and (tmp_path / "out" / done["results"]).is_file()
    cells = overview((tmp_path / "out/report.html").read_text())
    assert cells[("relationship-levy", "diff_success_rate", "openai:nobody-listens")]["status"] == "failed"


def test_text_from_models_and_settings_is_escaped_in_the_report(tmp_path):
    hostile = "<script>alert(1)</script>"
    with OpenAITestServer(api_key=KEY) as server:
        result = suite(str(write(tmp_path / "suite.toml", SMALL)), "-m", f"openai:{hostile}",
                       "--probes", "relationship-levy", "--system-prompt", f"</pre>{hostile}",
                       "--base-url", server.base_url, "--out", str(tmp_path / "out"), env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.output
    page = (tmp_path / "out/report.html").read_text()
    only_the_answer_browser_runs(page)  # the model's name is in the answers' data, escaped
    assert "&lt;/pre&gt;&lt;script&gt;" in page  # the system prompt, closing no element
    assert html.escape(hostile, quote=False) in page and html.escape(f"openai:{hostile}") in page
    assert KEY not in page


def stored(cache: Path) -> int:
    """Answers in the response store."""
    with contextlib.closing(sqlite3.connect(cache / "responses.sqlite3")) as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def test_a_killed_suite_resumes_skipping_finished_runs_and_asking_nothing_twice(tmp_path):
    toml = write(tmp_path / "suite.toml", '[suite]\nmodels = ["openai:test-model", "reference:unbiased"]\n'
                                          'probes = ["relationship-levy", "genmo"]\n'
                                          + SMALL.replace("sample_k = 20", "sample_k = 60"))  # 60 + 120 prompts
    out, cache = tmp_path / "out", tmp_path / "cache"
    args = [str(toml), "--out", str(out), "--cache-dir", str(cache), "--concurrency", "2"]
    levy = out / "openai-test-model/relationship-levy/results.json"
    with OpenAITestServer(api_key=KEY, latency=0.03) as server:
        args += ["--base-url", server.base_url]
        # 1. The suite in its own process, SIGKILLed once the first run is written and the second
        #    has stored some of its answers.
        killed = subprocess.Popen([sys.executable, "-m", "genderprobe", "suite", "--resamples", "100", "-q", *args],
                                  env={**os.environ, "OPENAI_API_KEY": KEY},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not (levy.exists() and stored(cache) > 60 + 5) and time.monotonic() < deadline:
            assert killed.poll() is None, killed.stderr.read()
            time.sleep(0.005)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        killed.stderr.close()
        runs = json.loads((out / "suite.json").read_text())["runs"]
        assert [r["status"] for r in runs] == ["done", "running", "pending", "pending"]
        kept, levy_bytes = stored(cache), levy.read_bytes()

        # 2. Run it again: the finished run is skipped, and only answers not stored are asked for.
        server.reset_counts()
        result = suite(*args, env={"OPENAI_API_KEY": KEY})
        assert result.exit_code == 0, result.output
    asked_levy = {json.loads(line)["prompt"] for line in levy.with_name("records.jsonl").read_text().splitlines()}
    assert not asked_levy & set(server.requests) and levy.read_bytes() == levy_bytes
    assert max(server.requests.values()) == 1
    genmo = load_results(out / "openai-test-model/genmo/results.json")
    assert genmo["run"]["cached"] == kept - len(asked_levy) > 0
    assert server.total_requests == genmo["run"]["requests"] - genmo["run"]["cached"] > 0
    manifest = json.loads((out / "suite.json").read_text())
    assert manifest["complete"] and [r["skipped"] for r in manifest["runs"]] == [True, False, False, False]
    cells = overview((out / "report.html").read_text())
    assert len(cells) == 2 * len({(p, m) for p, m, _ in cells}) and all("value" in c for c in cells.values())


def test_the_default_probes_leave_out_log_likelihood_ones_where_a_model_cannot_give_them(tmp_path):
    """A chat API gives no log-likelihoods of raw text: with no probes named, winogender, crows-pairs and
    stereoset are left out for it (one line says so) and kept for a model that gives them (a server said to,
    ?loglikelihood=1); named, they are asked."""
    from genderprobe.interfaces.api import RunConfig
    from genderprobe.interfaces.suite import plan

    models = ["openai:gpt-4o-mini", "reference:random", "openai:served?loglikelihood=1"]
    everything = default_probes(with_judge=False)
    suite = plan(models, everything, {}, RunConfig(model=""), tmp_path, every_probe=True)
    asked = {(r.model, r.probe.name) for r in suite.runs}
    unfit = {"winogender", "crows-pairs", "stereoset"}
    assert asked == {(m, p) for m in models for p in everything} - {("openai:gpt-4o-mini", p) for p in unfit}
    assert len(suite.left_out) == 1 and "openai:gpt-4o-mini" in suite.left_out[0]
    assert all(name in suite.left_out[0] for name in unfit)
    named = plan(models, ["crows-pairs"], {}, RunConfig(model=""), tmp_path)
    assert len(named.runs) == 3 and not named.left_out  # named: asked, and refused in one sentence if unfit


def test_the_backends_said_to_give_log_likelihoods_are_those_that_do():
    import importlib

    from genderprobe.models import BACKENDS, LOGLIKELIHOOD_BACKENDS

    pytest.importorskip("torch")
    pytest.importorskip("vllm")
    gives = set()
    for prefix, (module, _) in BACKENDS.items():
        classes = [c for c in vars(importlib.import_module(module)).values()
                   if isinstance(c, type) and c.__module__ == module and hasattr(c, "supports_loglikelihood")]
        if any(c.supports_loglikelihood for c in classes):
            gives.add(prefix)
    assert gives == LOGLIKELIHOOD_BACKENDS
