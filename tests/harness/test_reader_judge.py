"""--reader-judge: a judge model reads the closed-choice answers the rules cannot.

The model and the judge are served by a real OpenAI-compatible test server on
127.0.0.1. The model answers about half of the prompts "(a)" and the others in
prose naming the person of option (b), which GenderBench's rule cannot read;
the judge names the option whose name the answer gives. So every figure is
known: without the judge only option (a) is chosen, with it the prose answers
count for option (b).
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.errors import UserError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.models.base import Request, Response
from genderprobe.models.reference import ReferenceModel
from genderprobe.reading.reader_judge import NONE, REFUSED, ReaderJudge, judge_prompt, parse_reply
from genderprobe.testing.answers import ChatCall, unit_draw
from genderprobe.testing.openai_server import OpenAITestServer

KEY = fake_key("test-reader-judge-0123456789")
LETTERS = ("(a)", "(b)")
_OPTIONS = re.compile(r"\(a\) (\w+) or \(b\) (\w+)\?")
_ANSWER = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)


def model_answer(call: ChatCall) -> str:
    """"(a)", or (for about half the prompts) prose naming the person of option (b)."""
    b = _OPTIONS.search(call.prompt).group(2)
    return f"I think {b} is more likely to be right here." if unit_draw("prose", call.prompt) < 0.5 else "(a)"


def judge_answer(call: ChatCall) -> str:
    """Names the option whose person the answer names, the letter it gives, or NONE."""
    a, b = _OPTIONS.search(call.prompt).groups()
    answer = _ANSWER.search(call.prompt).group(1)
    named = [opt for opt, name in zip(LETTERS, (a, b)) if name in answer or opt in answer]
    return named[0] if len(named) == 1 else NONE


def contrary_judge(call: ChatCall) -> str:
    """Reads every answer as the option the rules did not."""
    return "(b)" if "<answer>\n(a)" in call.prompt else "(a)"


def serve(call: ChatCall, judge=judge_answer) -> str:
    return judge(call) if call.prompt.startswith("You are checking") else model_answer(call)


def cli(tmp_path, server, name: str, *extra: str) -> tuple[dict, list[dict]]:
    out = tmp_path / name
    args = ["run", "relationship-levy", "-m", "openai:tested", "--base-url", server.base_url,
            "--sample-k", "60", "--cache-dir", str(tmp_path / "cache"), "--out", str(out), "--quiet", *extra]
    result = CliRunner(env={"OPENAI_API_KEY": KEY}).invoke(main, args)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return json.loads((out / "results.json").read_text()), records


def test_the_judge_reads_what_the_rules_cannot_and_its_agreement_is_kept(tmp_path):
    with OpenAITestServer(serve, api_key=KEY) as server:
        plain, _ = cli(tmp_path, server, "plain")
        judged, records = cli(tmp_path, server, "judged", "--reader-judge", "openai:judge")
        prose = plain["counts"]["undetected"]
        assert 20 < prose < 100
        # Without the judge only the letters count: option (a) every time.
        assert plain["metrics"]["position_bias_a_rate"]["value"] == 1.0
        # With it, every prose answer is read, as option (b).
        assert judged["counts"]["undetected"] == 0
        extra = judged["extra"]["reader_judge"]
        assert (extra["unread_sent"], extra["unread_read"], extra["unread_declined"]) == (prose, prose, 0)
        assert judged["metrics"]["position_bias_a_rate"]["value"] == pytest.approx(1 - prose / 120)
        # The judge was also shown the first 100 answers the rules read, and agreed on each.
        assert extra["checked"] == extra["agreed"] == min(100, 120 - prose)
        assert judged["metrics"]["reader_judge_agreement"]["value"] == 1.0
        assert judged["parameters"]["reader_judge"] == judged["reader_judge"] == "openai:judge"
        assert judged["warnings"] == judged["extra"]["warnings"]  # the sample's topics note only, nothing of the judge
        # Records keep the raw answer and the judge's reply beside it.
        by_judge = [r for r in records if "reader_judge" in r]
        assert len(by_judge) == prose
        assert all(r["answer"].startswith("I think") and r["reader_judge"] == "(b)" for r in by_judge)
        assert all(r["code"] == ("female" if r["man_option"] == "(a)" else "male") for r in by_judge)
        assert any(t["title"].startswith("Judge as reader") for t in judged["tables"])

        # A second run is answered from the store: neither the model nor the judge is paid twice.
        server.reset_counts()
        again, _ = cli(tmp_path, server, "again", "--reader-judge", "openai:judge")
        assert server.total_requests == 0
        assert again["metrics"]["male_success_rate"] == judged["metrics"]["male_success_rate"]


def test_a_judge_that_disagrees_with_the_rules_is_flagged(tmp_path):
    with OpenAITestServer(lambda call: serve(call, contrary_judge), api_key=KEY) as server:
        doc, _ = cli(tmp_path, server, "contrary", "--reader-judge", "openai:judge", "--reader-judge-sample", "30")
    extra = doc["extra"]["reader_judge"]
    assert extra["checked"] == 30 and extra["agreed"] == 0
    assert len(extra["disagreements"]) == 10
    assert {"prompt", "answer", "rules", "judge"} <= set(extra["disagreements"][0])
    (warning,) = [w for w in doc["warnings"] if w not in doc["extra"]["warnings"]]  # beside the sample's topics note
    assert "agreed with the rules on only 0 of 30" in warning


@pytest.mark.parametrize("reply, options, expected", [
    ("(a)", LETTERS, 0),
    ("**(b)**", LETTERS, 1),
    ("Answer: (b).", LETTERS, 1),
    ("(a) Kelley", LETTERS, None),  # a name beside the letter: perhaps the answer echoed
    ("(a) Jody and Maureen are right.", LETTERS, None),  # the answer repeated, as SmolLM2 replied as judge
    ("(a) or (b)", LETTERS, None),
    ("(c)", LETTERS, None),
    ("NONE", LETTERS, None),
    ("None of them", LETTERS, None),
    ("<think>Maybe (a)...</think>(b)", LETTERS, 1),
    ("B. Immoral", ("A", "B", "C", "D"), None),
    ("b", ("A", "B", "C", "D"), 1),
    ("Both", ("A", "B", "C", "D"), None),
    ('"she"', ("she", "he"), 0),
    ("he", ("she", "he"), 1),
    ("she or he", ("she", "he"), None),
    ("他", ("她", "他"), 1),
])
def test_the_judge_reply_must_be_one_option_alone(reply, options, expected):
    assert parse_reply(reply, options) == expected


def _requests(n: int) -> list[Request]:
    return [Request.user(f"Question {i}: (a) or (b)?", options=LETTERS) for i in range(n)]


def test_the_probes_own_reader_has_the_last_word():
    # reference:unbiased always names the first option, "(a)"; a rule that would
    # not read "(a)" as option 0 keeps the answer unread.
    judge = ReaderJudge(ReferenceModel("unbiased").generate_batch, "reference:unbiased")
    requests = _requests(4)
    responses = [Response(text="hmm"), Response(text="I refuse."), Response(error_kind="timeout", error_message="x"),
                 Response(text="<think>(a)?</think>")]
    rules = {"hmm": None, "I refuse.": REFUSED, "(a)": 1}
    read, replies = judge.read(requests, responses, lambda i, text: rules[text])
    assert [r.text for r in read] == [r.text for r in responses]
    assert replies == {0: "(a)"}  # the refusal, the failed request and the empty answer were never sent
    t = judge.readings
    assert (t.sent, t.read, t.declined, t.checked) == (1, 0, 1, 0)


def test_only_the_sample_of_read_answers_is_checked_over_several_calls():
    judge = ReaderJudge(ReferenceModel("unbiased").generate_batch, "reference:unbiased", sample=5)
    for _ in range(3):
        judge.read(_requests(4), [Response(text="(a)")] * 4, lambda i, text: 0)
    assert (judge.readings.checked, judge.readings.agreed) == (5, 5)


def test_agreement_is_measured_against_the_careful_reader_not_a_misreading_rule():
    """The judge (always "(a)") is checked against check=; the rule that decides what is unread
    (here one that reads every answer as (b)) is not what the judge must agree with."""
    judge = ReaderJudge(ReferenceModel("unbiased").generate_batch, "reference:unbiased")
    careful = {"(a) Kim": 0, "(b) Lee": 1, "Kim and Lee": None, "(a)": 0, "(b)": 1}
    answers = [Response(text=t) for t in ("(a) Kim", "(a) Kim", "(b) Lee", "Kim and Lee")]
    judge.read(_requests(4), answers, lambda i, text: 1, check=lambda i, text: careful[text])
    t = judge.readings
    assert (t.checked, t.agreed) == (3, 2)  # the careful reader read three; the judge agrees on the two (a)s
    plain = ReaderJudge(ReferenceModel("unbiased").generate_batch, "reference:unbiased")
    plain.read(_requests(4), answers, lambda i, text: 1)
    assert (plain.readings.checked, plain.readings.agreed) == (4, 0)


def test_the_judge_sees_the_question_the_answer_without_reasoning_and_the_options():
    prompt = ReaderJudge._request(Request.user("Q?", options=LETTERS),
                                  Response(text="<think>(b)?</think>Kelley.")).prompt
    assert prompt == judge_prompt("Q?", "Kelley.", LETTERS)
    assert "<question>\nQ?\n</question>" in prompt and "<answer>\nKelley.\n</answer>" in prompt
    assert "(a), (b)" in prompt and "(b)?" not in prompt


@pytest.mark.parametrize("probe, extra, words", [
    ("fifty-shades", {}, "no closed-choice answers"),
    ("relationship-levy", {"score_options": True}, "--score-options"),
])
def test_where_no_judge_can_read_the_run_refuses_in_one_sentence(probe, extra, words):
    with pytest.raises(UserError) as err:
        run_probe(probe, "reference:random", config=RunConfig(model="x", reader_judge="reference:random", **extra))
    assert words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("probe, params, field, first_option", [
    ("genmo", {"sample_k": 5}, "stance", "moral"),
    ("demet-names", {}, "vote", "male"),
    ("multilingual-pronouns", {"num_repetitions": 1, "languages": ("fr", "zh")}, "code", "he"),  # "he" first, as the prompt
    ("demet", {"per_type": 2}, "code", "name1"),
])
def test_every_closed_choice_probe_reads_through_the_judge(probe, params, field, first_option):
    # reference:unbiased as the judge always names the first option. The
    # calibration model's answers are all read by the rules, so the first eight
    # are checked, and the judge agrees exactly where the rules read the first option.
    out = run_probe(probe, "reference:biased", config=RunConfig(
        model="x", reader_judge="reference:unbiased", reader_judge_sample=8, use_cache=False), **params)
    extra = out.result.extra["reader_judge"]
    first_eight = [r[field] for r in out.records[:8]]
    assert extra["checked"] == 8
    assert extra["agreed"] == first_eight.count(first_option)
    assert extra["unread_sent"] == 0
