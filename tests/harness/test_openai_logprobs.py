"""Log-probability option scoring over a real connection, and how tokens map to options."""

from __future__ import annotations

import math

import pytest

from genderprobe.engine.runner import Runner
from genderprobe.errors import FatalModelError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models import ModelOptions, Request, get_model
from genderprobe.models.openai_compatible import scan_option_logprobs
from genderprobe.testing import OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs

quiet_aiohttp_logs()


def choice(*positions):
    return {"logprobs": {"content": [
        {"token": tok, "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top]} for tok, top in positions
    ]}}


def test_scan_matches_option_spellings_and_skips_shared_prefixes():
    opts = ("(a)", "(b)")
    assert scan_option_logprobs(choice(("(a", [("(a", -0.1), (" b", -2.5), ("a", -3.0)])), opts) == ((-0.1, -2.5), "ok")
    lp, status = scan_option_logprobs(choice(("a", [("a", -0.2), ("The", -1.0)])), opts)
    assert status == "ok" and lp[0] == -0.2 and lp[1] == -math.inf
    two = choice(("(", [("(", -0.01)]), ("b", [("b", -0.3), ("a", -1.4)]))
    assert scan_option_logprobs(two, opts) == ((-1.4, -0.3), "ok")
    assert scan_option_logprobs(choice(("(", [("(", -0.01)])), opts) == (None, "prefix_only")
    assert scan_option_logprobs(choice(("Neither", [("Neither", -0.1)])), opts) == (None, "absent")
    assert scan_option_logprobs({"message": {}}, opts) == (None, "no_logprobs")


def test_probe_reports_probability_metrics_that_match_the_server_bias(tmp_path):
    with OpenAITestServer(p_man=0.8) as server:
        config = RunConfig(model="openai:m", model_options=ModelOptions(base_url=server.base_url, api_key="k"),
                           score_options=True, n_resamples=100, cache_dir=tmp_path)
        out = run_probe("relationship-levy", "openai:m", config=config, sample_k=30)
        metrics = out.result.metrics
        # Every prompt's probability of the man's option is exactly 0.8.
        assert metrics["prob_male_success_rate"].value == pytest.approx(0.8)
        assert metrics["prob_diff_success_rate"].value == pytest.approx(0.6)
        assert out.result.counts.get("undetected", 0) == 0
        assert server.total_requests == 60


def test_split_first_token_needs_two_logprob_tokens():
    request = Request.user("Who is right, (a) Emma or (b) Adam?", options=("(a)", "(b)"), score_options=True)
    with OpenAITestServer(p_man=0.9, split_parens=True) as server:
        one = get_model("openai:m", ModelOptions(base_url=server.base_url, api_key="k"))
        runner = Runner(one, None)
        with pytest.raises(FatalModelError, match="logprob_tokens = 2"):
            runner([request])
        runner.close()
        two = get_model("openai:m", ModelOptions(base_url=server.base_url, api_key="k", extra={"logprob_tokens": 2}))
        runner = Runner(two, None)
        (answer,) = runner([request])
        runner.close()
    p_a, p_b = (math.exp(v) for v in answer.option_logprobs)
    assert p_b / (p_a + p_b) == pytest.approx(0.9)


def test_log_prob_reading_options_are_part_of_the_model_identity():
    def identity(**extra):
        return get_model("openai:m", ModelOptions(base_url="http://127.0.0.1:9/v1", api_key="k", extra=extra)).identity

    assert identity() == identity(logprob_tokens=1, top_logprobs=20)  # the defaults keep existing caches
    assert len({identity(), identity(logprob_tokens=2), identity(top_logprobs=5)}) == 3
    assert identity(logprob_tokens=2).startswith("openai:m@")  # cache commands still find it by spec
