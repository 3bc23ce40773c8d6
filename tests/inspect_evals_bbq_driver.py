"""Runs inside inspect_evals 0.26.0's own environment (tests/inspect_evals_parity.py makes it).

Reads a JSON object on stdin: {"data": the BBQ Gender_identity.jsonl to load, "answers": {sample id: the
answer the tested model gave}}. Builds inspect_evals' own ``bbq(subsets="Gender_identity")`` task, its
dataset loaded by its own loader and Hugging Face builder script from that file (laid out as the hub's
copy, in a cache folder of this run's own, offline), and runs its own solver and scorer on the answered
samples, in the order given. Writes a JSON object: the ids of the samples the task loaded; for each answered
sample, the messages the solver sent, the letter it marked and the score; and the scorer's own metrics
(those it declares) over the answered samples.

Only the model is replaced: its answers are the recorded ones.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path


def main() -> None:
    job = json.load(sys.stdin)
    with tempfile.TemporaryDirectory(prefix="bbq-parity-") as tmp:
        os.environ.update({"INSPECT_EVALS_CACHE_DIR": str(Path(tmp, "inspect_evals")),
                           "HF_DATASETS_CACHE": str(Path(tmp, "hf-datasets")), "HF_HUB_OFFLINE": "1",
                           "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"})
        json.dump(asyncio.run(run(job)), sys.stdout)


async def run(job: dict) -> dict:
    # Imported after the environment names the cache: inspect_evals reads it at import.
    from inspect_ai._util.registry import registry_unqualified_name
    from inspect_ai.model import ChatMessageUser, ModelOutput
    from inspect_ai.scorer import SampleScore, Target
    from inspect_ai.scorer._scorer import scorer_metrics
    from inspect_ai.solver import TaskState
    from inspect_evals.bbq.huggingface_artifact.bbq import TASKS

    # The module, not the task function its package exports under the same name.
    module = importlib.import_module("inspect_evals.bbq.bbq")

    # inspect_evals' cache, pre-filled as its snapshot of the hub repository lays it out (data/<subset>.jsonl),
    # so its loader finds it and downloads nothing. Its builder script resolves every subset's file before
    # it reads the one asked for: the others are there, empty, and never read.
    data = module.INSPECT_EVALS_CACHE_PATH / "bbq_dataset" / "bbq" / "data"
    data.mkdir(parents=True)
    for subset in TASKS:
        (data / f"{subset}.jsonl").touch()
    shutil.copyfile(job["data"], data / "Gender_identity.jsonl")
    task = module.bbq(subsets="Gender_identity")
    [scorer] = task.scorer
    by_id = {sample.id: sample for sample in task.dataset}
    samples, scores = [], []
    for sample_id, answer in job["answers"].items():
        sample = by_id[sample_id]
        sent: list = []

        async def generate(state, sent=sent, answer=answer, **kwargs):
            sent.extend([m.role, m.text] for m in state.messages)
            state.output = ModelOutput.from_content(model="recorded", content=answer)
            state.messages.append(state.output.message)
            return state

        state = TaskState(model="recorded/answers", sample_id=sample.id, epoch=1, input=sample.input,
                          messages=[ChatMessageUser(content=sample.input)], target=Target(sample.target),
                          choices=sample.choices, metadata=sample.metadata)
        state = await task.solver(state, generate)
        score = await scorer(state, Target(sample.target))
        scores.append(SampleScore(score=score, sample_id=sample.id))
        marked = [chr(ord("A") + i) for i, c in enumerate(state.choices) if c.correct]
        samples.append({"id": sample.id, "messages": sent, "marked": marked, "target": sample.target,
                        "score": score.value})
    metrics = {registry_unqualified_name(m): float(m(scores)) for m in scorer_metrics(scorer)}
    return {"ids": list(by_id), "samples": samples, "metrics": metrics}


if __name__ == "__main__":
    main()
