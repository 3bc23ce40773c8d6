"""Runs inside lm-evaluation-harness 0.4.13's own environment (tests/lm_eval_parity.py): lm-eval's task
code, unchanged, on items the test writes, with its own HFLM on a local model, offline.

    python lm_eval_driver.py REQUEST.json OUT.json

REQUEST: {"model": folder, "batch_size": n, "tasks": [{"yaml": path under lm_eval/tasks, "data": a jsonl
file of the task's documents}]}. Each task is lm-eval's YAML as lm-eval loads it (its !function
helpers included), with only its dataset pointed at the local file. OUT: per task, lm-eval's aggregate
metrics and, per document in lm-eval's order, the document and its continuations' log-likelihoods.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")

import lm_eval.tasks  # noqa: E402
from lm_eval import simple_evaluate  # noqa: E402
from lm_eval.api.task import ConfigurableTask  # noqa: E402
from lm_eval.tasks._yaml_loader import load_yaml  # noqa: E402

TASKS = Path(lm_eval.tasks.__file__).parent


def task(yaml: str, data: str) -> ConfigurableTask:
    config = load_yaml(TASKS / yaml)
    for key in ("tag", "group"):  # the task alone, outside the groups it is registered in
        config.pop(key, None)
    config.update(dataset_path="json", dataset_name=None, dataset_kwargs={"data_files": {"test": data}})
    return ConfigurableTask(config=config)


def main(request_path: str, out_path: str) -> None:
    request = json.loads(Path(request_path).read_text())
    tasks = [task(t["yaml"], t["data"]) for t in request["tasks"]]
    results = simple_evaluate(model="hf", model_args={"pretrained": request["model"], "dtype": "float32",
                                                      "device": "cpu"},
                              tasks=tasks, batch_size=request.get("batch_size", 16), log_samples=True)
    out = {}
    for name, metrics in results["results"].items():
        samples = sorted(results["samples"][name], key=lambda s: s["doc_id"])
        out[name] = {"metrics": {k: v for k, v in metrics.items() if isinstance(v, (int, float))},
                     "samples": [{"doc": s["doc"], "loglikelihoods": [r[0][0] for r in s["resps"]]}
                                 for s in samples]}
    Path(out_path).write_text(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:3])
