"""What a run sends is bounded and never early: --max-requests counts sends, a long Retry-After
is shown or stops the run, and an answer that is not UTF-8 is paid for once.

Found by an attack on the answer store: with 40% server faults --max-requests 20 let 27
requests through (it counted prompts); a one-day Retry-After was waited 310 s in silence and
the request then sent 86,090 s early; a body with bytes that are not UTF-8 was taken for
malformed JSON and asked 7 times.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from aiohttp import web
from instruments import fake_key

from genderprobe.testing import OpenAITestServer
from genderprobe.testing.anthropic_server import AnthropicTestServer
from genderprobe.testing.background import quiet_aiohttp_logs
from genderprobe.testing.quick_runs import start_run

quiet_aiohttp_logs()

KEY = fake_key("send-bounds-key-7a21")


def run(server, tmp_path: Path, *extra: str, sample_k: int = 10, model: str = "openai:bounds-test",
        key_env: str = "OPENAI_API_KEY") -> tuple[int, str]:
    """One CLI run in its own process: (exit code, what it printed)."""
    log = tmp_path / f"run-{time.monotonic_ns()}.log"
    args = ["run", "relationship-levy", "--model", model, "--base-url", server.base_url, "--sample-k",
            str(sample_k), "--resamples", "20", "--cache-dir", str(tmp_path / "cache"), "--out",
            str(tmp_path / "out"), *extra]
    process = start_run(args, env={key_env: KEY, "GENDERPROBE_CACHE_DIR": str(tmp_path / "user-cache")}, log=log)
    process.join(120)
    return process.exitcode, log.read_text()


def error_lines(said: str) -> list[str]:
    return [line for line in said.splitlines() if line.startswith("Error:")]


def test_max_requests_bounds_the_sends_with_retries_under_40_percent_faults(tmp_path):
    with OpenAITestServer(api_key=KEY, faults={"500": 0.4}, seed=3) as server:
        code, said = run(server, tmp_path, "--max-requests", "20", "--quiet")  # 20 prompts
        assert code == 1 and "Traceback" not in said, said
        assert server.total_requests == 20, server.stats()
        [error] = error_lines(said)
        assert "the 20 requests --max-requests allows, retries included" in error
        answered = sum(server.answered.values())
        # The answers it paid for are kept: a run without faults asks only for the rest.
        server.faults.clear()
        server.reset_counts()
        code, said = run(server, tmp_path, "--max-requests", "20", "--quiet")
        assert code == 0, said
        assert server.total_requests == 20 - answered


def test_a_retry_after_beyond_max_retry_wait_stops_at_once_keeping_the_answers(tmp_path):
    """A one-day Retry-After: one sentence and exit 1 within seconds, nothing sent early."""
    with OpenAITestServer(api_key=KEY, faults={"429": 0.15}, retry_after=86_400, seed=2) as server:
        started = time.monotonic()
        code, said = run(server, tmp_path, "--quiet")
        assert time.monotonic() - started < 30
        assert code == 1 and "Traceback" not in said, said
        [error] = error_lines(said)
        assert "asked to wait 86,400 s" in error and "--max-retry-wait 300 allows" in error
        answered = sum(server.answered.values())
        assert server.total_requests - answered <= 8  # only the throttled requests in flight, none retried
        server.faults.clear()
        server.reset_counts()
        code, said = run(server, tmp_path, "--quiet")
        assert code == 0, said
        assert server.total_requests == 20 - answered


class OneThrottle(OpenAITestServer):
    """Throttles the first request (Retry-After: ``retry_after``) and notes when each request arrives."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.arrived: list[float] = []

    async def _chat(self, request):
        self.arrived.append(time.monotonic())
        return await super()._chat(request)


def test_a_long_retry_after_is_shown_with_its_end_and_never_cut_short(tmp_path):
    with OneThrottle(api_key=KEY, retry_after=11) as server:
        server.faults.push("429")
        code, said = run(server, tmp_path, "--sample-k", "2", "--max-retry-wait", "60")
        assert code == 0, said
        assert re.search(r"Waiting 1[12] s, until \d\d:\d\d:\d\d, before sending again to openai:bounds-test, "
                         r"as the server asked \(Retry-After\)\.", said), said
        assert server.arrived[1] - server.arrived[0] >= 11  # the first goes alone; the rest waited


def test_max_retry_wait_is_the_users_to_set(tmp_path):
    with OpenAITestServer(api_key=KEY, retry_after=11) as server:
        server.faults.push("429")
        code, said = run(server, tmp_path, "--max-retry-wait", "5", "--quiet")
        assert code == 1 and "--max-retry-wait 5 allows" in error_lines(said)[0], said
        code, said = run(server, tmp_path, "--max-retry-wait", "-1", "--quiet")
        assert code == 2 and "--max-retry-wait" in said and "Traceback" not in said, said


class NotUtf8(OpenAITestServer):
    """Answers with a byte that is not UTF-8 in the answer text, as a broken proxy may."""

    async def _chat(self, request):
        response = await super()._chat(request)
        if response.status != 200:
            return response
        body = response.body.replace(b'"content": "', b'"content": "\xff', 1)
        return web.Response(status=200, body=body, content_type="application/json")


class NotUtf8Messages(AnthropicTestServer):
    async def _messages(self, request):
        response = await super()._messages(request)
        if response.status != 200:
            return response
        body = response.body.replace(b'"text": "', b'"text": "\xff', 1)
        return web.Response(status=200, body=body, content_type="application/json")


def test_an_answer_that_is_not_utf8_is_paid_for_once_and_noted(tmp_path):
    with NotUtf8(api_key=KEY) as server:
        code, said = run(server, tmp_path, "--quiet", "--sample-k", "3")
        assert code == 0, said
        assert server.total_requests == 6 and max(server.requests.values()) == 1
    records = (tmp_path / "out" / "records.jsonl").read_text(encoding="utf-8")
    assert records.count("body not UTF-8: bytes replaced with U+FFFD") == 6
    assert "\\ufffd" in records or "\ufffd" in records


def test_an_anthropic_answer_that_is_not_utf8_is_paid_for_once_and_noted(tmp_path):
    with NotUtf8Messages(api_key=KEY) as server:
        code, said = run(server, tmp_path, "--quiet", "--sample-k", "3", model="anthropic:claude-bounds-test",
                         key_env="ANTHROPIC_API_KEY")
        assert code == 0, said
        assert server.total_requests == 6 and max(server.requests.values()) == 1
    records = (tmp_path / "out" / "records.jsonl").read_text(encoding="utf-8")
    assert records.count("body not UTF-8: bytes replaced with U+FFFD") == 6
