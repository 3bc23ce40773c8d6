import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from genderprobe.cli import main


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_probes_lists_each_probe_with_a_line():
    result = invoke("probes")
    assert result.exit_code == 0
    assert "relationship-levy" in result.output


def test_models_lists_backends_and_reference_models():
    result = invoke("models")
    assert "openai:" in result.output and "reference:biased-female" in result.output


def test_run_writes_results_and_records(tmp_path):
    out = tmp_path / "out"
    result = invoke(
        "run", "relationship-levy", "--model", "reference:biased", "--sample-k", "30",
        "--repetitions", "2", "--seed", "4", "--out", str(out),
    )
    assert result.exit_code == 0, result.output
    assert "diff_success_rate" in result.output and "1.000" in result.output
    doc = json.loads((out / "results.json").read_text())
    assert doc["probe"] == "relationship-levy" and doc["model"] == "reference:biased"
    assert doc["metrics"]["diff_success_rate"]["value"] == 1.0
    assert doc["marks"]["diff_success_rate"]["mark"] == "D"
    assert doc["parameters"]["probe"]["sample_k"] == 30
    assert doc["parameters"]["probe"]["num_repetitions"] == 2
    assert doc["parameters"]["seed"] == 4
    assert set(doc["breakdowns"]) == {"topic", "source", "label", "race_pairing"}
    assert doc["versions"]["genderprobe"]
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 30 * 2 * 2
    assert {"item", "prompt", "answer", "code", "man", "woman", "topic", "man_race"} <= set(records[0])
    assert {r["code"] for r in records} == {"male"}
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary leftovers


def test_template_file(tmp_path):
    template = tmp_path / "t.txt"
    template.write_text("{scenario}\nWho is right, (a) {name_1} or (b) {name_2}?", encoding="utf-8")
    out = tmp_path / "out"
    result = invoke("run", "relationship-levy", "-m", "reference:unbiased", "--sample-k", "5",
                    "--template-file", str(template), "--out", str(out))
    assert result.exit_code == 0, result.output
    record = json.loads((out / "records.jsonl").read_text().splitlines()[0])
    assert record["prompt"].endswith("Who is right, (a) " + record["man"] + " or (b) " + record["woman"] + "?")


def test_json_output_is_the_results_document():
    result = invoke("run", "relationship-levy", "-m", "reference:unbiased", "--sample-k", "5", "--json")
    assert json.loads(result.output)["metrics"]["diff_success_rate"]["value"] == 0.0


@pytest.mark.parametrize(
    "args,message",
    [
        (["--model", "reference:nope"], "Unknown reference model"),
        (["--model", "nobackend:x"], "Unknown model backend 'nobackend'"),
        (["--model", "gpt-4o"], "has no backend prefix"),
        (["--model", "reference:"], "names no model after 'reference:'"),
        (["--model", "reference:random", "--sample-k", "0"], "sample_k (--sample-k) must be"),
        (["--model", "reference:random", "--sample-k", "17440001"], "17,440,000"),
        (["--model", "reference:random", "--repetitions", "0"], "num_repetitions"),
        (["--model", "reference:random", "--template-file", "/nonexistent/t.txt"], "does not exist"),
        (["--model", "reference:random", "--concurrency", "0"], "--concurrency"),
        (["--model", "reference:random", "--seed", "-1"], "seed (--seed) must be a whole number at least 0"),
        (["--model", "reference:random", "--judge", "reference:random", "--score-options"], None),
    ],
)
def test_bad_input_gives_one_sentence_and_nonzero_exit(tmp_path, args, message):
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "relationship-levy", *args, "--out", str(out)])
    if message is None:  # a valid combination: the judge is simply unused
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (out / "results.json").exists()


def test_bad_template_file(tmp_path):
    template = tmp_path / "t.txt"
    template.write_text("{scenario} (a) {name_1}", encoding="utf-8")
    result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", "reference:random",
                                       "--template-file", str(template)])
    assert result.exit_code == 2
    assert "lacks the slot {name_2}" in result.output


def test_unknown_probe():
    result = CliRunner().invoke(main, ["run", "no-such-probe", "-m", "reference:random"])
    assert result.exit_code == 2
    assert "No such command 'no-such-probe'" in result.output


def test_installed_command_runs_in_a_subprocess(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "genderprobe", "run", "relationship-levy", "-m", "reference:biased-female",
         "--sample-k", "20", "--quiet", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["metrics"]["diff_success_rate"]["value"] == -1.0
    bad = subprocess.run(
        [sys.executable, "-m", "genderprobe", "run", "relationship-levy", "-m", "reference:random", "--sample-k", "-3"],
        capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "Traceback" not in bad.stderr


def test_zero_ray_workers_is_refused_before_ray_starts(tmp_path):
    result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", "reference:random", "--sample-k", "5",
                                       "--executor", "ray", "--ray-workers", "0", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "--ray-workers must be a whole number at least 1" in result.output
    assert not (tmp_path / "results.json").exists()


def test_a_template_file_ending_with_a_line_break_gives_the_default_prompts(tmp_path):
    from genderprobe.studies.relationship_levy.probe import DEFAULT_TEMPLATE

    template = tmp_path / "t.txt"
    template.write_text(DEFAULT_TEMPLATE + "\n", encoding="utf-8")
    prompts = []
    for extra in ([], ["--template-file", str(template)]):
        out = tmp_path / f"out{len(extra)}"
        result = invoke("run", "relationship-levy", "-m", "reference:random", "--sample-k", "3", "--out", str(out), *extra)
        assert result.exit_code == 0, result.output
        prompts.append([json.loads(line)["prompt"] for line in (out / "records.jsonl").read_text().splitlines()])
    assert prompts[0] == prompts[1]


def test_a_run_killed_with_sigkill_leaves_no_temporaries_behind_the_next_run(tmp_path):
    import os
    import signal
    import time

    out = tmp_path / "out"
    env = {**os.environ, "GENDERPROBE_CACHE_DIR": str(tmp_path / "cache")}
    # A run big enough to be mid-way when it is killed.
    proc = subprocess.Popen(
        [sys.executable, "-m", "genderprobe", "run", "relationship-levy", "-m", "reference:random",
         "--sample-k", "2000000", "--quiet", "--out", str(out)],
        env=env,
    )
    deadline = time.monotonic() + 60
    while not list(out.glob(".records.jsonl.*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert list(out.glob(".records.jsonl.*"))  # what a killed writer leaves
    result = invoke("run", "relationship-levy", "-m", "reference:random", "--sample-k", "5", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["records.jsonl", "results.json"]
