"""Credentials in the base URL and the headers never reach a file or standard error, even when a
server repeats the request in its error texts and in its answers (issue 47, items 3 and 4)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from careless_server import CarelessServer

from genderprobe.errors import ModelError
from genderprobe.models import ModelOptions, get_model
from genderprobe.models.base import Response
from genderprobe.models.credentials import MARKER, Scrubber, url_credentials
from genderprobe.testing.background import quiet_aiohttp_logs

quiet_aiohttp_logs()

USER, PASSWORD = "alice-7f3e", "pw-9c2d+s3cret"  # the "+" goes out percent-encoded in the URL
QUERY_KEY, HEADER = "q-41ab-s3cret", "hdr-5e6f-s3cret"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SECRETS = (USER, PASSWORD, "pw-9c2d%2Bs3cret", QUERY_KEY, HEADER, BASIC)


def readable(path: Path) -> bytes:
    """A file's bytes, and for Parquet (compressed) its rows as JSON too, so a search sees the text."""
    data = path.read_bytes()
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        data += json.dumps(pq.read_table(path).to_pylist(), default=str).encode()
    return data


def genderprobe(*args: str, logs: Path, name: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run([sys.executable, "-m", "genderprobe", *args], env=env, capture_output=True, timeout=180)
    (logs / f"{name}.stdout").write_bytes(done.stdout)
    (logs / f"{name}.stderr").write_bytes(done.stderr)
    return done


def test_an_echoing_server_leaves_no_credential_in_any_file_or_on_standard_error(tmp_path):
    cache, out, logs = tmp_path / "cache", tmp_path / "out", tmp_path / "logs"
    logs.mkdir()
    config = tmp_path / "genderprobe.toml"
    config.write_text(f'[model.headers]\nX-Team-Token = "{HEADER}"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    with CarelessServer(fail_share=0.25) as server:
        url = f"http://{USER}:pw-9c2d%2Bs3cret@127.0.0.1:{server.port}/v1?api_key={QUERY_KEY}"
        run = ["run", "relationship-levy", "--model", "openai:m", "--base-url", url, "--config", str(config),
               "--sample-k", "24", "--max-retries", "0", "--cache-dir", str(cache), "--resamples", "50"]
        # A quarter of the prompts fail for good: errors reach the store, the records and the results.
        done = genderprobe(*run, "--max-error-rate", "1", "--out", str(out), "--parquet",
                           "--export", "hf-dataset", str(tmp_path / "dataset"), logs=logs, name="run", env=env)
        assert done.returncode == 0, done.stderr.decode()
        # Asked again, they fail again, past the error budget: the last error's text goes to standard error.
        done = genderprobe(*run, "--max-error-rate", "0", logs=logs, name="over-budget", env=env)
        assert done.returncode == 1 and b"internal error" in done.stderr, done.stderr.decode()
        assert server.sent["500"] > 0 and server.sent["answer"] > 0
        for name, args in {"report": ["report", str(out)],
                           "export": ["cache", "export", str(tmp_path / "export.jsonl"), "--cache-dir", str(cache)]}.items():
            assert genderprobe(*args, logs=logs, name=name, env=env).returncode == 0
    written = {p: readable(p) for p in tmp_path.rglob("*") if p.is_file() and p != config}
    assert {"responses.sqlite3", "results.json", "records.jsonl", "records.parquet", "report.html",
            "export.jsonl"} <= {p.name for p in written}
    for path, data in written.items():
        for secret in SECRETS:
            # nor a part of one: an error text cut to its first 200 characters could halve a credential
            assert secret[:8].encode() not in data, f"{secret} leaked into {path}"
    # Scrubbed, not dropped: the echoes are there with the marker in place of each credential.
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    answers = [r["answer"] for r in records if "error" not in r]
    errors = [r["error"] for r in records if "error" in r]
    assert answers and errors
    assert all(f"Basic {MARKER}" in a and f"api_key={MARKER}" in a and f"X-Team-Token: {MARKER}" in a
               for a in answers)
    assert all(f"Basic {MARKER}" in e and f"api_key={MARKER}" in e for e in errors)
    assert f"Basic {MARKER}".encode() in written[out / "records.parquet"]  # the search does see into Parquet
    # and the answers were still read: the choice before the echo counts
    assert sum(r["code"] in ("male", "female") for r in records) == len(answers)


def test_the_url_credentials_are_every_form_a_server_may_echo():
    found = set(url_credentials(f"http://{USER}:pw-9c2d%2Bs3cret@h:1/v1?api_key={QUERY_KEY}&api-version=2024-10-21"))
    assert set(SECRETS) - {HEADER} <= found
    assert "2024-10-21" not in found  # the API version is genderprobe's own field, no secret
    assert url_credentials("http://h:1/v1") == []


def test_the_scrubber_replaces_the_longer_credential_first_and_skips_values_too_short_to_guard_anything():
    scrub = Scrubber(["abcd", "abcdefgh", "ab", None, ""])
    assert scrub("x abcdefgh y abcd z ab") == f"x {MARKER} y {MARKER} z ab"
    assert not Scrubber(["ab", None])


def test_a_backend_error_and_an_answer_are_scrubbed_in_place():
    options = ModelOptions(base_url=f"http://{USER}:pw-9c2d%2Bs3cret@127.0.0.1:9/v1?key={QUERY_KEY}",
                           extra={"headers": {"X-Team-Token": HEADER}})
    model = get_model("openai:m", options)
    scrub = Scrubber(model.secrets)
    error = scrub.error(ModelError(f"HTTP 500: you sent {BASIC} and {QUERY_KEY}", kind="server", status=500))
    assert str(error) == f"HTTP 500: you sent {MARKER} and {MARKER}" and error.kind == "server"
    answer = Response(text=f"(a) {HEADER}", reasoning=f"the key is {QUERY_KEY}")
    scrub.response(answer)
    assert (answer.text, answer.reasoning) == (f"(a) {MARKER}", f"the key is {MARKER}")


def test_an_error_text_is_scrubbed_before_it_is_cut_so_no_half_of_a_credential_is_left():
    model = get_model("openai:m", ModelOptions(base_url=f"http://{USER}:pw-9c2d%2Bs3cret@127.0.0.1:9/v1"))
    echo = "x" * 180 + f" Basic {BASIC}"  # the credential straddles the 200th character
    raw = json.dumps({"error": {"message": echo}}).encode()
    error = asyncio.run(model._http_error(500, raw, None, {}))
    assert BASIC[:4] not in str(error) and f"Basic {MARKER}" in str(error)


def test_answers_from_ray_workers_are_scrubbed_by_the_driver_too(tmp_path):
    # The workers hold the model; the runner that scrubs lives in the driver, which learns the secrets from them.
    pytest.importorskip("ray", reason="the scale-out tier: pip install -e '.[ray]'")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    with CarelessServer(fail_share=0.25) as server:
        url = f"http://{USER}:pw-9c2d%2Bs3cret@127.0.0.1:{server.port}/v1?api_key={QUERY_KEY}"
        done = genderprobe("run", "relationship-levy", "--model", "openai:m", "--base-url", url, "--sample-k", "8",
                           "--max-retries", "0", "--max-error-rate", "1", "--executor", "ray", "--ray-workers", "1",
                           "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "out"),
                           "--resamples", "50", logs=tmp_path, name="ray", env=env)
        assert done.returncode == 0, done.stderr.decode()
    records = (tmp_path / "out" / "records.jsonl").read_text()
    assert f"Basic {MARKER}" in records
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        data = readable(path)
        assert not [s for s in SECRETS if s[:8].encode() in data], f"a credential leaked into {path}"
