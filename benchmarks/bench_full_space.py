"""The full RelationshipLevy space through the command line, records on, as a user runs it.

    python benchmarks/bench_full_space.py [--sample-k 17440000] [--records auto] [--no-records-too]

Runs ``genderprobe run relationship-levy --model reference:random --sample-k K
--out DIR -q`` under ``/usr/bin/time -v`` in a fresh process and prints the
wall time, the peak memory (maximum resident set) and the size of each file
the run left, against the targets of issue 19: under 10 minutes and 4 GB of
memory, records under 1.5 GB. ``--no-records-too`` also times the same run
with ``--no-records``, the harness alone.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TARGETS = {"wall_s": 600, "peak_gb": 4.0, "records_gb": 1.5}


def timed_run(sample_k: int, out: Path, extra: list[str]) -> dict[str, float]:
    """Wall seconds and peak resident memory (GB) of one command-line run."""
    genderprobe = shutil.which("genderprobe") or sys.exit("genderprobe is not on PATH; pip install -e . first.")
    command = ["/usr/bin/time", "-v", genderprobe, "run", "relationship-levy", "--model", "reference:random",
               "--sample-k", str(sample_k), "--out", str(out), "-q", *extra]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"The run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr).group(1)
    seconds = sum(float(part) * 60**i for i, part in enumerate(reversed(wall.split(":"))))
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return {"wall_s": seconds, "peak_gb": peak_kb * 1024 / 1e9}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample-k", type=int, default=17_440_000)
    parser.add_argument("--records", default="auto", choices=("auto", "jsonl", "parquet"))
    parser.add_argument("--no-records-too", action="store_true")
    args = parser.parse_args()
    attempts = 2 * args.sample_k
    print(f"relationship-levy, reference:random, {args.sample_k:,} items ({attempts:,} attempts), command line")
    runs = [("records " + args.records, ["--records", args.records])]
    if args.no_records_too:
        runs.append(("--no-records", ["--no-records"]))
    for name, extra in runs:
        with tempfile.TemporaryDirectory(dir=".") as tmp:
            out = Path(tmp) / "out"
            figures = timed_run(args.sample_k, out, extra)
            files = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
        records = sum(size for file, size in files.items() if file.startswith("records."))
        print(f"  {name}: {figures['wall_s']:.1f} s wall, peak memory {figures['peak_gb']:.2f} GB")
        for file, size in files.items():
            print(f"    {file}: {size / 1e6:,.1f} MB ({size / attempts:.2f} bytes an attempt)")
        if extra[0] == "--records":
            met = (figures["wall_s"] < TARGETS["wall_s"] and figures["peak_gb"] < TARGETS["peak_gb"]
                   and records / 1e9 < TARGETS["records_gb"])
            print(f"    targets (< {TARGETS['wall_s']} s, < {TARGETS['peak_gb']} GB, records < "
                  f"{TARGETS['records_gb']} GB): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
