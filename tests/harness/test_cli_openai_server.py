"""`genderprobe run relationship-levy` end to end against a real OpenAI-compatible
server on 127.0.0.1 that prefers the man with a known probability."""

import json

import pytest
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.interfaces.cli import main
from genderprobe.testing.openai_server import OpenAITestServer

KEY = fake_key("test-relationship-levy-0123456789")
AMBIGUOUS = {"Alexis", "Amari", "Bailey", "Jaime", "Thanh"}


def run(server, out, *extra, key=KEY, model="openai:test-model"):
    env = {"OPENAI_API_KEY": key}
    args = ["run", "relationship-levy", "--model", model, "--base-url", server.base_url,
            "--out", str(out), "--quiet", *extra]
    return CliRunner().invoke(main, args, env=env)


@pytest.mark.parametrize("p_man,expected", [(1.0, 1.0), (0.0, -1.0)])
def test_a_fully_biased_server_gives_exactly_plus_or_minus_one(tmp_path, p_man, expected):
    with OpenAITestServer(p_man=p_man, api_key=KEY, model="test-model") as server:
        result = run(server, tmp_path, "--sample-k", "60")
        assert result.exit_code == 0, result.output
        assert server.total_requests == 120
        assert max(server.requests.values()) == 1
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["metrics"]["undetected_rate_attempts"]["value"] == 0.0
    assert doc["model"] == "openai:test-model"
    # Five Bloomberg first names are coded both male and female (Alexis, Amari,
    # Bailey, Jaime, Thanh): the server cannot tell the man there and flips a
    # coin. Every other attempt goes exactly the server's way.
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    clear = [r for r in records if not {r["man"], r["woman"]} & AMBIGUOUS]
    assert clear and {r["code"] for r in clear} == {"male" if expected > 0 else "female"}
    assert abs(doc["metrics"]["diff_success_rate"]["value"]) >= 0.9


def test_a_known_bias_is_measured_within_its_interval_and_a_rerun_is_free(tmp_path):
    with OpenAITestServer(p_man=0.7, api_key=KEY, model="test-model", seed=3) as server:
        result = run(server, tmp_path / "a", "--sample-k", "800", "--concurrency", "16")
        assert result.exit_code == 0, result.output
        sent = server.total_requests
        assert sent == 1600
        again = run(server, tmp_path / "b", "--sample-k", "800")
        assert again.exit_code == 0, again.output
        assert server.total_requests == sent  # nothing paid twice
    first = json.loads((tmp_path / "a" / "results.json").read_text())
    second = json.loads((tmp_path / "b" / "results.json").read_text())
    d = first["metrics"]["diff_success_rate"]
    assert d["ci_low"] <= 0.4 <= d["ci_high"]
    assert second["metrics"] == first["metrics"]
    assert second["run"]["cached"] == 1600 and second["run"]["sent"] == 0
    records = (tmp_path / "a" / "records.jsonl").read_text()
    assert KEY not in records and KEY not in json.dumps(first)


def test_a_rejected_key_stops_at_once_with_one_sentence(tmp_path):
    with OpenAITestServer(api_key=KEY) as server:
        result = run(server, tmp_path, "--sample-k", "500", key=fake_key("wrong-key-000000000000"))
        assert result.exit_code == 2
        assert "rejected the key" in result.output and "Traceback" not in result.output
        assert server.total_requests < 50  # stopped before thousands of failing calls
    assert not (tmp_path / "results.json").exists()


def test_an_unknown_model_stops_with_one_sentence(tmp_path):
    with OpenAITestServer(api_key=KEY, model="test-model") as server:
        result = run(server, tmp_path, "--sample-k", "20", model="openai:no-such-model")
        assert result.exit_code == 2
        assert "no-such-model" in result.output
    assert not (tmp_path / "results.json").exists()
