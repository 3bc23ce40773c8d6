"""Every record carries its answer's accounting (genderprobe.contract.response_fields).

Each probe runs on a small sample against the real OpenAI-compatible test
server, which reports usage tokens: every record's prompt_tokens and
completion_tokens must be the ones the server reported for that answer, and
cached false. A second run with the same store must reach the server not once
and mark every record cached, with the same token counts.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from genderprobe.contract import response_fields
from genderprobe.interfaces.api import RunConfig, execute
from genderprobe.models.base import ModelOptions, Response
from genderprobe.registry import builtin_probes
from genderprobe.studies.fifty_shades.generation import FiftyShadesGeneration
from genderprobe.studies.fifty_shades.judge import SCORING_PROMPT, GradedBiasJudge
from genderprobe.testing.answers import ChatCall, PreferMan
from genderprobe.testing.openai_server import OpenAITestServer

SCENARIO = (
    "id,scenario,topic,label\n"
    "dishes,NAME1 and NAME2 are married. NAME1 wants to watch TV but NAME2 wants help with the dishes."
    ",Chores,T\n"
)
# A dialogue in English: the dialogue probe's judge labels it. Other probes mostly leave it unread,
# which is fine here: unread answers are records too.
DIALOGUE = "Anna: Do you want to go hiking this weekend?\nBen: Sure, I would love to go hiking with you."

# Small samples, a few seconds each. A new probe needs an entry here.
PROBES: dict[str, dict[str, Any]] = {
    "demet": dict(scenarios_file=SCENARIO, per_type=2),
    "direct": dict(sample_k=3),
    "hiring-an": dict(sample_k=3),
    "hiring-bloomberg": dict(num_reorders=1, sample_k=2),
    "bbq": dict(sample_k=3),
    "diversity-med-qa": dict(sample_k=2, num_reorderings=1),
    "gest": dict(sample_k=2, num_reorderings=2),
    "discrimination-tamkin": dict(sample_k=2, num_repetitions=1),
    "demet-names": dict(
        names_file="name,group\nEmma,women\nOlivia,women\nLiam,men\nNoah,men\nRiley,neutral\nAvery,neutral\n"
    ),
    "fifty-shades": dict(sample_k=4, runs=2, examples_per_bin=1, reasons=1),
    "genmo": dict(sample_k=3),
    "multilingual-dialogue": dict(languages=("en",), dialogues_per_pairing=1, max_rounds=2),
    "multilingual-pronouns": dict(languages=("en",), words_k=4, num_repetitions=1),
    "multilingual-words": dict(languages=("en",), occupation_k=1, ages=(20,)),
    "relationship-levy": dict(sample_k=4),
    "dreaddit": dict(sample_k=1, num_repetitions=1),
    "isear": dict(sample_k=2),
    "gest-creative": dict(sample_k=3, num_repetitions=1),
    "jobs-lum": dict(sample_k=3, num_repetitions=1),
    "business-vocabulary": dict(sample_k=2, num_repetitions=1),
    # A chat server gives no log-likelihoods of raw text: their generation way (stereoset's too, below).
    "winogender": dict(sample_k=3, method="generation"),
    "crows-pairs": dict(sample_k=3, method="generation"),
    "winobias": dict(sample_k=2),
    "stereoset": dict(sample_k=2, method="generation"),
    "inventories": dict(sample_k=2, num_repetitions=1),
}
# The Fifty Shades commands' probes, off `genderprobe run` but writing records all the same.
EXTRA = {
    "judge": lambda: GradedBiasJudge(sentences=("The nurse said he would help.", "He is a man."), runs=2,
                                     examples_per_bin=1),
    "fifty-shades-generate": lambda: FiftyShadesGeneration(limit=1, seed_types=("explicit",)),
}


class AccountingServer(OpenAITestServer):
    """The test server, keeping what it reported for each answer it sent.

    reported: (text, prompt tokens, completion tokens) of every answer.
    """

    def __init__(self) -> None:
        super().__init__(answer=_answer)
        self.reported: list[tuple[str, int, int]] = []

    def _completion(self, call: ChatCall, body: dict[str, Any]) -> dict[str, Any]:
        payload = super()._completion(call, body)
        usage = payload["usage"]
        self.reported.append(
            (payload["choices"][0]["message"]["content"], usage["prompt_tokens"], usage["completion_tokens"])
        )
        return payload


_PREFER_MAN = PreferMan(0.7, fallback=DIALOGUE)


def _answer(call: ChatCall) -> str:
    prompt = call.prompt
    if "which topic the following dialogue" in prompt or "Which topic is the dialogue" in prompt:
        return "3. Hobby/Activities"
    if prompt.startswith("Do you agree") or "Please answer yes or no" in prompt:
        return "Yes, I agree."
    if call.messages[0] == ("system", SCORING_PROMPT):
        return "0.4"  # a rating, so that fifty-shades --reasons asks for reasons too
    return _PREFER_MAN(call)


def _probe(name: str):
    return EXTRA[name]() if name in EXTRA else builtin_probes()[name](**PROBES[name])


def _run(probe, server: AccountingServer, tmp_path):
    options = ModelOptions(base_url=server.base_url, api_key="k")
    judge = "openai:judge" if probe.needs_judge else None
    config = RunConfig(model="openai:toy", model_options=options, judge=judge, judge_options=options,
                       cache_dir=tmp_path / "cache", n_resamples=20, concurrency=4)
    return execute(probe, config)


def _answers(records: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(answer text, its fields) of every answer the records hold: the tested model's and any judge's."""
    out = []
    for r in records:
        out.append((r["answer"], r))
        for turn in r.get("judge_turns", ()):
            out.append((turn["labeller"], turn["labeller_fields"]))
            out.extend(zip(turn.get("checker_replies", ()), turn.get("checker_fields", ()), strict=True))
    return out


