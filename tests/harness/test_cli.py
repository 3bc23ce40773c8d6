import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from genderprobe.interfaces.cli import main


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
    result = invoke("run", "relationship-levy", "-m", "reference:first-option", "--sample-k", "5", "--json")
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
        (["--model", "reference:random", "--score-options"], None),
        # Not offered to a probe that asks no judge, rather than accepted and ignored.
        (["--model", "reference:random", "--judge", "reference:random"], "No such option '--judge'"),
    ],
)
def test_bad_input_gives_one_sentence_and_nonzero_exit(tmp_path, args, message):
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "relationship-levy", *args, "--out", str(out)])
    if message is None:  # a valid combination
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


@pytest.mark.parametrize("records", ["jsonl", "parquet"])
def test_a_run_killed_with_sigkill_leaves_no_temporaries_behind_the_next_run(tmp_path, records):
    import os
    import signal
    import time

    out = tmp_path / "out"
    env = {**os.environ, "GENDERPROBE_CACHE_DIR": str(tmp_path / "cache")}
    # A run big enough to be mid-way when it is killed.
    proc = subprocess.Popen(
        [sys.executable, "-m", "genderprobe", "run", "relationship-levy", "-m", "reference:random",
         "--sample-k", "2000000", "--quiet", "--out", str(out), "--records", records],
        env=env,
    )
    deadline = time.monotonic() + 60
    while not list(out.glob(f".records.{records}.*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert list(out.glob(f".records.{records}.*"))  # what a killed writer leaves
    result = invoke("run", "relationship-levy", "-m", "reference:random", "--sample-k", "5", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["records.jsonl", "results.json"]


def test_run_help_lists_the_model_then_the_probes_own_options_and_only_what_it_uses():
    result = CliRunner().invoke(main, ["run", "relationship-levy", "--help"])
    options = [line.split()[0].rstrip(",") for line in result.output.splitlines() if line.startswith("  -")]
    assert options[:3] == ["-m", "--sample-k", "--repetitions"]
    assert "--judge" not in options and "--checker" not in options
    assert "--reader-judge" in options and "--score-options" in options
    dialogue = CliRunner().invoke(main, ["run", "multilingual-dialogue", "--help"]).output
    assert "--judge TEXT" in dialogue and "--score-options" not in dialogue


def test_help_imports_no_probe_and_no_scipy():
    """`genderprobe --help` took 0.9 s, 0.73 s of it importing scipy; a fresh interpreter shows what it imports."""
    code = ("import json, sys; from click.testing import CliRunner; from genderprobe.interfaces.cli import main; "
            "CliRunner().invoke(main, ['--help']); print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out)
    assert "scipy" not in loaded
    assert not [m for m in loaded if m.startswith("genderprobe.studies.") and m.split(".")[-1].endswith("probe")]


def test_hf_without_its_extra_names_the_extra_in_one_sentence(tmp_path, monkeypatch):
    """It printed ModuleNotFoundError: No module named 'torch' with a traceback and exit 1."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, package=None: None if name in ("torch", "transformers") else real(name, package))
    (tmp_path / "config.json").write_text("{}")
    result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", f"hf:{tmp_path}", "--sample-k", "2"])
    assert result.exit_code == 2
    assert "pip install 'genderprobe[hf]'" in result.output and "Traceback" not in result.output


def test_fail_on_mark_exits_3_after_writing_the_results(tmp_path):
    args = ["run", "relationship-levy", "-m", "reference:biased", "--sample-k", "30", "--out", str(tmp_path)]
    gated = CliRunner().invoke(main, [*args, "--fail-on-mark", "C"])
    assert gated.exit_code == 3
    assert "diff_abs_success_rate: D" in gated.output and "worse than C" in gated.output
    assert (tmp_path / "results.json").exists() and (tmp_path / "records.jsonl").exists()
    assert CliRunner().invoke(main, [*args, "--fail-on-mark", "D"]).exit_code == 0
    unbiased = ["run", "relationship-levy", "-m", "reference:unbiased", "--sample-k", "30", "--fail-on-mark", "a"]
    assert CliRunner().invoke(main, unbiased).exit_code == 0
    bad = CliRunner().invoke(main, [*args, "--fail-on-mark", "E"])
    assert bad.exit_code == 2 and "one of A, B, C, D" in bad.output


def test_the_end_of_a_run_says_how_to_read_it_and_how_to_make_the_report(tmp_path):
    out = CliRunner().invoke(main, ["run", "relationship-levy", "-m", "reference:biased", "--sample-k", "20",
                                    "--out", str(tmp_path)]).output
    assert "(men minus women)" in out and "A (healthy) to D (catastrophic)" in out
    assert f"genderprobe report {tmp_path}" in out


def test_options_a_probe_is_not_offered_take_their_defaults():
    """An option left out of a probe's command (genmo has no options to score) must read as off, not as
    click's unset marker, which is true."""
    result = CliRunner().invoke(main, ["run", "genmo", "-m", "reference:random", "--sample-k", "2", "--quiet"])
    assert result.exit_code == 0, result.output


def test_an_unknown_probe_names_the_closest_one_and_where_the_list_is():
    result = CliRunner().invoke(main, ["run", "relationship-lev", "-m", "reference:random"])
    assert result.exit_code == 2
    assert "Unknown probe 'relationship-lev'; did you mean 'relationship-levy'?" in result.output
    assert "'genderprobe probes' lists them." in result.output
    far = CliRunner().invoke(main, ["run", "zzz"])
    assert far.exit_code == 2 and "Unknown probe 'zzz'. 'genderprobe probes' lists them." in far.output


def test_a_missing_extra_names_its_packages_in_a_sentence():
    from genderprobe.errors import UserError
    from genderprobe.models.hf import require_packages

    with pytest.raises(UserError, match=r"needs no_such_pkg_a and no_such_pkg_b, which are not installed"):
        require_packages("hf", ("no_such_pkg_a", "no_such_pkg_b"))
    with pytest.raises(UserError, match=r"needs no_such_pkg_a, which is not installed"):
        require_packages("hf", ("no_such_pkg_a",))


def test_commands_defined_elsewhere_are_listed_as_their_modules_define_them():
    """`genderprobe --help` lists them from cli.ELSEWHERE without importing them: the table must be true."""
    import importlib
    import pkgutil

    import genderprobe.interfaces.cli_commands as pkg
    from genderprobe.interfaces.cli import ELSEWHERE

    modules = [f"{pkg.__name__}.{info.name}" for info in pkgutil.iter_modules(pkg.__path__)]
    modules += ["genderprobe.studies.fifty_shades.commands"]
    defined = {command.name: (module, command.get_short_help_str(10_000))
               for module in modules for command in getattr(importlib.import_module(module), "COMMANDS", [])}
    assert defined == ELSEWHERE


def test_help_and_a_run_import_only_what_they_need():
    code = ("import sys, runpy; sys.argv = ['genderprobe', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('genderprobe', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('genderprobe.studies.')"
            " and m.count('.') > 2}), 'jinja2' in sys.modules, file=sys.stderr)")
    helped = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True, check=True)
    assert helped.stderr.splitlines()[-1] == "[] False"  # no study, no report
    ran = subprocess.run([sys.executable, "-c", code, "run", "isear", "--model", "reference:random", "--sample-k",
                          "40", "--no-cache", "--resamples", "50"], capture_output=True, text=True, check=True)
    assert ran.stderr.splitlines()[-1] == "['isear'] False"  # its own study's modules only
