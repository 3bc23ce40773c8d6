"""The config file and the run-engine flags, end to end through the CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from genderprobe.errors import UserError
from genderprobe.interfaces.cli import main
from genderprobe.interfaces.config import load_config
from genderprobe.testing import OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs

quiet_aiohttp_logs()


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, ["run", "relationship-levy", "--resamples", "50", *args], env=env)


def test_config_file_sets_generation_model_and_run_settings_and_flags_win(tmp_path):
    with OpenAITestServer(api_key="sk-conf") as server:
        config = tmp_path / "genderprobe.toml"
        config.write_text(
            "[generation]\ntemperature = 0.3\nmax_tokens = 8\nsystem_prompt = \"Answer briefly.\"\n"
            f'[model]\nbase_url = "{server.base_url}"\napi_key_env = "CONF_KEY"\ntimeout = 5\n'
            f'[run]\nconcurrency = 3\nmax_error_rate = 0.5\ncache_dir = "{tmp_path / "c"}"\n'
        )
        result = run("--model", "openai:m", "--sample-k", "5", "--config", str(config),
                     "--temperature", "0.9", "--json", env={"CONF_KEY": "sk-conf"})
        assert result.exit_code == 0, result.output
        doc = json.loads(result.output)
        assert doc["parameters"]["generation"] == {"temperature": 0.9, "max_tokens": 8}
        assert doc["parameters"]["system_prompt"] == "Answer briefly."
        assert doc["run"]["cache"] == str(tmp_path / "c" / "responses.sqlite3")
        assert server.total_requests == 10 and server.max_in_flight <= 3
        assert all(call.startswith("Bearer sk-conf") for call in server.auth_headers)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[generation]\ntemprature = 0.3\n", "unknown key 'temprature' in [generation]"),
        ("[genration]\n", "unknown section [genration]"),
        ("[run]\nconcurrency = 0\n", "run.concurrency = 0, but it must be at least 1"),
        ("[run]\nmax_error_rate = 2\n", "max_error_rate = 2, but it must be at most 1"),
        ('[model]\nbase_url = "localhost:8000"\n', "must be an http:// or https:// URL"),
        ('[model]\napi_key = ""\n', "api_key = ***"),
        ("[run\n", "not valid TOML"),
    ],
)
def test_config_mistakes_are_one_sentence(tmp_path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(UserError, match=message.replace("[", r"\[").replace("*", r"\*")):
        load_config(path)
    result = run("--model", "reference:random", "--config", str(path))
    assert result.exit_code == 2 and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rpm", "0"], "--rpm 0.0 is not allowed: it must be above 0"),
        (["--max-error-rate", "1.5"], "--max-error-rate 1.5 is not allowed"),
        (["--concurrency", "0"], "--concurrency 0 is not allowed"),
        (["--max-retries", "-1"], "--max-retries -1 is not allowed"),
        (["--config", "/nonexistent/genderprobe.toml"], "does not exist"),
    ],
)
def test_bad_run_engine_flags_exit_2(args, message):
    result = run("--model", "reference:random", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_config_file_from_the_environment(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    path.write_text("[generation]\ntemperature = 0.25\n")
    monkeypatch.setenv("GENDERPROBE_CONFIG", str(path))
    assert load_config().generation == {"temperature": 0.25}
    result = run("--model", "reference:random", "--sample-k", "3", "--json")
    assert json.loads(result.output)["parameters"]["generation"]["temperature"] == 0.25


def test_too_many_errors_exit_1_with_one_sentence_and_no_results(tmp_path):
    with OpenAITestServer(faults={"500": 1.0}) as server:
        result = run("--model", "openai:m", "--base-url", server.base_url, "--sample-k", "20",
                     "--max-retries", "0", "--out", str(tmp_path / "out"), "--quiet",
                     env={"OPENAI_API_KEY": "sk-x"})
    assert result.exit_code == 1  # a run that failed at run time, not a bad command
    assert "--max-error-rate" in result.output and "HTTP 500" in result.output
    assert not (tmp_path / "out" / "results.json").exists()
