"""Runs inside inspect_evals 0.26.0's own environment (tests/inspect_evals_parity.py makes it).

Reads a JSON list on stdin, one run each: {"task_type": ..., "records": [...]}, each record a StereoSet
context in the layout of the Hugging Face dataset inspect_evals loads (id, context, target, bias_type,
sentences: {sentence, gold_label}) with "answer", the answer the tested model gave. Writes a JSON list, one
object a run: for each sample, the messages inspect_evals' own solver chain sent and what its two scorers
made of the answer, and the task's metrics over all samples.

inspect_evals' task is built by its own ``stereoset()`` and run by its own solvers and scorers; only two
things are replaced: its dataset loader (hf_dataset, which would fetch the Hugging Face hub) is handed
the records through inspect_evals' own ``record_to_sample``, and the model is the recorded answers.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys


def main() -> None:
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ChatMessageUser, ModelOutput
    from inspect_ai.scorer import SampleScore, Target, accuracy
    from inspect_ai.solver import TaskState

    # The module, not the task function its package exports under the same name.
    stereoset = importlib.import_module("inspect_evals.stereoset.stereoset")

    async def run(task_type: str, records: list[dict]) -> dict:
        answers = {r["id"]: r["answer"] for r in records}

        def offline_dataset(path, name, sample_fields, **kwargs):  # the records, not the hub
            return MemoryDataset([sample_fields(r) for r in records])

        stereoset.hf_dataset = offline_dataset
        task = stereoset.stereoset(task_type=task_type, shuffle=False)
        choice_scorer, stereoset_scorer = task.scorer
        samples, choice_scores, set_scores = [], [], []
        for sample in task.dataset:
            sent: list = []

            async def generate(state, sent=sent, answer=answers[sample.id], **kwargs):
                sent.extend([m.role, m.text] for m in state.messages)
                state.output = ModelOutput.from_content(model="recorded", content=answer)
                state.messages.append(state.output.message)
                return state

            state = TaskState(model="recorded/answers", sample_id=sample.id, epoch=1, input=sample.input,
                              messages=[ChatMessageUser(content=sample.input)], target=Target(sample.target),
                              choices=sample.choices, metadata=sample.metadata)
            state = await task.solver(state, generate)
            target = Target(sample.target)
            choice = await choice_scorer(state, target)
            outcome = await stereoset_scorer(state, target)
            choice_scores.append(SampleScore(score=choice, sample_id=sample.id))
            set_scores.append(SampleScore(score=outcome, sample_id=sample.id))
            samples.append({"id": sample.id, "messages": sent, "choice": choice.value, "outcome": outcome.value})
        metrics = {"stereotype_score": stereoset.stereotype_score()(set_scores),
                   "stereotype_score_coverage": stereoset.stereotype_score_coverage()(set_scores),
                   "invalid_answer_rate": stereoset.invalid_answer_rate()(set_scores),
                   "accuracy": accuracy()(choice_scores)}
        return {"samples": samples, "metrics": {k: float(v) for k, v in metrics.items()}}

    json.dump([asyncio.run(run(r["task_type"], r["records"])) for r in json.load(sys.stdin)], sys.stdout)


if __name__ == "__main__":
    main()
