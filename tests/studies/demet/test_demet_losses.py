"""demet: lost answers (undetected, refused) per gender pairing, and --score-options."""

import math
import re

import pytest
from instruments import ScriptedModel

from genderprobe.contract import ListSink, RunContext
from genderprobe.data.name_lists import levy_names
from genderprobe.engine.runner import Runner
from genderprobe.errors import UserError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models.base import Request, Response
from genderprobe.studies.demet.probe import MAX_TOKENS, Demet
from genderprobe.studies.demet.scores import TYPES

WOMEN, MEN = set(levy_names()["women"]), set(levy_names()["men"])


def _names(prompt):
    return re.search(r"\n1\. (.+)\n2\. (.+)\.\n", prompt).groups()


def _refuses_w_m_and_dodges_m_w(prompt, _rep):
    n1, n2 = _names(prompt)
    if n1 in WOMEN and n2 in MEN:
        return "I'm sorry, but I can't take sides in a marriage."
    if n1 in MEN and n2 in WOMEN:
        return "Both of them have a point."
    return "1"


def test_lost_answers_are_reported_per_pairing_with_a_test():
    sink = ListSink()
    result = Demet(per_type=2).run(
        RunContext(ask=Runner(ScriptedModel(_refuses_w_m_and_dodges_m_w)), records=sink, n_resamples=20)
    )
    m = result.metrics
    assert m["refusal_rate_W-M"].value == 1 and m["undetected_rate_W-M"].value == 0
    assert m["undetected_rate_M-W"].value == 1 and m["refusal_rate_M-W"].value == 0
    for t in TYPES:
        if t not in ("W-M", "M-W"):
            assert m[f"refusal_rate_{t}"].value == m[f"undetected_rate_{t}"].value == 0, t
        assert m[f"refusal_rate_{t}"].n == 29 * 2
    assert result.counts["refused"] == result.counts["undetected"] == 29 * 2
    assert result.losses["by"] == "pairing" and result.losses["groups"] == list(TYPES)
    # Every unit asks all nine pairings: the test permutes within units, and 9,999 draws say p <= 1e-4.
    test = result.losses["kinds"]["refusal"]["test"]
    assert test["p_value"] == 1 / 10_000 and test["matched"] and test["informative_items"] == 58
    assert any(t.title.startswith("Lost answers by pairing") for t in result.tables)
    # Every rewording was tried before the prompt counted as lost; records say refusal.
    refusals = [r for r in sink.records if r["code"] == "refusal"]
    assert len(refusals) == 29 * 2 * 5
    assert result.extra["answers_by_prompt"]["original"]["refused"] == 29 * 2


def test_failed_requests_are_not_lost_answers():
    result = Demet(per_type=2).run(RunContext(ask=lambda rs: [Response.failure("server", "boom") for _ in rs]))
    assert result.losses["kinds"]["undetected"]["groups"]["W-M"]["attempts"] == 0


def test_max_tokens_default_fits_a_short_answer_and_is_overridable():
    assert Demet.default_generation.max_tokens == MAX_TOKENS == 300
    seen: list[Request] = []

    def record(requests):
        seen.extend(requests)
        return [Response(text="2") for _ in requests]

    out = run_probe("demet", "reference:unbiased", per_type=2, config=RunConfig(model="", generation={"max_tokens": 40}, n_resamples=20))
    assert out.document["parameters"]["generation"]["max_tokens"] == 40
    assert run_probe("demet", "reference:unbiased", per_type=2).document["parameters"]["generation"]["max_tokens"] == 300
    Demet(per_type=2).run(RunContext(ask=record, generation=Demet.default_generation))
    assert {r.params.max_tokens for r in seen} == {300}


@pytest.mark.parametrize("scored", ["numbers", "names"])
@pytest.mark.parametrize(
    ("model", "bias_w_m"), [("reference:biased-female", 2), ("reference:biased", -2), ("reference:first-option", 0)]
)
def test_score_options_reproduce_the_reference_values(model, bias_w_m, scored):
    out = run_probe("demet", model, per_type=2, scored_options=scored,
                    config=RunConfig(model="", score_options=True, n_resamples=20))
    res = out.result
    assert res.metrics["bias_w_m"].value == bias_w_m
    assert res.counts["undetected"] == res.counts["refused"] == 0
    assert res.counts["attempts"] == res.counts["prompts"]  # nothing to reword
    record = out.records[0]
    options = ("1", "2") if scored == "numbers" else (record["name1"], record["name2"])
    assert record["answer"] in options and len(record["option_logprobs"]) == 2
    assert res.position.scored is True


def test_scored_options_must_be_known():
    with pytest.raises(UserError, match="--scored-options"):
        Demet(scored_options="letters")


def test_scoring_asks_for_the_options_with_one_token():
    seen: list[Request] = []

    def record(requests):
        seen.extend(requests)
        return [Response(text=r.options[1], option_logprobs=(-2.0, -1.0)) for r in requests]

    result = Demet(per_type=2, scored_options="names").run(RunContext(ask=record, score_options=True))
    first = seen[0]
    assert first.score_options and first.params.max_tokens == 1
    assert first.options == _names(first.prompt)
    assert result.metrics["s_w_m"].value == 1  # NAME2 every time
    assert math.isclose(result.metrics["same_group_mean"].value, 1)
