"""lm-evaluation-harness 0.4.13's own Winogender and CrowS-Pairs (gender) tasks and our probes, on
SmolLM2-135M-Instruct and the same items: the same log-likelihood of every continuation and the same
aggregate of every lm-eval task, to 1e-4 (tests/lm_eval_parity.py runs lm-eval in its own environment).

A sample of each study keeps the test to seconds (lm-eval is started once for both); the full sets'
figures are in docs/winogender.md and docs/crows-pairs.md (benchmarks/lm_eval_parity.py).
"""

from __future__ import annotations

import pytest
from lm_eval_parity import require, run_lm_eval

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.studies.crows_pairs.dataset import pairs
from genderprobe.studies.winogender.dataset import items
from genderprobe.studies.winogender.probe import LM_EVAL_TASKS
from genderprobe.testing import smollm2

TOLERANCE = 1e-4
SAMPLE = {"winogender": 24, "crows-pairs": 12}
GOTCHA_TASKS = ("winogender_gotcha", "winogender_gotcha_female", "winogender_gotcha_male")


def winogender_doc(item) -> dict:
    """A sentence as the Hugging Face dataset lm-eval reads holds it (oskarvanderwal/winogender's fields)."""
    return {"sentid": item.sentid, "sentence": item.sentence, "pronoun": item.pronoun, "occupation": item.occupation,
            "participant": item.participant, "gender": item.gender, "label": item.label}


def crows_doc(pair) -> dict:
    return {"sent_more": pair.sent_more, "sent_less": pair.sent_less, "stereo_antistereo": pair.direction,
            "bias_type": "gender"}


@pytest.fixture(scope="module")
def both():
    """Our two probes on hf: and lm-eval's tasks on the same items, lm-eval started once."""
    venv = require()
    if smollm2.unavailable():
        pytest.skip(smollm2.unavailable())
    model = smollm2.materialise()
    ours = {name: run_probe(name, f"hf:{model}", config=RunConfig(seed=11), sample_k=k) for name, k in SAMPLE.items()}
    sentences = {r["sentid"] for r in ours["winogender"].records}
    asked = [winogender_doc(i) for i in items() if i.sentid in sentences]
    gotchas = [winogender_doc(i) for i in items() if i.sentid in sentences and i.gotcha]
    chosen = {r["pair"] for r in ours["crows-pairs"].records}
    tasks = [(f"winogender/{'winogender' if task == 'winogender_all' else task}.yaml",
              gotchas if task in GOTCHA_TASKS else asked) for task in LM_EVAL_TASKS.values()]
    tasks.append(("crows_pairs/crows_pairs_english_gender.yaml", [crows_doc(p) for p in pairs() if p.row in chosen]))
    return ours, run_lm_eval(venv, model, tasks)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE


def test_winogender_matches_lm_evals_own_tasks(both):
    ours, theirs = both
    run = ours["winogender"]
    scored = {r["sentid"]: r["loglikelihoods"] for r in run.records}
    assert len(scored) == SAMPLE["winogender"]
    for metric, task in LM_EVAL_TASKS.items():
        samples = theirs[task]["samples"]
        for sample in samples:
            mine = scored[sample["doc"]["sentid"]]
            assert all(map(_close, mine, sample["loglikelihoods"])), (task, sample["doc"]["sentid"], mine, sample)
        assert run.result.metrics[metric].n == len(samples) > 0, task
        assert _close(run.result.metrics[metric].value, theirs[task]["metrics"]["acc,none"]), task


def test_crows_pairs_gender_matches_lm_evals_own_task(both):
    ours, theirs = both
    run = ours["crows-pairs"]
    task = theirs["crows_pairs_english_gender"]
    by_text = {(r["continuations"][0], r["continuations"][1]): r["loglikelihoods"] for r in run.records}
    assert len(task["samples"]) == len(by_text) == SAMPLE["crows-pairs"]
    for sample in task["samples"]:
        mine = by_text[(sample["doc"]["sent_more"], sample["doc"]["sent_less"])]
        assert all(map(_close, mine, sample["loglikelihoods"])), (mine, sample)
    for metric in ("pct_stereotype", "likelihood_diff"):
        assert _close(run.result.metrics[metric].value, task["metrics"][f"{metric},none"]), metric
