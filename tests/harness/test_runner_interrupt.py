"""Ctrl-C and SIGTERM end a run cleanly, keeping every answer.

(A run killed with SIGKILL resumes to the same results, asking only for what is
missing: tests/harness/test_kill_trials.py kills twenty runs at random moments.)"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from instruments import fake_key

from genderprobe.testing import OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs

quiet_aiohttp_logs()

KEY = fake_key("resume-test-key-5f3a")
SAMPLE_K = 150  # 300 prompts


def cli(server: OpenAITestServer, cache, out) -> list[str]:
    return [
        sys.executable, "-m", "genderprobe", "run", "relationship-levy",
        "--model", "openai:test-model", "--base-url", server.base_url,
        "--sample-k", str(SAMPLE_K), "--concurrency", "4", "--resamples", "200",
        "--cache-dir", str(cache), "--out", str(out), "--quiet",
    ]


def env() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": KEY}


def stored(cache) -> int:
    with sqlite3.connect(cache / "responses.sqlite3") as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


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
        received = server.total_requests
    assert proc.returncode == 130, err
    assert "Interrupted" in err and "Traceback" not in err and "never retrieved" not in err
    # The requests in flight when it stopped were let finish: every request sent was kept.
    assert stored(tmp_path / "cache") == received
    assert list((tmp_path / "out").iterdir()) == []
