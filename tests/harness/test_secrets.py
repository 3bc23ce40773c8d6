"""The API key never reaches the store, results, records, logs, exports or error messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.errors import UserError
from genderprobe.interfaces.cli import main
from genderprobe.models import ModelOptions, get_model
from genderprobe.testing import OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs

quiet_aiohttp_logs()

KEY = fake_key("live-7c1e9d0b4a2f4e55b6aa-secret")


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_api_key_appears_in_no_written_file(tmp_path):
    cache, out, logs = tmp_path / "cache", tmp_path / "out", tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "MY_PROVIDER_KEY": KEY}
    # The server echoes the Authorization header in its error messages, and a
    # fifth of the requests fail for good (no retries), so errors reach the store,
    # the records and the results.
    with OpenAITestServer(api_key=KEY, echo_key=True, faults={"500": 0.2}, seed=2) as server:
        commands = {
            "run": [
                "run", "relationship-levy", "--model", "openai:m", "--base-url", server.base_url,
                "--api-key-env", "MY_PROVIDER_KEY", "--sample-k", "40", "--max-retries", "0",
                "--max-error-rate", "1", "--cache-dir", str(cache), "--out", str(out), "--resamples", "50",
            ],
            "json": [
                "run", "relationship-levy", "--model", "openai:m", "--base-url", server.base_url,
                "--api-key-env", "MY_PROVIDER_KEY", "--sample-k", "40", "--json",
                "--cache-dir", str(cache), "--resamples", "50",
            ],
        }
        for name, args in commands.items():
            done = subprocess.run([sys.executable, "-m", "genderprobe", *args], env=env,
                                  capture_output=True, timeout=120)
            (logs / f"{name}.stdout").write_bytes(done.stdout)
            (logs / f"{name}.stderr").write_bytes(done.stderr)
            assert done.returncode == 0, done.stderr.decode()
        # The cache commands run in this process (faster); their output is kept as logs too.
        for name, args in {
            "info": ["cache", "info", "--cache-dir", str(cache)],
            "export": ["cache", "export", str(tmp_path / "export.jsonl"), "--cache-dir", str(cache)],
        }.items():
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 0, result.output
            (logs / f"{name}.out").write_text(result.output)
        assert server.auth_headers[f"Bearer {KEY}"] > 0  # the key really was sent
        assert server.faults.injected["500"] > 0
    written = files_under(tmp_path)
    names = {p.name for p in written}
    assert {"responses.sqlite3", "results.json", "records.jsonl", "export.jsonl"} <= names
    for path in written:
        assert KEY.encode() not in path.read_bytes(), f"the key leaked into {path}"
    # The echoed key was scrubbed, not silently dropped with the error.
    assert b"Bearer [redacted]" in (cache / "responses.sqlite3").read_bytes() + b"".join(
        p.read_bytes() for p in cache.glob("*-wal")
    )


def test_model_identity_and_repr_hold_no_credentials(monkeypatch):
    # Credentials in the URL are the key here: a request cannot carry both (see below).
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    options = ModelOptions(base_url="http://user:pw-secret@127.0.0.1:9/v1?key=q-secret")
    model = get_model("openai:m", options)
    assert model.identity == "openai:m@http://127.0.0.1:9/v1"
    assert "secret" not in model.identity and "secret" not in model.spec
    assert KEY not in repr(ModelOptions(api_key=KEY))


def test_a_url_with_credentials_and_a_key_is_refused_without_showing_either():
    # aiohttp refuses to send both, so this used to fail at the first request with a traceback.
    options = ModelOptions(base_url="http://user:pw-secret@127.0.0.1:9/v1", api_key=KEY)
    with pytest.raises(UserError, match="carries a user name and password and an API key") as caught:
        get_model("openai:m", options)
    assert "secret" not in str(caught.value) and KEY not in str(caught.value)
