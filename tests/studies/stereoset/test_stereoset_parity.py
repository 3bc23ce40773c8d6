"""StereoSet against inspect_evals 0.26.0's own task, solvers, scorers and metrics, run in an environment of
its own (tests/inspect_evals_parity.py): on the same contexts and the same answers, its prompt messages are
ours, and its stereotype_score, stereotype_score_coverage, invalid_answer_rate and multiple-choice accuracy
are our inspect_* metrics (the accuracy is the coverage: both count the answers that chose a meaningful
sentence). Skipped without the environment unless GENDERPROBE_PARITY_REQUIRED=1 (or CI)."""

from __future__ import annotations

import pytest
from inspect_evals_parity import require, score_stereoset

from genderprobe.contract import ListSink, RunContext
from genderprobe.models.base import Response
from genderprobe.studies.stereoset import probe as ss
from genderprobe.studies.stereoset.dataset import LABELS

# Answers of many shapes, so that inspect_evals' rule reads some, misreads some and loses some.
SHAPES = ("ANSWER: {x}", "answer: {y}", "{x}", "The answer is {x}.", "ANSWER: D", "", "ANSWER: {x}\n\nBecause ...",
          "**ANSWER: {x}**", "{y}) the sentence")
# inspect_evals' labels as its Hugging Face dataset codes them.
CODES = {"anti-stereotype": 0, "stereotype": 1, "unrelated": 2}


def _answer(i: int, request) -> str:
    persona = ("biased", "biased-female", "unbiased")[i % 3]
    letter = request.oracle[persona]
    return SHAPES[i % len(SHAPES)].format(x=letter, y=letter.lower())


def _our_run(task: str):
    """Our probe on ``task``'s contexts with answers of every shape: the requests, records and result."""
    asked, sink = [], ListSink()

    def ask(requests):
        asked.extend(requests)
        return [Response(text=_answer(i, r)) for i, r in enumerate(requests)]

    result = ss.StereoSet(method="generation", task=task, sample_k=90).run(RunContext(ask=ask, records=sink, seed=7, n_resamples=50))
    return asked, sink.records, result


def _as_inspect_evals_records(records: list[dict]) -> list[dict]:
    """Our contexts in the Hugging Face layout inspect_evals loads, the sentences in the order we showed them."""
    out = []
    for record in records:
        item = next(i for i in ss.items() if i.row == record["row"])
        order = [int(c) for c in record["order"]]
        out.append({"id": str(item.row), "context": item.context, "target": item.target, "bias_type": "gender",
                    "sentences": {"sentence": [item.sentences[j] for j in order],
                                  "gold_label": [CODES[LABELS[j]] for j in order]},
                    "answer": record["answer"]})
    return out


def test_inspect_evals_scores_our_answers_as_we_do():
    venv = require()
    ours = {task: _our_run(task) for task in ("intrasentence", "intersentence")}
    theirs = score_stereoset(venv, [{"task_type": task, "records": _as_inspect_evals_records(records)}
                                    for task, (_, records, _) in ours.items()])
    for (task, (asked, records, result)), their in zip(ours.items(), theirs):
        # The same prompt: inspect_evals' system message and inspect_ai's multiple-choice template.
        assert [s["messages"] for s in their["samples"]] == [[list(m) for m in r.messages] for r in asked], task
        # The same reading of every answer (by inspect_evals' rule, our default reader).
        outcomes = [next(k for k, v in s["outcome"].items() if v) for s in their["samples"]]
        assert outcomes == [r.get("chosen", "invalid") for r in records] and len(set(outcomes)) == 4, task
        # The same numbers.
        metrics = their["metrics"]
        for name, their_name in {"inspect_stereotype_score": "stereotype_score",
                                 "inspect_stereotype_score_coverage": "stereotype_score_coverage",
                                 "inspect_invalid_answer_rate": "invalid_answer_rate"}.items():
            assert result.metrics[name].value == pytest.approx(metrics[their_name], abs=1e-12), (task, name)
        assert metrics["accuracy"] == pytest.approx(result.metrics["inspect_stereotype_score_coverage"].value,
                                                    abs=1e-12)
        assert 0 < metrics["invalid_answer_rate"] < 1 and 0 < metrics["stereotype_score"] < 100
