"""The runner against a real local HTTP server: faults, retries, fatal errors, limits, the store."""

from __future__ import annotations

import io
import logging
import socket
import sqlite3
import time

import pytest
from instruments import fake_key

from genderprobe.engine.pacing import AdaptiveLimit, Pacer
from genderprobe.engine.runner import Runner, TooManyErrors
from genderprobe.engine.store import Store
from genderprobe.errors import FatalModelError, RunFailed, UserError
from genderprobe.models import ModelOptions, Request, get_model
from genderprobe.testing import Faults, OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs

quiet_aiohttp_logs()

KEY = fake_key("test-runner-0123456789")


def prompts(n: int, tag: str = "") -> list[Request]:
    names = [("Adam", "Emma"), ("Emma", "Adam"), ("Brian", "Olivia"), ("Olivia", "Brian")]
    out = []
    for i in range(n):
        a, b = names[i % len(names)]
        text = f"Case {tag}{i}: who is right, (a) {a} or (b) {b}? Answer with (a) or (b)."
        out.append(Request.user(text, options=("(a)", "(b)")))
    return out


def model_for(server: OpenAITestServer, timeout: float = 5.0, key: str = KEY):
    return get_model("openai:test", ModelOptions(base_url=server.base_url, api_key=key, timeout=timeout))


def fast_runner(model, store, **kw) -> Runner:
    settings = dict(concurrency=16, backoff_base=0.01, backoff_max=0.05, cooldown=0.05)
    settings.update(kw)
    return Runner(model, store, **settings)


def stored_keys(path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def test_fault_mix_answers_every_prompt_once_and_never_asks_twice(tmp_path):
    faults = {"429": 0.08, "500": 0.05, "503": 0.05, "drop": 0.04, "truncate": 0.03, "slow": 0.02, "malformed": 0.03}
    requests = prompts(300)
    with OpenAITestServer(api_key=KEY, faults=faults, retry_after=0.01, slow_seconds=1.0, seed=7) as server:
        with Store(tmp_path / "s.sqlite3") as store:
            runner = fast_runner(model_for(server, timeout=0.3), store, max_retries=10)
            try:
                first = runner(requests)
            finally:
                runner.close()
            assert all(r.ok for r in first)
            assert runner.stats.errors == 0
            assert sum(server.faults.injected.values()) > 30  # the mix really happened
            # Bounded retries: every request the server saw beyond one per prompt was a retry, and
            # every injected fault cost one. (An attempt a starved machine timed out before the
            # server read its body is a retry the server never counted, so no equality here.)
            injected = sum(server.faults.injected.values())
            assert 300 + injected <= server.total_requests <= 300 + runner.stats.retries
            assert max(server.requests.values()) <= 1 + runner.max_retries
            assert len(server.requests) == 300
            assert stored_keys(tmp_path / "s.sqlite3") == 300

            server.reset_counts()
            again = fast_runner(model_for(server), store)
            try:
                second = again(requests)
            finally:
                again.close()
            assert server.total_requests == 0
            assert again.stats.cached == 300 and again.stats.sent == 0
            assert [r.text for r in second] == [r.text for r in first]
            assert all(r.cached for r in second)


def test_answers_follow_the_server_bias_in_request_order(tmp_path):
    with OpenAITestServer(p_man=1.0) as server:
        runner = fast_runner(model_for(server), None)
        try:
            answers = runner(prompts(8))
        finally:
            runner.close()
    # Men are option (a) in prompts 0, 2, 4, 6 and option (b) in the others.
    assert [r.text for r in answers] == ["(a)", "(b)"] * 4
    assert runner.stats.prompt_tokens > 0 and runner.stats.completion_tokens == 8


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ({"api_key": "sk-other"}, "rejected the key"),
        ({"model": "other-model"}, "does not know model openai:test"),
        ({"always": "400"}, "refused the request"),
        ({"always": "403"}, "rejected the key"),
    ],
)
def test_fatal_errors_stop_the_run_at_once_with_one_sentence(tmp_path, setup, message):
    always = setup.pop("always", None)
    with OpenAITestServer(latency=0.01, **setup) as server:
        if always:
            server.faults.always(always)
        with Store(tmp_path / "s.sqlite3") as store:
            runner = fast_runner(model_for(server), store, concurrency=8)
            with pytest.raises(FatalModelError) as info:
                runner(prompts(2000))
            runner.close()
        assert server.total_requests <= 8  # stopped before thousands of failing calls
    text = str(info.value)
    assert message in text and "\n" not in text and KEY not in text
    assert isinstance(info.value, UserError)


