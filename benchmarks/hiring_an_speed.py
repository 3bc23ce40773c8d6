"""Whole-process cost of ``genderprobe run hiring-an`` on a coin, a fully and a partly biased model (issue 46).

Each run is the command as users type it, records on, in a fresh output folder and without the response
store, so that every model answers every request. The figure is the median of several runs, with each
model's ratio to reference:random: the done-when line asks for at most 1.5x. Wall time is what users wait;
CPU time (the child's user + system) is quoted beside it because this machine is shared and wall time
follows the other users' load.

    python benchmarks/hiring_an_speed.py                  # 2,000 items, 5 runs each
    python benchmarks/hiring_an_speed.py --runs 3 --sample-k 2000
    PYTHONPATH=/path/to/other/src python benchmarks/hiring_an_speed.py   # another checkout's code
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = ("reference:random", "reference:biased", "reference:biased?p=0.8")


def one_run(model: str, sample_k: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one whole process."""
    with tempfile.TemporaryDirectory(prefix="hiring-an-speed-") as out:
        cmd = [sys.executable, "-m", "genderprobe", "run", "hiring-an", "--model", model,
               "--sample-k", str(sample_k), "--no-cache", "--out", os.path.join(out, "run")]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Exit 3 is a mark worse than --fail-on-mark; without that option every finished run exits 0.
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per model (median quoted); at least 3")
    parser.add_argument("--sample-k", type=int, default=2000)
    args = parser.parse_args()
    if args.runs < 3:
        parser.error("--runs must be at least 3: one run on a shared machine says little")
    figures: dict[str, list[tuple[float, float]]] = {m: [] for m in MODELS}
    for _ in range(args.runs):  # interleaved, so a burst of load falls on every model alike
        for model in MODELS:
            figures[model].append(one_run(model, args.sample_k))
    base_wall = statistics.median(w for w, _ in figures[MODELS[0]])
    base_cpu = statistics.median(c for _, c in figures[MODELS[0]])
    print(f"genderprobe run hiring-an --sample-k {args.sample_k} --no-cache --out DIR "
          f"(median of {args.runs} runs, whole process)")
    print(f"{'model':<26}{'wall s':>8}{'x random':>10}{'CPU s':>8}{'x random':>10}   wall runs")
    for model, runs in figures.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{model:<26}{wall:>8.2f}{wall / base_wall:>10.2f}{cpu:>8.2f}{cpu / base_cpu:>10.2f}   "
              + " ".join(f"{w:.2f}" for w, _ in runs))


if __name__ == "__main__":
    main()
