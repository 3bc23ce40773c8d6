"""lm-evaluation-harness 0.4.13's own Winogender and CrowS-Pairs (gender) tasks and our probes, on
SmolLM2-135M-Instruct and the same items: the same log-likelihood of every continuation and the same
aggregate (and number of items) of every lm-eval task, to 1e-4 (tests/lm_eval_parity.py runs lm-eval in
its own environment).

A sample of each study keeps the test to seconds (lm-eval is started once for both); the full sets'
figures are in docs/winogender.md and docs/crows-pairs.md (benchmarks/lm_eval_parity.py).
"""

from __future__ import annotations

import pytest
from lm_eval_parity import differences, require, run_lm_eval, same_items

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.testing import smollm2

TOLERANCE = 1e-4
SAMPLE = {"winogender": 24, "crows-pairs": 12}


def test_both_studies_match_lm_evals_own_tasks_on_a_real_model():
    venv = require()
    if smollm2.unavailable():
        pytest.skip(smollm2.unavailable())
    model = smollm2.materialise()
    ours = {name: run_probe(name, f"hf:{model}", config=RunConfig(seed=11), sample_k=k) for name, k in SAMPLE.items()}
    asked = same_items({r["sentid"] for r in ours["winogender"].records}, {r["pair"] for r in ours["crows-pairs"].records})
    assert [len(docs) for _, docs in asked][0] == SAMPLE["winogender"] and len(asked[-1][1]) == SAMPLE["crows-pairs"]
    found, _ = differences(ours, run_lm_eval(venv, model, asked), TOLERANCE)
    assert not found, "\n".join(found[:20])