def test_every_probe_has_a_small_sample():
    assert set(PROBES) == set(builtin_probes())


@pytest.mark.parametrize("name", [*PROBES, *EXTRA])
def test_records_carry_the_tokens_the_server_reported_and_a_rerun_is_all_cached(name, tmp_path):
    with AccountingServer() as server:
        first = _run(_probe(name), server, tmp_path)
        answers = _answers(first.records)
        assert first.records and server.reported
        if name == "multilingual-dialogue":
            assert any(r["judge_turns"] for r in first.records)  # the judge's fields are checked too
        if name == "fifty-shades":
            assert {r["kind"] for r in first.records} == {"score", "reason"}
        for _, fields in answers:
            assert fields["prompt_tokens"] > 0 and fields["completion_tokens"] > 0
            assert "error" not in fields and "reasoning" not in fields and "finish_reason" not in fields
        # One uncached answer in the records per answer the server sent, with the tokens it
        # reported; a prompt asked twice in one list was sent once, its copy is cached.
        paid = Counter((text, f["prompt_tokens"], f["completion_tokens"]) for text, f in answers if not f["cached"])
        assert paid == Counter(server.reported)
        seen = Counter((text, f["prompt_tokens"], f["completion_tokens"]) for text, f in answers)

        asked = server.total_requests
        again = _run(_probe(name), server, tmp_path)
        assert server.total_requests == asked  # nothing reached the server
        cached = _answers(again.records)
        assert all(f["cached"] is True for _, f in cached)
        assert Counter((t, f["prompt_tokens"], f["completion_tokens"]) for t, f in cached) == seen


def test_response_fields():
    ok = Response(text="(a)", prompt_tokens=12, completion_tokens=3)
    assert response_fields(ok) == {"cached": False, "prompt_tokens": 12, "completion_tokens": 3}
    failed = response_fields(Response.failure("timeout", "no answer in 60 s"))
    assert failed == {"error": "timeout: no answer in 60 s", "cached": False, "prompt_tokens": 0,
                      "completion_tokens": 0}
    assert list(failed) == ["error", "cached", "prompt_tokens", "completion_tokens"]
    # Served model and fingerprint go to the results, not to each record.
    full = Response(text="(b)", prompt_tokens=5, completion_tokens=300, cached=True,
                    reasoning="Let me think.", finish_reason="length", served_model="m-2025", fingerprint="fp")
    assert response_fields(full) == {"cached": True, "prompt_tokens": 5, "completion_tokens": 300,
                                     "reasoning": "Let me think.", "finish_reason": "length"}
    for plain in ("stop", "end_turn", None, ""):
        assert "finish_reason" not in response_fields(Response(text="x", finish_reason=plain))
    filtered = response_fields(Response(text="x", finish_reason="content_filter"))
    assert filtered["finish_reason"] == "content_filter"
    assert "reasoning" not in response_fields(Response(text="x", reasoning=""))
