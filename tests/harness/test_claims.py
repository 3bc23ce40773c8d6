"""One payer per prompt across processes: claims in the store.

Two identical runs started together on one store used to pay in full each
(1,200 requests for 600 prompts). A run now claims the prompts it asks; the
other waits for those answers instead of paying for them again, and a dead
run's claims do not hold anybody up.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import time

from instruments import fake_key

from genderprobe.engine.claims import Claims
from genderprobe.engine.store import Store, request_key
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models import ModelOptions, Request, Response
from genderprobe.testing import OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs
from genderprobe.testing.quick_runs import start_run

quiet_aiohttp_logs()

KEY = fake_key("claims-test-key-77aa")
SAMPLE_K = 100  # 200 prompts


def command(server, cache, out) -> list[str]:
    return ["run", "relationship-levy", "--model", "openai:claims-test", "--base-url", server.base_url,
            "--sample-k", str(SAMPLE_K), "--concurrency", "8", "--resamples", "20", "--cache-dir", str(cache),
            "--out", str(out), "--quiet"]


def test_two_identical_runs_started_together_pay_for_each_prompt_once(tmp_path):
    env = {"OPENAI_API_KEY": KEY}
    with OpenAITestServer(api_key=KEY, latency=0.02, p_man=0.7) as server:
        runs = [start_run(command(server, tmp_path / "cache", tmp_path / f"out{i}"), env=env,
                          log=tmp_path / f"run{i}.log") for i in range(2)]
        for i, run in enumerate(runs):
            run.join(120)
            assert run.exitcode == 0, (tmp_path / f"run{i}.log").read_text()
        total = server.total_requests
    assert total <= 1.05 * 2 * SAMPLE_K, total
    docs = [json.loads((tmp_path / f"out{i}" / "results.json").read_text()) for i in range(2)]
    assert docs[0]["metrics"] == docs[1]["metrics"]
    # Each run accounts for what it paid and what it waited for.
    assert sum(d["run"]["sent"] for d in docs) == total
    assert sum(d["run"]["waited"] for d in docs) > 0
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0  # each run released its own


def test_a_killed_runs_claims_hold_nobody_up(tmp_path):
    env = {"OPENAI_API_KEY": KEY}
    with OpenAITestServer(api_key=KEY, latency=0.5, p_man=0.7) as server:
        run = start_run(command(server, tmp_path / "cache", tmp_path / "out"), env=env, log=tmp_path / "run.log")
        deadline = time.monotonic() + 30
        while server.in_flight < 8 and time.monotonic() < deadline:  # past the first request: claims held
            assert run.is_alive(), (tmp_path / "run.log").read_text()
            time.sleep(0.005)
        os.kill(run.pid, signal.SIGKILL)
        run.join()
        with sqlite3.connect(tmp_path / "cache" / "responses.sqlite3") as db:
            assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] > 0
        server.latency = 0.0
        started = time.monotonic()
        config = RunConfig(model_options=ModelOptions(base_url=server.base_url, api_key=KEY), concurrency=8,
                           n_resamples=20, cache_dir=tmp_path / "cache")
        doc = run_probe("relationship-levy", "openai:claims-test", config=config, sample_k=SAMPLE_K).document
        # Not held up by the dead process's claims (they would live 30 s).
        assert time.monotonic() - started < 10
    assert doc["run"]["cached"] + doc["run"]["sent"] == 2 * SAMPLE_K


def _keys(n):
    return [request_key("m", Request.user(f"prompt {i}")) for i in range(n)]


def test_whose_claims_stop_a_run_and_whose_do_not(tmp_path):
    path = tmp_path / "responses.sqlite3"
    keys = _keys(6)
    with Store(path) as store:
        store.put_many("m", [(keys[0], Response(text="(a)"))])
        now, here = time.time(), socket.gethostname()
        store.db.executemany("INSERT INTO claims VALUES (?, ?, ?, ?, ?)", [
            (keys[1], "live-elsewhere", "another-host", 1, now + 30),
            (keys[2], "lapsed-elsewhere", "another-host", 1, now - 1),
            (keys[3], "dead-here", here, _dead_pid(), now + 30),
            (keys[4], "live-here", here, os.getpid(), now + 30),
        ])
        claims = Claims()
        db = store.connect()
        db.execute("BEGIN IMMEDIATE")
        claimed = claims.claim(db, keys)
        db.execute("COMMIT")
        assert claimed.answered == [keys[0]]
        assert claimed.busy == [keys[1], keys[4]]
        assert claimed.mine == [keys[2], keys[3], keys[5]]
        owners = dict(db.execute("SELECT key, owner FROM claims"))
        assert {k for k, o in owners.items() if o == claims.owner} == {keys[2], keys[3], keys[5]}
        claims.release(db)
        assert db.execute("SELECT COUNT(*) FROM claims WHERE owner = ?", (claims.owner,)).fetchone()[0] == 0
        db.close()


def _dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid
