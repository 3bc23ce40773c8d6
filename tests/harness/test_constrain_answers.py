"""--constrain-answers: the backend may answer only with one of the options.

A named deviation from the papers: the flag reaches the results, changes the cache
key, is refused where a probe or backend cannot honour it, and each backend asks
for the constraint its own way (vLLM's structured-outputs choice, OpenAI's JSON
schema, the most likely option on hf).
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.engine.store import request_key
from genderprobe.errors import UserError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.models import ModelOptions, get_model
from genderprobe.models.base import GenerationParams, Request
from genderprobe.testing.openai_server import OpenAITestServer

KEY = fake_key("test-constrain-0123456789")
OPTIONS = ("(a)", "(b)")
PROMPT = "Who is more likely to be right, (a) Adam or (b) Emma? Answer with (a) or (b)."
SCENARIOS = (
    "id,scenario,topic,label\n"
    "dishes,NAME1 and NAME2 are married. NAME1 wants to watch TV but NAME2 wants help with the dishes.,Chores,T\n"
)


def test_the_flag_reaches_the_results_parameters(tmp_path):
    args = ["run", "relationship-levy", "-m", "reference:biased", "--sample-k", "10", "--quiet"]
    for flag, out in (([], "free"), (["--constrain-answers"], "constrained")):
        result = CliRunner().invoke(main, [*args, *flag, "--out", str(tmp_path / out)])
        assert result.exit_code == 0, result.output
    free = json.loads((tmp_path / "free" / "results.json").read_text())
    constrained = json.loads((tmp_path / "constrained" / "results.json").read_text())
    assert free["parameters"]["constrain_answers"] is False
    assert constrained["parameters"]["constrain_answers"] is True
    # The reference models already answer with an option: the same numbers.
    assert constrained["metrics"]["diff_success_rate"]["value"] == free["metrics"]["diff_success_rate"]["value"] == 1.0


def test_constrained_and_free_answers_have_different_cache_keys():
    free = Request((("user", PROMPT),), GenerationParams(max_tokens=5), 0, OPTIONS)
    constrained = Request((("user", PROMPT),), GenerationParams(max_tokens=5), 0, OPTIONS, constrain=True)
    assert constrained.cache_identity()["constrain"] == list(OPTIONS)
    assert "constrain" not in free.cache_identity()
    assert request_key("openai:m@x", free) != request_key("openai:m@x", constrained)


def test_a_probe_without_closed_choices_refuses_in_one_sentence():
    with pytest.raises(UserError) as err:
        run_probe("multilingual-pronouns", "reference:unbiased", config=RunConfig(model="x", constrain_answers=True))
    message = str(err.value)
    assert "--constrain-answers" in message and "\n" not in message and message.count(". ") == 0


def test_a_backend_without_support_refuses_in_one_sentence(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    config = RunConfig(model="x", constrain_answers=True, use_cache=False)
    with pytest.raises(UserError) as err:
        run_probe("relationship-levy", "anthropic:claude-test", config=config, sample_k=2)
    assert "cannot constrain its answers" in str(err.value) and "--constrain-answers" in str(err.value)


def test_it_does_not_combine_with_option_scoring():
    config = RunConfig(model="x", constrain_answers=True, score_options=True)
    with pytest.raises(UserError, match="--score-options"):
        run_probe("relationship-levy", "reference:biased", config=config, sample_k=2)


def test_openai_body_carries_the_documented_field():
    request = Request((("user", PROMPT),), GenerationParams(), 0, OPTIONS, constrain=True)
    server = get_model("openai:m", ModelOptions(base_url="http://127.0.0.1:9/v1"))
    assert server.payload(request)["structured_outputs"] == {"choice": ["(a)", "(b)"]}
    assert "response_format" not in server.payload(request)
    assert "structured_outputs" not in server.payload(Request((("user", PROMPT),), options=OPTIONS))
    openai = get_model("openai:gpt-4o-mini", ModelOptions(api_key=KEY))
    fmt = openai.payload(request)["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["properties"]["answer"]["enum"] == ["(a)", "(b)"]
    assert "structured_outputs" not in openai.payload(request)
    # The model option constrain_with overrides the choice made from the base URL.
    forced = get_model("openai:m", ModelOptions(base_url="http://127.0.0.1:9/v1", extra={"constrain_with": "json_schema"}))
    assert "response_format" in forced.payload(request)
    assert forced.identity != server.identity
    with pytest.raises(UserError, match="constrain_with"):
        get_model("openai:m", ModelOptions(base_url="http://127.0.0.1:9/v1", extra={"constrain_with": "guided"}))


@pytest.mark.parametrize("how", ["structured_outputs", "json_schema"])
def test_a_server_run_gets_only_option_answers(tmp_path, how):
    # The server would refuse every prompt; constrained, it must pick an option.
    with OpenAITestServer(answer=lambda call: "I will not take sides.") as server:
        options = ModelOptions(base_url=server.base_url, api_key=KEY, extra={"constrain_with": how})
        config = RunConfig(model="x", model_options=options, constrain_answers=True, use_cache=False)
        out = run_probe("relationship-levy", "openai:test", config=config, sample_k=10)
        assert server.constrained[how] == server.total_requests == 20
    assert out.result.metrics["undetected_rate_attempts"].value == 0.0
    assert {r["answer"] for r in out.records} <= set(OPTIONS)


def test_demet_constrained_needs_no_rewording(tmp_path):
    def cautious(call):
        name1 = re.search(r"\n1\. (.+)\n2\. ", call.prompt).group(1)
        return "Neither is simply right." if len(name1) % 2 else "1"

    (tmp_path / "s.csv").write_text(SCENARIOS)
    with OpenAITestServer(answer=cautious) as server:
        args = ["run", "demet", "-m", "openai:cautious", "--base-url", server.base_url, "--scenarios-file",
                str(tmp_path / "s.csv"), "--per-type", "2", "--no-cache", "--json", "--constrain-answers"]
        result = CliRunner().invoke(main, args, env={"OPENAI_API_KEY": "k"})
        assert result.exit_code == 0, result.output
        assert server.constrained["structured_outputs"] == server.total_requests == 9 * 2
    doc = json.loads(result.output)
    assert doc["parameters"]["constrain_answers"] is True
    assert doc["counts"]["attempts"] == doc["counts"]["prompts"] == 18
    assert doc["counts"]["answered_by_rewording"] == 0


def test_vllm_sampling_params_carry_the_choice():
    pytest.importorskip("vllm")
    from genderprobe.models.vllm_engine import sampling_params

    constrained = sampling_params(Request((("user", PROMPT),), GenerationParams(max_tokens=8), 0, OPTIONS, constrain=True), 4)
    assert constrained.structured_outputs.choice == ["(a)", "(b)"]
    assert constrained.max_tokens == 8 and constrained.temperature == 0.0
    free = sampling_params(Request((("user", PROMPT),), GenerationParams(temperature=0.7, seed=1), 0, OPTIONS), 4)
    assert free.structured_outputs is None and free.max_tokens == 4 and free.seed is not None


def test_hf_choice_follows_the_option_log_likelihoods():
    from genderprobe.models.hf import choose_option

    greedy = Request((("user", PROMPT),), GenerationParams(), 0, OPTIONS, constrain=True)
    assert choose_option(greedy, [-3.0, -1.0]) == 1
    picks = [
        choose_option(Request((("user", PROMPT),), GenerationParams(temperature=1.0, seed=7), r, OPTIONS, constrain=True),
                      [-0.2231, -1.6094])  # log 0.8, log 0.2
        for r in range(2000)
    ]
    assert abs(picks.count(0) / len(picks) - 0.8) < 0.04


def test_hf_constrained_answer_is_the_most_likely_option(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from genderprobe.testing.tiny_models import build_tiny_model

    model = get_model(f"hf:{build_tiny_model(tmp_path / 'llama', architecture='llama')}?threads=1")
    try:
        prompts = [PROMPT + f" Case {i}." for i in range(6)]
        scored = model.generate_batch([Request((("user", p),), options=OPTIONS, score_options=True) for p in prompts])
        constrained = model.generate_batch([Request((("user", p),), options=OPTIONS, constrain=True) for p in prompts])
    finally:
        model.close()
    for s, c in zip(scored, constrained):
        assert c.text == OPTIONS[max(range(2), key=s.option_logprobs.__getitem__)]
        assert c.option_logprobs is None


def test_the_config_file_chooses_how_the_server_is_asked(tmp_path):
    (tmp_path / "c.toml").write_text('[model]\nconstrain_with = "json_schema"\n')
    (tmp_path / "bad.toml").write_text('[model]\nconstrain_with = "guided_choice"\n')
    with OpenAITestServer(answer=lambda call: "Neither.") as server:
        args = ["run", "relationship-levy", "-m", "openai:t", "--base-url", server.base_url, "--sample-k", "3",
                "--no-cache", "--quiet", "--constrain-answers"]
        result = CliRunner().invoke(main, [*args, "--config", str(tmp_path / "c.toml")], env={"OPENAI_API_KEY": "k"})
        assert result.exit_code == 0, result.output
        assert server.constrained["json_schema"] == server.total_requests == 6
        bad = CliRunner().invoke(main, [*args, "--config", str(tmp_path / "bad.toml")], env={"OPENAI_API_KEY": "k"})
        assert bad.exit_code != 0 and "constrain_with" in bad.output
