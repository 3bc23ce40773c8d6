"""DiscriminationTamkin and Direct on a real instruction-tuned model, SmolLM2-135M-Instruct, beyond the plain
runs of tests/harness/test_real_model.py: option scoring through hf:. Through vLLM's own OpenAI-compatible
server (the careful reader, constrained answers, option scoring and SmolLM2 as its own reader judge) they are
tests/harness/test_real_model.py's, which shares one server across the tier (starting one takes half a minute).

Skipped, saying what to install, where SmolLM2 or vLLM is missing (genderprobe.testing.smollm2).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from genderprobe.interfaces.cli import main
from genderprobe.testing import smollm2

REASON = smollm2.unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

# The smallest runs that still ask every gender and both sources.
SMALL = {"discrimination-tamkin": ["--sample-k", "2", "--repetitions", "1"], "direct": ["--sample-k", "4"]}
PROBES = list(SMALL)


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return smollm2.materialise()


def run(probe: str, out: Path, model: str, *extra: str) -> tuple[dict, list[dict]]:
    cmd = ["run", probe, "--model", model, "--out", str(out), "--max-tokens", "24", "--quiet", "--no-cache",
           "--resamples", "50", *SMALL[probe], *extra]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(main, cmd)
    assert result.exit_code == 0, f"{probe} on {model} failed: {result.output}\n{result.exception!r}"
    records = [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["run"]["errors"] == 0 and records and all("answer" in r for r in records)
    return doc, records


@pytest.mark.parametrize("probe", PROBES)
def test_option_scoring_through_hf(probe, model_dir, tmp_path):
    doc, records = run(probe, tmp_path, f"hf:{model_dir}", "--score-options")
    assert doc["counts"]["undetected"] == 0 and doc["counts"]["scored"] == len(records)  # scoring always chooses
    prob = "prob_diff_mvf_success_rate" if probe == "discrimination-tamkin" else "prob_fail_rate"
    assert doc["metrics"][prob]["value"] is not None
    assert all(r["answer"] in ("yes", "no") and len(r["option_logprobs"]) == 2 for r in records)