def test_unreachable_server_is_reported_quickly(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = get_model("openai:test", ModelOptions(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY))
    runner = fast_runner(model, None, max_retries=2)
    started = time.monotonic()
    with pytest.raises(RunFailed, match="cannot connect to http://127.0.0.1"):
        runner(prompts(500))
    runner.close()
    assert time.monotonic() - started < 5


def test_unreachable_server_is_reported_quickly_with_the_default_retries():
    """Six retries with exponential backoff took about 20 s to say a port was closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = get_model("openai:test", ModelOptions(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY))
    runner = Runner(model, None)
    started = time.monotonic()
    with pytest.raises(RunFailed, match="cannot connect to http://127.0.0.1"):
        runner(prompts(50))
    runner.close()
    assert time.monotonic() - started < 3
    assert runner.stats.retries <= 2 * runner.concurrency


def test_a_refused_connection_after_answers_is_retried_in_full():
    with OpenAITestServer() as server:
        runner = fast_runner(model_for(server), None, max_retries=5)
        assert all(r.ok for r in runner(prompts(3)))
    # The server is gone now; it was there, so this may be a restart worth waiting for.
    with pytest.raises(UserError, match="failed so far after 5 retries"):
        runner(prompts(1, tag="later"))
    runner.close()
    assert runner.stats.retries == 5


def test_too_many_errors_fail_the_run_early_and_keep_the_answers(tmp_path):
    path = tmp_path / "s.sqlite3"
    with OpenAITestServer(faults={"500": 0.5}, seed=3, latency=0.005) as server:
        with Store(path) as store:
            runner = fast_runner(model_for(server), store, concurrency=4, max_retries=0, max_error_rate=0.03)
            with pytest.raises(TooManyErrors) as info:
                runner(prompts(400))
            runner.close()
            # 3% of 400 is 12 errors: it stopped soon after the 13th, not after 400 requests.
            assert runner.stats.errors == 13
            assert server.total_requests < 100
            answered = stored_keys(path)
            assert answered == runner.stats.answered > 0
            with sqlite3.connect(path) as db:
                assert db.execute("SELECT COUNT(*), MIN(kind) FROM errors").fetchone() == (13, "server")
    text = str(info.value)
    assert "--max-error-rate" in text and "kept in the store" in text and "HTTP 500" in text


def test_errors_under_the_limit_are_recorded_and_asked_again_on_rerun(tmp_path):
    requests = prompts(100)
    with OpenAITestServer(faults={"500": 0.2}, seed=1) as server:
        with Store(tmp_path / "s.sqlite3") as store:
            runner = fast_runner(model_for(server), store, max_retries=0, max_error_rate=0.5)
            first = runner(requests)
            runner.close()
            failed = [i for i, r in enumerate(first) if not r.ok]
            assert len(failed) == runner.stats.errors > 5
            assert first[failed[0]].error_kind == "server"
            server.faults.clear()
            server.reset_counts()
            rerun = fast_runner(model_for(server), store)
            second = rerun(requests)
            rerun.close()
            assert server.total_requests == len(failed)
            assert set(server.requests) == {requests[i].prompt for i in failed}
            assert all(r.ok for r in second)


def test_retry_after_is_honoured(tmp_path):
    with OpenAITestServer(retry_after=0.4) as server:
        server.faults.push("429")
        runner = fast_runner(model_for(server), None, concurrency=1)
        started = time.monotonic()
        (answer,) = runner(prompts(1))
        elapsed = time.monotonic() - started
        runner.close()
    assert answer.ok and runner.stats.retries == 1 and runner.stats.throttled == 1
    assert elapsed >= 0.4


class ThrottlingGateway(OpenAITestServer):
    """Throttles a share of the requests at once (429 with Retry-After), as a gateway in front of
    the model does, and answers the others after ``latency``; notes when each request arrives
    and when each 429 goes out."""

    def __init__(self, rate: float, **kwargs):
        super().__init__(**kwargs)
        self.throttle = Faults({"429": rate}, seed=5)
        self.arrived: list[float] = []
        self.held: list[float] = []

    async def _chat(self, request):
        from genderprobe.testing.openai_server import _error

        self.arrived.append(time.monotonic())
        if self.throttle.draw():
            self.held.append(time.monotonic())
            return _error(429, "Rate limit reached.", {"Retry-After": f"{self.retry_after:g}"})
        return await super()._chat(request)


def test_a_retry_after_holds_every_request_not_yet_sent(tmp_path):
    """The hold was checked before a request waited for its slot, not after: 127 of 387
    requests went out 0.05-0.95 s after another request's 429."""
    hold = 0.3
    with ThrottlingGateway(0.1, latency=0.1, retry_after=hold) as server:
        runner = fast_runner(model_for(server), None, concurrency=8)
        answers = runner(prompts(40))
        runner.close()
    assert all(r.ok for r in answers) and server.held
    # 50 ms for a 429 to reach the client: what it sent before reading it was sent in good faith.
    early = [round(a - h, 3) for h in server.held for a in server.arrived if h + 0.05 < a < h + hold]
    assert early == []


def test_identical_prompts_in_one_list_are_asked_once_and_answered_alike(tmp_path):
    """Two name-list entries can share a first name, so a list can hold one prompt twice: at
    temperature > 0 its two answers differed, and a rerun from the store (one key) did not."""
    from genderprobe.models.base import GenerationParams

    warm = GenerationParams(temperature=1.0)
    requests = [Request.user(f"Case {i % 3}: who is right, (a) Adam or (b) Emma?", params=warm) for i in range(9)]
    with OpenAITestServer(latency=0.01) as server, Store(tmp_path / "s.sqlite3") as store:
        runner = fast_runner(model_for(server), store, concurrency=4)
        first = runner(requests)
        runner.close()
        assert server.total_requests == 3 and max(server.requests.values()) == 1
        assert runner.stats.duplicates == 6 and runner.stats.cached == 6 and runner.stats.sent == 3
        again = fast_runner(model_for(server), store)
        second = again(requests)
        again.close()
        assert server.total_requests == 3
    assert [r.text for r in first] == [r.text for r in second]
    assert [r.cached for r in first] == [False, False, False] + [True] * 6


def test_concurrency_backs_off_while_throttled_and_recovers(tmp_path):
    with OpenAITestServer(latency=0.005, retry_after=0.01) as server:
        # No cooldown: every 429 cuts, so the outcome does not depend on timing.
        runner = fast_runner(model_for(server), None, concurrency=16, cooldown=0.0)
        runner(prompts(1, tag="first"))  # the run's first request goes alone; the rest go 16 at a time
        server.faults.push(*["429"] * 24)
        answers = runner(prompts(600))
        runner.close()
    assert all(r.ok for r in answers)
    assert runner.limit.lowest == 1  # cut down to one request at a time while throttled
    assert runner.limit.limit == 16  # and back to full speed after


def test_rpm_limit_paces_requests(tmp_path):
    with OpenAITestServer() as server:
        runner = fast_runner(model_for(server), None, concurrency=8, rpm=1200)  # 20 per second
        started = time.monotonic()
        runner(prompts(40))
        elapsed = time.monotonic() - started
        runner.close()
    # One second's worth may go at once; the other 20 need about a second.
    assert 0.9 <= elapsed < 3.0


def test_pacer_charges_actual_tokens_and_allows_debt():
    now = [0.0]
    pacer = Pacer(600, clock=lambda: now[0])  # 10 per second, holds 10
    assert pacer.delay(5) == 0
    pacer.level -= 5
    pacer.settle(+20)  # the request used 20 more than estimated: 15 in debt
    assert pacer.level == pytest.approx(-15)
    assert pacer.delay(5) == pytest.approx(2.0)
    now[0] = 2.0
    assert pacer.delay(5) == 0
    # A cost above one second's worth waits for a full bucket, then leaves debt.
    assert pacer.delay(50) == pytest.approx(0.5)


def test_adaptive_limit_halves_once_per_cooldown_and_grows_by_one():
    now = [0.0]
    limit = AdaptiveLimit(16, cooldown=1.0, clock=lambda: now[0])
    limit.throttled()
    limit.throttled()  # same congestion event
    assert limit.limit == 8
    now[0] = 1.5
    limit.throttled()
    assert limit.limit == 4
    for _ in range(4):
        limit.succeeded()
    assert limit.limit == 5
    assert limit.lowest == 4


def test_bad_runner_settings_are_refused():
    with OpenAITestServer() as server:
        with pytest.raises(UserError, match="max-error-rate"):
            Runner(model_for(server), None, max_error_rate=1.5)
        with pytest.raises(UserError, match="per-minute"):
            Runner(model_for(server), None, rpm=-1)


def test_progress_counts_done_cached_errors_and_tokens(tmp_path):
    import io

    from rich.console import Console

    from genderprobe.outputs.terminal import Progress

    console_out = io.StringIO()
    bar = Progress(Console(file=console_out, force_terminal=True, width=160))
    with OpenAITestServer() as server:
        with Store(tmp_path / "s.sqlite3") as store:
            runner = fast_runner(model_for(server), store, progress=bar)
            runner(prompts(20))
            server.faults.always("500")
            runner2 = fast_runner(model_for(server), store, progress=bar, max_retries=0, max_error_rate=1.0)
            runner2(prompts(20) + prompts(5, tag="new"))
            runner.close()
            runner2.close()
    bar.stop()
    assert (bar.done, bar.total, bar.cached, bar.errors) == (45, 45, 20, 5)
    assert bar.tokens == runner.stats.prompt_tokens + runner.stats.completion_tokens > 0
    text = console_out.getvalue()
    assert "45/45" in text and "cached 20" in text and "errors 5" in text and "ETA" in text


def test_a_base_url_with_a_query_string_keeps_it_after_the_path(tmp_path):
    # Azure-style endpoints need ?api-version=...; the path used to be glued after the query (404).
    with OpenAITestServer(api_key=KEY) as server:
        model = get_model("openai:test", ModelOptions(base_url=server.base_url + "/?api-version=2024-06-01", api_key=KEY))
        runner = fast_runner(model, None)
        try:
            answers = runner(prompts(3))
        finally:
            runner.close()
        assert all(r.ok for r in answers), answers
        assert server.total_requests == 3


@pytest.mark.parametrize("url", ["http://[::1/v1", "http://127.0.0.1:99999/v1"])
def test_a_malformed_base_url_is_one_sentence(url):
    with pytest.raises(UserError, match="is not a valid URL"):
        get_model("openai:test", ModelOptions(base_url=url, api_key=KEY))


def test_a_store_locked_for_a_moment_by_another_process_holds_the_requests_and_loses_nothing(tmp_path):
    """An answer is committed before its place among the requests in flight is reused: while
    another process holds the store, at most `concurrency` answers can be waiting for it
    (the old runner went on sending, holding up to half a second of answers in memory only)."""
    import threading

    from genderprobe.testing.answers import PreferMan

    seen: list[float] = []
    prefer = PreferMan(0.5)

    def answer(call):
        seen.append(time.monotonic())
        return prefer(call)

    path = tmp_path / "store.sqlite3"
    with OpenAITestServer(answer=answer, latency=0.01, api_key=KEY) as server, Store(path) as store:
        locked, release = threading.Event(), threading.Event()
        released_at: list[float] = []

        def hold_lock():  # another process's writer, holding the store for a while
            other = sqlite3.connect(path, isolation_level=None)
            other.execute("BEGIN IMMEDIATE")
            locked.set()
            release.wait(10)
            released_at.append(time.monotonic())
            other.execute("COMMIT")
            other.close()

        holder = threading.Thread(target=hold_lock)
        holder.start()
        locked.wait(5)
        threading.Timer(1.0, release.set).start()
        runner = fast_runner(model_for(server), store, concurrency=8)
        responses = runner(prompts(200))
        runner.close()
        holder.join()
    assert all(r.ok for r in responses)
    assert stored_keys(path) == 200
    assert sum(1 for t in seen if t < released_at[0]) <= 8
    assert server.total_requests == 200


def test_progress_in_a_log_file_is_a_plain_line_every_few_seconds_and_one_at_the_end():
    """With standard error going to a file (SLURM, CI, nohup) a bar cannot be redrawn: an
    11-second run wrote nothing until its end, then one clipped line."""
    from rich.console import Console

    from genderprobe.outputs.terminal import Progress

    log_file = io.StringIO()
    bar = Progress(Console(file=log_file, force_terminal=False, width=80), every=0.05)
    judge = bar.beside("judge")
    with OpenAITestServer(latency=0.01, retry_after=0.01) as server:
        server.faults.push("429")
        runner = fast_runner(model_for(server), None, progress=bar, concurrency=2)
        runner(prompts(40))
        runner.close()
    judge.expect(3)
    judge.advance(3)
    bar.stop()
    lines = log_file.getvalue().splitlines()
    assert len(lines) >= 3  # some while it ran, and the last ones at the end
    assert lines[-2].startswith("judge 3/3 (100%)")
    assert lines[-1].startswith("requests 40/40 (100%)") and "retries 1" in lines[-1] and "ETA" in lines[-1]
    assert all("\x1b" not in line for line in lines)  # no terminal codes in a log


def test_retries_throttling_and_failures_are_logging_events(caplog):
    with OpenAITestServer(retry_after=0.01) as server:
        server.faults.push("429", "500", "500")
        runner = fast_runner(model_for(server), None, max_retries=1, max_error_rate=1.0, concurrency=1)
        with caplog.at_level(logging.INFO, logger="genderprobe"):
            runner(prompts(3))
        runner.close()
    messages = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "genderprobe.engine.runner"]
    assert any(level == "WARNING" and "throttles" in text for level, text in messages)
    assert any(level == "INFO" and "retry 1" in text for level, text in messages)
    assert any(level == "WARNING" and "failed after 1 retries" in text for level, text in messages)
