"""Reasoning models, provider quirks and one-sentence diagnosis, against real local servers.

Every case goes end to end: get_model -> Runner -> HTTP on 127.0.0.1 -> QuirkyServer,
and the commonest mistakes also through `python -m genderprobe run`.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from instruments import fake_key
from quirky_server import DATED, REASONING, QuirkyServer

from genderprobe.engine.runner import Runner
from genderprobe.engine.store import Store
from genderprobe.errors import FatalModelError, ModelError, UserError
from genderprobe.interfaces.config import load_config
from genderprobe.models import GenerationParams, ModelOptions, Request, get_model
from genderprobe.models.openai_compatible import REASONING_FAMILY
from genderprobe.testing.background import quiet_aiohttp_logs

quiet_aiohttp_logs()

KEY = fake_key("quirks-5d1c0a9e7b3f4a21")


def prompts(n: int, **params) -> list[Request]:
    pairs = [("Adam", "Emma"), ("Emma", "Adam")]
    return [
        Request.user(f"Case {i}: who is right, (a) {pairs[i % 2][0]} or (b) {pairs[i % 2][1]}? Answer (a) or (b).",
                     options=("(a)", "(b)"), params=GenerationParams(**params))
        for i in range(n)
    ]


def openai_model(base_url: str, spec: str = "openai:o3-mini", key: str | None = KEY, **extra):
    return get_model(spec, ModelOptions(base_url=base_url, api_key=key, timeout=5.0, extra=extra))


def ask(model, requests, store=None, **kw):
    """Run the requests through a Runner; (answers, runner stats)."""
    settings = dict(concurrency=8, backoff_base=0.01, backoff_max=0.05, cooldown=0.0)
    runner = Runner(model, store, **{**settings, **kw})
    try:
        return runner(requests), runner.stats
    finally:
        runner.close()


def fatal(model, n: int = 50, **params) -> str:
    """The one sentence a run of ``n`` requests stops with."""
    with pytest.raises(FatalModelError) as info:
        ask(model, prompts(n, **params))
    text = str(info.value)
    assert "\n" not in text and KEY not in text
    return text


# -- reasoning models -----------------------------------------------------------


@pytest.mark.parametrize("name", ["o1", "o1-mini", "o3-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-mini",
                                  "gpt-5.1", "openai/o3-mini", "azure/o1"])
def test_reasoning_families_are_known_by_name(name):
    assert REASONING_FAMILY.match(name)


@pytest.mark.parametrize("name", ["gpt-4o", "gpt-4o-mini", "o10", "gpt-50", "llama-o1", "meta/llama-3-8b", "oss/o3x"])
def test_other_names_are_not_reasoning_families(name):
    assert not REASONING_FAMILY.match(name)


def test_a_known_reasoning_model_gets_its_fields_renamed_and_dropped_without_a_refusal(tmp_path):
    params = dict(temperature=0.0, top_p=0.9, max_tokens=50, reasoning_effort="low")
    with QuirkyServer(reasoning=True) as server, Store(tmp_path / "s.sqlite3") as store:
        model = openai_model(server.base_url)
        answers, stats = ask(model, prompts(12, **params), store)
        # No request was refused: the name said what the model takes.
        assert len(server.hits) == 12 and stats.errors == 0 and stats.retries == 0
        for hit in server.hits:
            assert hit.body["max_completion_tokens"] == 50 and hit.body["reasoning_effort"] == "low"
            assert not {"max_tokens", "temperature", "top_p"} & set(hit.body)
        assert [a.text for a in answers] == ["(a)", "(b)"] * 6  # the reasoning stays out of the answer
        first = answers[0]
        assert first.reasoning == REASONING
        assert (first.served_model, first.fingerprint, first.finish_reason) == ("o3-mini" + DATED, "fp_quirky01", "stop")
        assert first.completion_tokens > 1  # reasoning tokens are billed as answer tokens
        assert model.effective_params(GenerationParams(**params)) == {"max_completion_tokens": 50, "reasoning_effort": "low"}
        assert model.notes == [
            "max_tokens was sent as max_completion_tokens, the only name o3-mini takes",
            "temperature 0 was not sent: o3-mini accepts only the default (1)",
            "top_p 0.9 was not sent: o3-mini accepts only the default (1)",
        ]
        # The cache key is the user's request: a second run finds every answer stored.
        again, stats = ask(openai_model(server.base_url), prompts(12, **params), store)
        assert stats.cached == 12 and len(server.hits) == 12
        assert [a.reasoning for a in again] == [a.reasoning for a in answers]


def test_a_temperature_of_one_is_still_sent_to_a_reasoning_model():
    with QuirkyServer(reasoning=True) as server:
        answers, _ = ask(openai_model(server.base_url), prompts(2, temperature=1.0, top_p=1.0))
        assert all(a.ok for a in answers)
        assert server.hits[0].body["temperature"] == 1.0 and server.hits[0].body["top_p"] == 1.0


def test_an_unknown_name_learns_each_quirk_from_one_refusal():
    with QuirkyServer(reasoning=True) as server:
        model = openai_model(server.base_url, spec="openai:my-reasoner")
        answers, stats = ask(model, prompts(40, temperature=0.0, max_tokens=30))
        assert all(a.ok for a in answers)
        # The first request went out alone and was refused twice (max_tokens, then
        # temperature); it was sent again each time, and no refusal counts as a failure.
        assert len(server.hits) == 42 and stats.errors == 0 and stats.retries == 0
        assert "max_tokens" in server.hits[0].body and "temperature" in server.hits[1].body
        assert all(set(h.body) >= {"max_completion_tokens"} and "temperature" not in h.body for h in server.hits[2:])
        assert model.effective_params(GenerationParams(temperature=0.0, max_tokens=30)) == {"max_completion_tokens": 30}
        assert len(model.notes) == 2 and "temperature 0 was not sent" in model.notes[1]


def test_the_payload_carries_the_renamed_fields_and_the_body_extras():
    # The batch API sends model.payload(request) as is: it needs every fix too.
    model = openai_model("http://127.0.0.1:9/v1", body={"stop": ["\n"]})
    body = model.payload(prompts(1, temperature=0.5, max_tokens=20)[0])
    assert body["max_completion_tokens"] == 20 and body["stop"] == ["\n"]
    assert "temperature" not in body and "max_tokens" not in body


# -- reasoning content ----------------------------------------------------------------


def test_a_leading_think_block_is_reasoning_not_answer():
    with QuirkyServer(think=True) as server:
        answers, _ = ask(openai_model(server.base_url, spec="openai:qwen3"), prompts(4))
    assert [a.text for a in answers] == ["(a)", "(b)"] * 2
    assert all(a.reasoning == REASONING and a.served_model == "qwen3" for a in answers)


def test_a_null_content_is_an_empty_answer_not_an_error():
    # The backend answers "" and says why; counting empty answers is the runner's business.
    async def generate(model, request):
        try:
            return await model.generate(request)
        finally:
            await model.aclose()

    with QuirkyServer(null_content=True) as server:
        answer = asyncio.run(generate(openai_model(server.base_url, spec="openai:deepseek-reasoner"), prompts(1)[0]))
    assert (answer.ok, answer.text, answer.finish_reason) == (True, "", "length")


# -- diagnosis ------------------------------------------------------------------------


def test_a_web_page_instead_of_the_api_is_one_sentence_after_one_request():
    with QuirkyServer(html=True) as server:
        url = server.url
        text = fatal(openai_model(url + "/chat"))
        assert len(server.hits) == 1
    assert f"the server at {url}/chat answered with a web page, not the API's JSON" in text
    assert "point --base-url at the API itself (for most servers it ends in /v1)" in text


def test_a_404_on_a_base_url_without_v1_asks_whether_v1_was_meant():
    with QuirkyServer() as server:
        url = server.url
        text = fatal(openai_model(url))
        assert len(server.hits) == 1
    assert f"did you mean {url}/v1?" in text


def test_an_unknown_model_is_named_with_the_models_the_server_serves():
    with QuirkyServer(served=("llama-3.1-8b", "qwen3-4b")) as server:
        text = fatal(openai_model(server.base_url, spec="openai:gpt-4o"))
        assert len(server.chat_hits()) == 1  # and one GET /v1/models
    assert "does not know model openai:gpt-4o" in text and "(it serves llama-3.1-8b, qwen3-4b)" in text


@pytest.mark.parametrize(
    ("reject", "shape", "params", "extra", "expected"),
    [
        ("top_p", "openai", {"top_p": 0.5}, {}, "does not accept top_p for openai:m (HTTP 400: Unsupported parameter"),
        ("seed", "vllm", {"seed": 3}, {}, "does not accept seed for openai:m"),
        ("top_k", "vllm", {}, {"body": {"top_k": 40}}, "does not accept top_k for openai:m"),
    ],
)
def test_an_unsupported_field_is_named_with_how_to_drop_it(reject, shape, params, extra, expected):
    hint = {"top_p": "drop --top-p", "seed": "drop --generation-seed", "top_k": "remove top_k from [model.body]"}
    with QuirkyServer(reject=[reject], error_shape=shape) as server:
        text = fatal(openai_model(server.base_url, spec="openai:m", **extra), **params)
        assert len(server.hits) == 1
    assert expected in text and hint[reject] in text


def test_a_field_the_reasoning_model_still_refuses_is_named_not_learned_twice():
    # Once temperature is dropped, top_p=1 is sent; a server refusing even that is named.
    with QuirkyServer(reasoning=True, reject=["top_p"]) as server:
        text = fatal(openai_model(server.base_url), top_p=1.0)
        assert len(server.hits) == 1
    assert "does not accept top_p for openai:o3-mini" in text and "drop --top-p" in text


def test_malformed_json_stays_a_transient_error():
    from genderprobe.models.openai_compatible import _parse

    with pytest.raises(ModelError) as info:
        _parse(b'{"choices": [{"message": ', prompts(1)[0])
    assert not info.value.fatal and info.value.kind == "malformed"


# -- Azure, extra body fields and headers ----------------------------------------------


def test_azure_sends_the_key_in_api_key_and_the_api_version_in_the_query():
    with QuirkyServer(azure_key=KEY) as server:
        model = openai_model(server.url + "/openai/deployments/gpt-4o", spec="openai:gpt-4o",
                             api_key_header="api-key", api_version="2024-10-21")
        answers, _ = ask(model, prompts(4))
        assert all(a.ok for a in answers)
        for hit in server.hits:
            assert hit.path == "/openai/deployments/gpt-4o/chat/completions"
            assert hit.query == {"api-version": "2024-10-21"}
            assert hit.headers["api-key"] == KEY and "Authorization" not in hit.headers
        # The API version is protocol, not model: answers stored under either version still count.
        assert model.identity == f"openai:gpt-4o@{server.url}/openai/deployments/gpt-4o"
        assert model.endpoint == f"{server.url}/openai/deployments/gpt-4o"
        # The same version given in the URL is the same model.
        in_url = openai_model(server.url + "/openai/deployments/gpt-4o?api-version=2024-10-21", spec="openai:gpt-4o",
                              api_key_header="api-key")
        assert in_url.identity == model.identity
        # A wrong key: the server echoes it back, the sentence does not.
        wrong = fake_key("wrong-azure-key-0000")
        bad = openai_model(server.url + "/openai/deployments/gpt-4o", spec="openai:gpt-4o", key=wrong,
                           api_key_header="api-key", api_version="2024-10-21")
        text = fatal(bad)
    assert "rejected the key" in text and wrong not in text and "[redacted]" in text


def test_an_azure_host_sends_the_key_in_api_key_by_default():
    model = openai_model("https://myres.openai.azure.com/openai/deployments/gpt-4o", spec="openai:gpt-4o",
                         api_version="2024-10-21")
    assert model.api_key_header == "api-key"
    assert openai_model("http://127.0.0.1:9/v1").api_key_header is None


def test_body_fields_and_headers_are_sent_and_only_the_body_enters_the_identity():
    secret = "hdr-secret-7f3a9c"
    with QuirkyServer() as server:
        model = openai_model(server.base_url, spec="openai:m", body={"stop": ["\n"], "top_k": 40},
                             headers={"X-Title": "genderprobe", "X-Team-Token": secret})
        answers, _ = ask(model, prompts(2))
        assert all(a.ok for a in answers)
        hit = server.hits[0]
        assert hit.body["stop"] == ["\n"] and hit.body["top_k"] == 40
        assert hit.headers["X-Title"] == "genderprobe" and hit.headers["X-Team-Token"] == secret
        assert hit.headers["Authorization"] == f"Bearer {KEY}"
        plain = openai_model(server.base_url, spec="openai:m")
        reordered = openai_model(server.base_url, spec="openai:m", body={"top_k": 40, "stop": ["\n"]},
                                 headers={"X-Other": "x"})
    assert model.identity.startswith(plain.identity + "#body=") and model.identity == reordered.identity
    assert secret not in model.identity and "X-Team-Token" not in model.identity
    assert model.effective_params(GenerationParams(temperature=0.0)) == {"temperature": 0.0, "stop": ["\n"], "top_k": 40}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"body": {"temperature": 0.2}}, "must not set temperature"),
        ({"body": ["stop"]}, "must be a table of request fields"),
        ({"headers": {"X-Token": 5}}, "one-line text value"),
        ({"headers": {"Authorization": "Bearer other"}}, "sets Authorization, which carries the API key"),
        ({"api_key_header": "api key"}, "must be an HTTP header name"),
        ({"api_version": ""}, "must be a version"),
        ({"stream": True}, "has no option 'stream'"),
    ],
)
def test_bad_model_options_are_one_sentence(extra, message):
    with pytest.raises(UserError, match=message):
        openai_model("http://127.0.0.1:9/v1", spec="openai:m", **extra)


def test_the_config_file_takes_body_headers_and_azure_options_and_hides_header_values(tmp_path):
    path = tmp_path / "genderprobe.toml"
    path.write_text(
        '[model]\napi_key_header = "api-key"\napi_version = "2024-10-21"\n'
        '[model.body]\nstop = ["\\n"]\ntop_k = 40\n[model.headers]\nX-Title = "genderprobe"\n'
    )
    extra = load_config(path).model_extra()
    assert extra == {"api_key_header": "api-key", "api_version": "2024-10-21",
                     "body": {"stop": ["\n"], "top_k": 40}, "headers": {"X-Title": "genderprobe"}}
    path.write_text('[model.headers]\nX-Team-Token = "hdr-secret-7f3a9c"\n"Bad Name" = "v"\n')
    with pytest.raises(UserError) as info:
        load_config(path)
    assert "model.headers" in str(info.value) and "hdr-secret" not in str(info.value)
    path.write_text('[model.body]\nmax_tokens = 5\n')
    with pytest.raises(UserError, match="must not set max_tokens"):
        load_config(path)


# -- Anthropic -------------------------------------------------------------------------


def test_anthropic_keeps_thinking_apart_and_merges_the_body():
    pytest.importorskip("anthropic")
    with QuirkyServer() as server:
        url = server.url
        model = get_model("anthropic:claude-test", ModelOptions(
            base_url=url, api_key=KEY, timeout=5.0, extra={"body": {"top_k": 5}}))
        answers, _ = ask(model, prompts(2, temperature=0.0, seed=1))
        assert [a.text for a in answers] == ["(a)", "(b)"]
        first = answers[0]
        assert (first.reasoning, first.served_model, first.finish_reason) == (REASONING, "claude-test-20250219", "end_turn")
        body = server.hits[0].body
        assert body["top_k"] == 5 and body["max_tokens"] == 1024 and body["temperature"] == 0.0 and "seed" not in body
    assert model.effective_params(GenerationParams(temperature=0.0, seed=1)) == {
        "max_tokens": 1024, "temperature": 0.0, "top_k": 5}
    assert model.notes == ["seed was not sent: the Messages API takes no seed"]
    assert model.endpoint == url and "#body=" in model.identity
    with pytest.raises(UserError, match="has no option 'headers'"):
        get_model("anthropic:claude-test", ModelOptions(base_url=url, api_key=KEY, extra={"headers": {}}))


# -- through the command line -------------------------------------------------------------


def cli(base_url: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GENDERPROBE_CONFIG", "OPENAI_BASE_URL")}
    env.update(OPENAI_API_KEY=KEY, GENDERPROBE_CACHE_DIR=str(tmp_path / "cache"))
    args = ["run", "relationship-levy", "--model", "openai:o3-mini", "--base-url", base_url, "--sample-k", "5",
            "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "out"), "--quiet", *extra]
    return subprocess.run([sys.executable, "-m", "genderprobe", *args], env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize(
    ("server_kw", "expected"),
    [
        ({"html": True}, "answered with a web page, not the API's JSON"),
        ({}, "did you mean {url}/v1?"),
    ],
)
def test_the_command_line_says_one_sentence_after_one_request(tmp_path, server_kw, expected):
    # Both are a base URL without its /v1: a web UI at the root, or a plain 404.
    with QuirkyServer(**server_kw) as server:
        url = server.url
        done = cli(url, tmp_path)
        assert len(server.hits) == 1
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert expected.format(url=url) in output
    assert "Traceback" not in output and KEY not in output
    assert not (tmp_path / "out" / "results.json").exists()


def test_the_command_line_runs_a_reasoning_model_without_a_refusal(tmp_path):
    with QuirkyServer(reasoning=True) as server:
        done = cli(server.base_url, tmp_path, "--temperature", "0")
        assert done.returncode == 0, done.stdout + done.stderr
        assert len(server.hits) == 10  # five items, both orders; nothing refused or retried
        assert all("max_completion_tokens" in h.body and "temperature" not in h.body for h in server.hits)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert KEY not in json.dumps(results)
    # What was changed is said in the results, not only in the requests.
    assert "temperature 0 was not sent: o3-mini accepts only the default (1)" in results["warnings"]
    assert "max_tokens was sent as max_completion_tokens, the only name o3-mini takes" in results["warnings"]
