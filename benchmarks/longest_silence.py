"""The longest silence of a command: seconds between consecutive lines on its standard error (issue 44).

    python benchmarks/longest_silence.py -- genderprobe plan demet --detect 0.1
    python benchmarks/longest_silence.py --limit 10 -- genderprobe run hiring-an --model reference:biased \\
        --sample-k 2000 --out /tmp/x

The command runs with standard error piped (no terminal), so genderprobe prints its
plain status lines, as in a batch job. Silence is measured from the start to the first
line, between lines, and from the last line to the exit; standard output is read too
(a line there is something a user sees) but counted apart. Prints the command's time,
its longest silence on standard error and where it fell, and exits 1 when that silence
is over --limit seconds.

Measured on the shared two-core machine (load 8 to 12 from other jobs), 2026-11-29:

    command                                   before (11c39f7)          after
    plan demet --detect 0.1                   209.6 s, silent 209.6 s   44.0 s, longest silence 5.7 s
                                              (35 s CPU)                (17 s CPU; the same plan)
    run hiring-an --model reference:biased    22.7 s at a lower load,   63.6 s, longest silence 5.2 s
      --sample-k 2000 --out DIR               silent 22.4 s             (14 status lines)

Before, the run printed one progress line, at its end; after, a status line every
5 s while the metrics are computed ("reading the answers, computing metrics and
intervals... 28 s"). The first line comes within 6 s of the start at that load
(imports and the prompts; about 2 s on a quiet machine).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time


def watch(command: list[str]) -> tuple[int, float, list[tuple[float, str, str]]]:
    """(exit status, seconds, [(seconds since the start, stream, line)]) of ``command``."""
    started = time.monotonic()
    lines: list[tuple[float, str, str]] = []
    lock = threading.Lock()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)

    def read(stream, name: str) -> None:
        for line in stream:
            with lock:
                lines.append((time.monotonic() - started, name, line.rstrip("\n")))

    readers = [threading.Thread(target=read, args=(proc.stdout, "stdout")),
               threading.Thread(target=read, args=(proc.stderr, "stderr"))]
    for r in readers:
        r.start()
    status = proc.wait()
    for r in readers:
        r.join()
    return status, time.monotonic() - started, sorted(lines)


def longest_gap(times: list[float], total: float) -> tuple[float, float]:
    """(longest gap, when it began) over the start, ``times`` and the end."""
    marks = [0.0, *times, total]
    gaps = [(b - a, a) for a, b in zip(marks, marks[1:])]
    return max(gaps)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=10.0, help="Longest silence allowed, in seconds.")
    parser.add_argument("--show", action="store_true", help="Print every line with its time.")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="The command, after --.")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    status, total, lines = watch(command)
    if args.show:
        for t, name, line in lines:
            print(f"{t:8.1f} {name:6s} {line}")
    err = [t for t, name, _ in lines if name == "stderr"]
    gap, at = longest_gap(err, total)
    out_gap, _ = longest_gap([t for t, _, _ in lines], total)
    print(f"command: {' '.join(command)}")
    print(f"exit status {status}, {total:.1f} s, {len(err)} lines on stderr")
    print(f"longest silence on stderr: {gap:.1f} s (from {at:.1f} s); on stdout and stderr together: {out_gap:.1f} s")
    return 1 if gap > args.limit or status != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
