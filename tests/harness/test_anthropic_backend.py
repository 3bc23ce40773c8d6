"""``anthropic:MODEL`` through the official SDK, pointed at a local Messages-API server."""

from __future__ import annotations

import pytest

pytest.importorskip("anthropic")

from genderprobe.engine.runner import Runner  # noqa: E402
from genderprobe.engine.store import Store  # noqa: E402
from genderprobe.errors import FatalModelError, UserError  # noqa: E402
from genderprobe.models import GenerationParams, ModelOptions, Request, get_model  # noqa: E402
from genderprobe.testing.anthropic_server import AnthropicTestServer  # noqa: E402
from genderprobe.testing.background import quiet_aiohttp_logs  # noqa: E402

quiet_aiohttp_logs()

KEY = "sk-ant-test-0f9e8d7c"


def requests(n: int, system: str | None = None) -> list[Request]:
    pairs = [("Adam", "Emma"), ("Emma", "Adam")]
    return [
        Request.user(f"Case {i}: who is right, (a) {pairs[i % 2][0]} or (b) {pairs[i % 2][1]}?", system=system,
                     params=GenerationParams(temperature=0.0, max_tokens=5))
        for i in range(n)
    ]


def model(server: AnthropicTestServer, key: str = KEY, timeout: float = 5.0):
    return get_model("anthropic:claude-test", ModelOptions(base_url=server.base_url, api_key=key, timeout=timeout))


def runner(m, store=None, **kw) -> Runner:
    settings = dict(concurrency=8, backoff_base=0.01, backoff_max=0.05, cooldown=0.0)
    settings.update(kw)
    return Runner(m, store, **settings)


def test_answers_with_system_prompt_tokens_and_cache(tmp_path):
    with AnthropicTestServer(api_key=KEY, p_man=1.0) as server:
        with Store(tmp_path / "s.sqlite3") as store:
            r = runner(model(server), store)
            answers = r(requests(6, system="Answer with (a) or (b)."))
            r.close()
            assert [a.text for a in answers] == ["(a)", "(b)"] * 3
            assert answers[0].prompt_tokens > 0 and answers[0].completion_tokens == 1
            assert server.total_requests == 6
            assert server.last_params["temperature"] == 0.0 and server.last_params["max_tokens"] == 5
            server.reset_counts()
            again = runner(model(server), store)
            assert [a.text for a in again(requests(6, system="Answer with (a) or (b)."))] == ["(a)", "(b)"] * 3
            again.close()
            assert server.total_requests == 0


def test_faults_are_retried_and_overload_backs_off(tmp_path):
    with AnthropicTestServer(api_key=KEY, retry_after=0.01, slow_seconds=1.0,
                             faults={"429": 0.1, "529": 0.1, "500": 0.05, "drop": 0.05, "malformed": 0.05, "slow": 0.03},
                             seed=4) as server:
        r = runner(model(server, timeout=0.3), None, max_retries=10)
        answers = r(requests(120))
        r.close()
    assert all(a.ok for a in answers)
    # Every fault the server injected cost one retry, and the server saw no request the client did
    # not send; an attempt a starved machine timed out before the server read it is never counted.
    assert 120 + sum(server.faults.injected.values()) <= server.total_requests <= 120 + r.stats.retries
    assert r.stats.throttled > 0 and r.limit.lowest < 8


@pytest.mark.parametrize(
    ("server_kw", "key", "message"),
    [({"api_key": KEY}, "sk-ant-wrong", "rejected the key"), ({"model": "other"}, KEY, "does not know model")],
)
def test_fatal_errors_stop_the_run(server_kw, key, message):
    with AnthropicTestServer(**server_kw) as server:
        r = runner(model(server, key=key), None)
        with pytest.raises(FatalModelError, match=message) as info:
            r(requests(500))
        r.close()
        assert server.total_requests <= 8
    assert key not in str(info.value)


def test_missing_key_and_option_scoring_are_refused(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    # Built without a key (a dry run sends nothing); refused before anything is sent.
    keyless = get_model("anthropic:claude-test", ModelOptions(base_url="http://127.0.0.1:9"))
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        keyless.check_credentials()
    with AnthropicTestServer() as server:
        r = runner(model(server), None)
        with pytest.raises(FatalModelError, match="no log-probabilities"):
            r([Request.user("(a) Adam or (b) Emma?", options=("(a)", "(b)"), score_options=True)])
        r.close()
