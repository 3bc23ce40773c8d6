"""Harness cost of the demet probe: sampling, prompts, answer reading and scores.

Runs the probe on reference models (no network) and prints seconds per stage
size. Usage: python benchmarks/bench_demet.py
"""

from __future__ import annotations

import time

from genderprobe.interfaces.api import RunConfig, run_probe


def main() -> None:
    for scenarios in ("human", "gpt4", "all"):
        for resamples in (1000, 10000):
            config = RunConfig(model="reference:random", use_cache=False, keep_records=False, n_resamples=resamples)
            start = time.perf_counter()
            out = run_probe("demet", "reference:random", config=config, scenarios=scenarios)
            took = time.perf_counter() - start
            print(f"{scenarios:6s} prompts {out.result.counts['prompts']:6,d}  resamples {resamples:6,d}  {took:6.2f} s")


if __name__ == "__main__":
    main()
