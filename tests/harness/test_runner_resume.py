"""A run SIGKILLed halfway resumes to the same results, asking only for what is missing."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from instruments import fake_key

from genderprobe.api import RunConfig, run_probe
from genderprobe.models import ModelOptions
from genderprobe.testing import OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs

quiet_aiohttp_logs()

KEY = fake_key("resume-test-key-5f3a")
SAMPLE_K = 150  # 300 prompts
COMPARED = ("metrics", "marks", "breakdowns", "tables", "counts")


def cli(server: OpenAITestServer, cache, out) -> list[str]:
    return [
        sys.executable, "-m", "genderprobe", "run", "relationship-levy",
        "--model", "openai:test-model", "--base-url", server.base_url,
        "--sample-k", str(SAMPLE_K), "--concurrency", "4", "--resamples", "200",
        "--cache-dir", str(cache), "--out", str(out), "--quiet",
    ]


def env() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": KEY}


def run_here(server: OpenAITestServer, cache) -> dict:
    config = RunConfig(
        model="openai:test-model",
        model_options=ModelOptions(base_url=server.base_url, api_key=KEY),
        concurrency=4, n_resamples=200, cache_dir=cache,
    )
    return run_probe("relationship-levy", "openai:test-model", config=config, sample_k=SAMPLE_K).document


def stored(cache) -> int:
    with sqlite3.connect(cache / "responses.sqlite3") as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def test_sigkilled_run_resumes_to_identical_results(tmp_path):
    with OpenAITestServer(api_key=KEY, latency=0.02, p_man=0.7) as server:
        # 1. Start a run and SIGKILL it once about half the prompts are answered.
        killed = subprocess.Popen(cli(server, tmp_path / "cache", tmp_path / "out"), env=env(),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while sum(server.answered.values()) < 2 * SAMPLE_K // 2 and time.monotonic() < deadline:
            if killed.poll() is not None:
                raise AssertionError(f"the run ended before it was killed: {killed.stderr.read()!r}")
            time.sleep(0.005)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        answered_before_kill = sum(server.answered.values())
        kept = stored(tmp_path / "cache")
        assert 0 < kept < 2 * SAMPLE_K
        # Lost: at most the requests in flight (4) and the last flush interval's answers.
        assert answered_before_kill - kept <= 4 + 0.5 / 0.02 * 4
        assert not (tmp_path / "out" / "results.json").exists()

        # 2. Run again (in this process, to keep the test fast): only the missing prompts reach the server.
        server.reset_counts()
        resumed_doc = run_here(server, tmp_path / "cache")
        assert server.total_requests == 2 * SAMPLE_K - kept
        assert max(server.requests.values()) == 1
        assert resumed_doc["run"]["cached"] == kept

        # 3. An uninterrupted run in a fresh cache gives the same results.
        server.reset_counts()
        whole_doc = run_here(server, tmp_path / "cache2")
        assert server.total_requests == 2 * SAMPLE_K
    for part in COMPARED:
        assert resumed_doc[part] == whole_doc[part], part
    assert whole_doc["run"]["errors"] == resumed_doc["run"]["errors"] == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_keeps_every_answer_received_and_leaves_no_files(tmp_path, sig):
    # Ctrl-C used to raise KeyboardInterrupt inside whichever task ran (often
    # aiohttp's), printing "Task exception was never retrieved" tracebacks. kill,
    # timeout(1) and job schedulers send SIGTERM, on which Python died on the
    # spot, losing the last flush interval's answers and leaving a temp file.
    with OpenAITestServer(api_key=KEY, latency=0.02, p_man=0.7) as server:
        proc = subprocess.Popen(cli(server, tmp_path / "cache", tmp_path / "out"), env=env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while sum(server.answered.values()) < SAMPLE_K // 2 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.005)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        answered = sum(server.answered.values())
    assert proc.returncode == 130, err
    assert "Interrupted" in err and "Traceback" not in err and "never retrieved" not in err
    # Only the requests in flight (4) may be answered by the server and never read.
    assert answered - 4 <= stored(tmp_path / "cache") <= answered
    assert list((tmp_path / "out").iterdir()) == []
