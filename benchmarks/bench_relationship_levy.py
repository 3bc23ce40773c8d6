"""Harness cost of RelationshipLevy with reference:random, items to metrics with intervals.

Each size runs in a fresh subprocess so its peak memory (max RSS) is its own.
Targets (2-core machine): 3,000 items < 0.5 s; 30,000 < 3 s; the full
17,440,000-item space < 10 min with peak memory < 4 GB.

    python benchmarks/bench_relationship_levy.py            # 3,000 and 30,000 (best of 3)
    python benchmarks/bench_relationship_levy.py --full     # also the full space
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import scipy.stats  # genderprobe imports it on first use; keep library imports outside the timer
from genderprobe.interfaces.api import RunConfig, run_probe
k = int(sys.argv[1])
t = time.perf_counter()
out = run_probe("relationship-levy", "reference:random",
                config=RunConfig(model="", keep_records=False, use_cache=False), sample_k=k)
elapsed = time.perf_counter() - t
d = out.result.metrics["diff_success_rate"]
print(json.dumps({"k": k, "seconds": elapsed, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "diff": d.value, "ci": [d.ci_low, d.ci_high]}))
"""


def measure(k: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(k)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true", help="also run the full 17,440,000-item space")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sizes = [3_000, 30_000] + ([17_440_000] if args.full else [])
    for k in sizes:
        runs = [measure(k) for _ in range(args.repeats if k < 1_000_000 else 1)]
        best = min(runs, key=lambda r: r["seconds"])
        print(f"{k:>12,} items: {best['seconds']:8.2f} s  peak {best['peak_mb']:7.0f} MB  "
              f"diff {best['diff']:+.4f} [{best['ci'][0]:+.4f}, {best['ci'][1]:+.4f}]")


if __name__ == "__main__":
    main()
