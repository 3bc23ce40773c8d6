"""Calibration models of a chosen strength: reference:biased?p=P and reference:biased-female?p=P."""

import pytest
from click.testing import CliRunner

from genderprobe.errors import UserError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.models import get_model
from genderprobe.models.base import Request

QUICK = RunConfig(use_cache=False)


def levy(model, k=1000, **config):
    return run_probe("relationship-levy", model, config=RunConfig(use_cache=False, **config), sample_k=k)


@pytest.mark.parametrize(("model", "truth"), [("reference:biased?p=0.75", 0.5), ("reference:biased-female?p=0.75", -0.5)])
def test_strength_sets_diff_success_rate_within_its_interval(model, truth):
    """P(man) = 0.75 per attempt gives diff_success_rate 2P - 1 = 0.5; the run's interval holds it."""
    out = levy(model)
    d = out.result.metrics["diff_success_rate"]
    assert d.ci_low <= truth <= d.ci_high
    assert abs(d.value - truth) < 0.05
    assert out.document["model"] == model  # the spec, ?p= included, is the model's identity


def test_strength_is_deterministic():
    a, b = levy("reference:biased?p=0.6", k=300), levy("reference:biased?p=0.6", k=300)
    assert [r["answer"] for r in a.records] == [r["answer"] for r in b.records]
    assert a.result.metrics["diff_success_rate"] == b.result.metrics["diff_success_rate"]
    # A new generation seed draws new coins, as sampling from any model would.
    c = levy("reference:biased?p=0.6", k=300, generation={"seed": 1})
    assert [r["answer"] for r in a.records] != [r["answer"] for r in c.records]


def test_strength_one_and_zero_are_the_personas():
    biased = levy("reference:biased", k=100).records
    assert [r["answer"] for r in levy("reference:biased?p=1", k=100).records] == [r["answer"] for r in biased]
    female = levy("reference:biased-female", k=100).records
    assert [r["answer"] for r in levy("reference:biased?p=0", k=100).records] == [r["answer"] for r in female]


def test_demet_strength_favours_men_only_where_a_man_is_named():
    """bias(W,M) = bias(N,M) = 2(1 - 2P) = -1 at P = 0.75; no man, no side: bias(W,N) = 0."""
    m = run_probe("demet", "reference:biased?p=0.75", config=QUICK, per_type=4).result.metrics
    for metric, truth in (("bias_w_m", -1.0), ("bias_n_m", -1.0), ("bias_w_n", 0.0)):
        assert m[metric].ci_low <= truth <= m[metric].ci_high, metric


def test_more_than_two_answers_take_the_mirror_persona():
    """GenMO-like: four stances; the persona's answer with probability P, else the mirror's, never a third."""
    model = get_model("reference:biased?p=0.75")
    oracle = {"biased": "A. Moral", "biased-female": "B. Immoral", "random": ("A. Moral", "B. Immoral", "C", "D")}
    answers = [model.answer(Request.user(f"story {i}", oracle=oracle)) for i in range(2000)]
    assert set(answers) == {"A. Moral", "B. Immoral"}
    assert abs(answers.count("A. Moral") / len(answers) - 0.75) < 0.04


def test_open_ended_prompts_are_refused():
    """A word list or a score is no side of a choice: a strength is not defined there."""
    model = get_model("reference:biased?p=0.6")
    oracle = {"biased": "0", "biased-female": "1", "random": ("0.0", "0.5", "1.0")}
    with pytest.raises(UserError, match="open-ended"):
        model.answer(Request.user("Rate this sentence.", oracle=oracle))


@pytest.mark.parametrize("spec", [
    "reference:biased?p=1.5", "reference:biased?p=-0.1", "reference:biased?p=abc", "reference:biased?p=",
    "reference:biased?p=nan", "reference:biased?q=0.5", "reference:random?p=0.5", "reference:unbiased?p=1",
])
def test_bad_strength_is_one_sentence_and_exit_2(spec):
    result = CliRunner().invoke(main, ["run", "relationship-levy", "--model", spec, "--sample-k", "5", "--no-cache"])
    assert result.exit_code == 2
    message = result.output.strip()
    assert message.startswith("Error: ") and message.endswith(".") and len(message.splitlines()) == 1
    assert "Traceback" not in result.output


def test_a_lists_digests_are_each_requests_own():
    """reference:random draws a list's coins in one pass (_Draws.digests); each is the digest the
    request gets alone, for a probe's plain list and for one mixing turns, parameters and raw text."""
    from genderprobe.models.base import GenerationParams, Request
    from genderprobe.models.reference import _Draws

    cold, warm = GenerationParams(temperature=0.0, max_tokens=300), GenerationParams(temperature=0.7, seed=3)
    plain = [Request.user(f"Prompt {i} (a) or (b)?", params=cold, repetition=i % 3, options=("(a)", "(b)"))
             for i in range(50)]
    mixed = [*plain[:5], Request.user("Asked with a system turn", system="Be brief.", params=cold, options=("x", "y")),
             Request.user("Other parameters", params=warm, options=("(a)", "(b)", "(c)")),
             Request((("user", "The nurse said"),), cold, options=(" he", " she"), raw_text=True)]
    for requests in (plain, mixed):
        for salt in ("", "strength\x00"):
            assert _Draws().digests(requests, salt).tolist() == [_Draws().digest(r, salt) for r in requests]
        coin = get_model("reference:random")
        assert [r.text for r in coin.generate_batch(requests)] == [coin.answer(r) for r in requests]
