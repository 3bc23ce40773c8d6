"""A run that stops finishes what it paid for: the requests in flight land in the store.

On a fatal error, the error budget, Ctrl-C or SIGTERM, the requests in flight
used to be cancelled though the server went on to answer (and bill) them: 1 to
8 of them were paid again on every resume. Now nothing more is sent, the
requests in flight get a short grace period to land in the store, the error
says how many were kept, and a second Ctrl-C stops at once.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time

import pytest
from instruments import fake_key

from genderprobe.engine.runner import Runner, TooManyErrors
from genderprobe.engine.store import Store
from genderprobe.errors import FatalModelError
from genderprobe.models import ModelOptions, Request, get_model
from genderprobe.testing import OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs
from genderprobe.testing.quick_runs import start_run

quiet_aiohttp_logs()

KEY = fake_key("grace-test-key-41c9")


class FailsAtOnce(OpenAITestServer):
    """Answers "fail" prompts at once with ``status``; every other prompt after ``latency``."""

    def __init__(self, status: int, **kwargs):
        super().__init__(**kwargs)
        self.status = status

    async def _chat(self, request):
        from genderprobe.testing.openai_server import _error

        body = await request.json()
        if body["messages"][-1]["content"].startswith("fail"):
            with self._lock:
                self.requests[body["messages"][-1]["content"]] += 1
            return _error(self.status, "injected failure")
        return await super()._chat(request)


def stored(path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


@pytest.mark.parametrize(("status", "error", "settings"), [
    (401, FatalModelError, {}),
    (500, TooManyErrors, {"max_retries": 0, "max_error_rate": 0.0}),
])
def test_a_stop_lets_the_requests_in_flight_land_and_says_so(tmp_path, status, error, settings):
    prompts = ["first", "second", "fail now", "third", "fourth", "never sent", "never sent either"]
    with FailsAtOnce(status, api_key=KEY, latency=0.4) as server, Store(tmp_path / "s.sqlite3") as store:
        model = get_model("openai:grace", ModelOptions(base_url=server.base_url, api_key=KEY))
        runner = Runner(model, store, concurrency=4, **settings)
        try:
            with pytest.raises(error, match=r"3 answers kept"):
                runner([Request.user(p) for p in prompts])
        finally:
            runner.close()
        assert server.total_requests == 5  # nothing was sent after the failure
    assert stored(tmp_path / "s.sqlite3") == 4  # the first, and the three in flight when it stopped


def command(server, cache, out) -> list[str]:
    return ["run", "relationship-levy", "--model", "openai:grace", "--base-url", server.base_url,
            "--sample-k", "20", "--concurrency", "4", "--resamples", "20", "--cache-dir", str(cache),
            "--out", str(out)]


def start_and_wait_for_four_in_flight(server, tmp_path):
    run = start_run(command(server, tmp_path / "cache", tmp_path / "out"), env={"OPENAI_API_KEY": KEY},
                    log=tmp_path / "run.log")
    deadline = time.monotonic() + 30
    while server.in_flight < 4 and time.monotonic() < deadline:
        assert run.is_alive(), (tmp_path / "run.log").read_text()
        time.sleep(0.005)
    return run


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_keeps_the_answers_of_the_requests_in_flight(tmp_path, sig):
    with OpenAITestServer(api_key=KEY, latency=0.6) as server:
        run = start_and_wait_for_four_in_flight(server, tmp_path)
        os.kill(run.pid, sig)
        run.join(30)
        said = (tmp_path / "run.log").read_text()
        received = server.total_requests
    assert run.exitcode == 130, said
    assert "the 4 requests in flight when it stopped were let finish: 4 answers kept" in said
    assert "Ctrl-C again to stop at once" in said and "Traceback" not in said
    assert stored(tmp_path / "cache" / "responses.sqlite3") == received  # every request sent was kept


def test_a_second_ctrl_c_stops_at_once(tmp_path):
    with OpenAITestServer(api_key=KEY, latency=0.0) as server:
        run = start_run(command(server, tmp_path / "cache", tmp_path / "out"), env={"OPENAI_API_KEY": KEY},
                        log=tmp_path / "run.log")
        deadline = time.monotonic() + 30
        while not server.answered and time.monotonic() < deadline:
            time.sleep(0.002)
        server.latency = 30.0  # the first request, alone, was answered at once; the next four hang
        while server.in_flight < 4 and time.monotonic() < deadline:
            assert run.is_alive(), (tmp_path / "run.log").read_text()
            time.sleep(0.005)
        os.kill(run.pid, signal.SIGINT)
        time.sleep(0.3)
        started = time.monotonic()
        os.kill(run.pid, signal.SIGINT)
        run.join(30)
        waited = time.monotonic() - started
        said = (tmp_path / "run.log").read_text()
    assert run.exitcode == 130, said
    assert waited < 5
    assert "the 4 requests in flight were abandoned" in said and "Traceback" not in said
