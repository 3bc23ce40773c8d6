"""demet and demet-names through the command line: bad input is one sentence and exit 2."""

import json

import pytest
from click.testing import CliRunner

from genderprobe.interfaces.cli import main

NAMES = "name,group\nAna,women\nBea,women\nCal,men\nDan,men\nEli,neutral\nFen,neutral\n"
SCENARIOS = "id,scenario,topic,label\nbills,NAME1 and NAME2 are married. NAME1 wants to pay the bills late.,Money,E\n"


def _invoke(*args):
    return CliRunner().invoke(main, ["run", *args, "--no-cache", "-q"])


def _one_sentence_error(result, fragment):
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: ") and fragment in lines[0]
    assert "Traceback" not in result.output


def test_unknown_scenarios_value(tmp_path):
    result = _invoke("demet", "-m", "reference:unbiased", "--scenarios", "fiction", "--out", str(tmp_path / "o"))
    _one_sentence_error(result, "Unknown --scenarios value 'fiction'; use human, gpt4 or all.")
    assert not (tmp_path / "o" / "results.json").exists()


@pytest.mark.parametrize("probe", ["demet", "demet-names"])
def test_name_list_with_too_few_names_in_a_group(tmp_path, probe):
    path = tmp_path / "names.csv"
    path.write_text(NAMES.replace("Dan,men\n", ""))
    result = _invoke(probe, "-m", "reference:unbiased", "--names-file", str(path))
    _one_sentence_error(result, "has 1 name(s) in the group 'men'; every group needs at least 2 different names.")


def test_scenario_without_both_slots(tmp_path):
    path = tmp_path / "scenarios.csv"
    path.write_text(SCENARIOS + "two,NAME1 wants a dog.,Kids,E\n")
    result = _invoke("demet", "-m", "reference:unbiased", "--scenarios-file", str(path))
    _one_sentence_error(result, "The scenario on line 3 of your scenario file (--scenarios-file) lacks a NAME1 or NAME2 slot.")


def test_odd_per_type():
    _one_sentence_error(_invoke("demet", "-m", "reference:unbiased", "--per-type", "7"), "--per-type must be even")


def test_unknown_question_and_bootstrap_unit():
    _one_sentence_error(_invoke("demet", "-m", "reference:unbiased", "--question", "x"), "use file or paper")
    _one_sentence_error(_invoke("demet", "-m", "reference:unbiased", "--bootstrap-by", "x"), "use item or scenario")


def test_missing_file():
    _one_sentence_error(
        _invoke("demet", "-m", "reference:unbiased", "--names-file", "/nonexistent/names.csv"),
        "The names file /nonexistent/names.csv does not exist.",
    )


def test_own_scenarios_and_names_run_end_to_end(tmp_path):
    (tmp_path / "names.csv").write_text(NAMES)
    (tmp_path / "scenarios.csv").write_text(SCENARIOS)
    out = tmp_path / "out"
    result = _invoke(
        "demet", "-m", "reference:biased-female", "--names-file", str(tmp_path / "names.csv"),
        "--scenarios-file", str(tmp_path / "scenarios.csv"), "--out", str(out), "--no-rewording",
    )
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text())
    assert doc["extra"]["per_type_used"] == 2 and doc["extra"]["per_type_requested"] == 20
    assert doc["counts"]["prompts"] == 9 * 2
    assert doc["metrics"]["mixed_gender_bias"]["value"] == pytest.approx(4 / 3)
    assert doc["parameters"]["probe"]["rewording"] is False
    records = (out / "records.jsonl").read_text().splitlines()
    assert len(records) == 18
    assert json.loads(records[0])["prompt"].startswith("Ana and Bea are married. Ana wants to pay the bills late.\n")


def test_demet_names_calibration_through_cli():
    result = CliRunner().invoke(main, ["run", "demet-names", "-m", "reference:biased-female", "--no-cache", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["metrics"]["women_classified_female"]["value"] == 1.0
    assert doc["metrics"]["men_classified_female"]["value"] == 1.0
    assert doc["counts"]["attempts"] == 150
