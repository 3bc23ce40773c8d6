"""Winogender and CrowS-Pairs (gender) on SmolLM2-135M-Instruct, ours beside lm-evaluation-harness 0.4.13's
own tasks, on every item (issue 49; the test, tests/harness/test_lm_eval_parity.py, takes a sample).

    python benchmarks/lm_eval_parity.py              # all 720 sentences and 262 pairs
    python benchmarks/lm_eval_parity.py --sample 60  # a sample of each

Prints each side's aggregates, the largest difference of any continuation's log-likelihood or aggregate, and
each side's wall time (ours: both probes in this process, hf: loading included; lm-eval's: its process, its
seven winogender tasks, which ask the gendered sentences twice, and crows_pairs_english_gender). lm-eval's
environment: python3 tests/lm_eval_parity.py --install.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from lm_eval_parity import differences, ensure_venv, run_lm_eval, same_items  # noqa: E402

from genderprobe.interfaces.api import RunConfig, run_probe  # noqa: E402
from genderprobe.testing import smollm2  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=None)
    args = parser.parse_args()
    model = smollm2.materialise()
    start = time.perf_counter()
    ours = {name: run_probe(name, f"hf:{model}", config=RunConfig(seed=0, use_cache=False), sample_k=args.sample)
            for name in ("winogender", "crows-pairs")}
    our_seconds = time.perf_counter() - start
    asked = same_items({r["sentid"] for r in ours["winogender"].records}, {r["pair"] for r in ours["crows-pairs"].records})
    start = time.perf_counter()
    theirs = run_lm_eval(ensure_venv(), model, asked)
    their_seconds = time.perf_counter() - start
    found, largest = differences(ours, theirs, 1e-4)
    for task, out in theirs.items():
        shown = {k: round(v, 6) for k, v in out["metrics"].items() if "stderr" not in k}
        print(f"lm-eval {task}: {shown}")
    for name, run in ours.items():
        print(f"ours {name}: " + ", ".join(f"{m} {e.value:.6f} [{e.ci_low:.3f}, {e.ci_high:.3f}] n={e.n}"
                                           for m, e in run.result.metrics.items()
                                           if e.value is not None and not m.startswith(("undetected", "refusal"))))
    print(f"largest difference: {largest:.2e}; over 1e-4: {len(found)}")
    print(f"wall time: ours {our_seconds:.1f} s, lm-eval {their_seconds:.1f} s")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
