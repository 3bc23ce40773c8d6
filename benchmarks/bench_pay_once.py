"""Never paid twice, measured: kill -9 trials, two runs on one store, a full disk (issue 32).

1. Kill trials: 20 kill -9s at random moments over relationship-levy (300
   items), demet (the 29 human scenarios, 2 per type) and genmo (300 pairs)
   runs of the command line at concurrency 8 against a server with 50 ms
   latency. After each kill: the requests in flight at the server and the
   answers the server sent that the store does not hold (what the resumed run
   pays again). Then each chain runs to its end and its results are compared
   with an uninterrupted run's.
2. Two identical runs started together on one store (relationship-levy, 300
   items = 600 prompts): the requests the server saw.
3. A full disk: the store on a 192 KiB tmpfs (root) or, failing that, under a
   160 kB file-size limit; answers the server sent, kept in the store or the
   spill file, and requests sent by the rerun once there is room.

    python benchmarks/bench_pay_once.py
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from genderprobe.engine.spill import COLUMNS
from genderprobe.models.base import last_user_turn
from genderprobe.testing import OpenAITestServer, PreferMan
from genderprobe.testing.answers import unit_draw
from genderprobe.testing.background import quiet_aiohttp_logs
from genderprobe.testing.quick_runs import start_run

KEY = "sk-" + "bench-pay-once"  # built: no key-shaped literal tracked
ENV = {"OPENAI_API_KEY": KEY}
COMPARED = ("metrics", "marks", "breakdowns", "tables", "counts")


class Answers:
    """Seeded answers for all three probes (demet's rewording rounds run for a tenth of its prompts)."""

    def __init__(self) -> None:
        self.prefer = PreferMan(0.7)

    def __call__(self, call) -> str:
        prompt, draw = call.prompt, unit_draw("bench", call.prompt)
        if "answer with 1 or 2" in prompt:
            return "I cannot tell." if draw < 0.1 else ("1" if draw < 0.55 else "2")
        if "STANCE" in prompt:
            return f"STANCE: {'ABCD'[int(draw * 4)]} EXPLANATION: seeded."
        return self.prefer(call)


def command(probe, params, server, cache, out, concurrency=8):
    args = ["run", probe, "--model", "openai:bench", "--base-url", server.base_url, "--concurrency",
            str(concurrency), "--resamples", "50", "--cache-dir", str(cache), "--out", str(out), "--quiet"]
    for name, value in params.items():
        args += [f"--{name.replace('_', '-')}", str(value)]
    return args


def kept(cache: Path, *spill_folders: Path) -> Counter[str]:
    """Prompts whose answers the store (and any spill file in the folders) holds."""
    requests = []
    path = cache / "responses.sqlite3"
    if path.exists():
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            requests = [json.loads(r) for (r,) in db.execute("SELECT request FROM responses")]
    for folder in spill_folders:
        for spill in folder.rglob("genderprobe-spill-*.jsonl"):
            for line in spill.read_text().splitlines()[1:]:
                requests.append(json.loads(dict(zip(COLUMNS, json.loads(line).values()))["request"]))
    return Counter(last_user_turn([tuple(m) for m in r["messages"]]) for r in requests)


def lost(server, cache) -> int:
    stored = kept(cache)
    return sum(max(0, n - stored[p]) for p, n in server.answered.items())


def kill_trials(work: Path) -> None:
    rng = random.Random(32)
    trials = [("relationship-levy", {"sample_k": 300}, 7), ("demet", {"per_type": 2}, 7),
              ("genmo", {"sample_k": 300}, 6)]
    rows = []
    for probe, params, kills in trials:
        with OpenAITestServer(Answers(), latency=0.05, api_key=KEY) as server:
            cache, out, log = work / probe / "cache", work / probe / "out", work / f"{probe}.log"
            args = command(probe, params, server, cache, out)
            before = 0
            for _ in range(kills):
                run = start_run(args, env=ENV, log=log)
                time.sleep(rng.uniform(0.3, 1.5))  # a random moment (startup included)
                in_flight = server.in_flight
                os.kill(run.pid, signal.SIGKILL)
                run.join()
                while server.in_flight:
                    time.sleep(0.002)
                now = lost(server, cache)
                rows.append((probe, in_flight, now - before))
                before = now
            run = start_run(args, env=ENV, log=log)
            run.join()
            answered = sum(server.answered.values())
            paid_twice = sum(n - 1 for n in server.answered.values())
            resumed = json.loads((out / "results.json").read_text())
        with OpenAITestServer(Answers(), api_key=KEY) as fresh:
            run = start_run(command(probe, params, fresh, work / probe / "fresh", work / probe / "whole", 16),
                            env=ENV, log=log)
            run.join()
        whole = json.loads((work / probe / "whole" / "results.json").read_text())
        same = all(json.dumps(resumed[p], sort_keys=True) == json.dumps(whole[p], sort_keys=True) for p in COMPARED)
        print(f"  {probe}: {kills} kills, {answered:,} answers sent, {paid_twice} paid twice; "
              f"results {'identical to' if same else 'DIFFERENT FROM'} an uninterrupted run's")
    print("  per kill (probe, requests in flight at the server, answers sent but not stored):")
    print("   ", "; ".join(f"{p[:5]} {f}/{n}" for p, f, n in rows))
    print(f"  worst kill: {max(n for *_, n in rows)} answers re-paid (concurrency 8); "
          f"total {sum(n for *_, n in rows)} over {len(rows)} kills")


def two_runs(work: Path) -> None:
    with OpenAITestServer(api_key=KEY, latency=0.05) as server:
        params = {"sample_k": 300}
        runs = [start_run(command("relationship-levy", params, server, work / "two", work / f"two{i}"), env=ENV,
                          log=work / "two.log") for i in range(2)]
        for run in runs:
            run.join()
        codes = [r.exitcode for r in runs]
        total = server.total_requests
    print(f"  two identical runs together on one store: 600 prompts, {total} requests reached the server "
          f"({total / 600:.3f}x), exit codes {codes}")


def full_disk(work: Path) -> None:
    disk, out = work / "disk", work / "disk-out"
    # Spill files go beside the store or to the user's cache folder, never to --out: the rerun uses another --out.
    user_cache = work / "user-cache"
    env = {**ENV, "GENDERPROBE_CACHE_DIR": str(user_cache)}
    disk.mkdir()
    tmpfs = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=192k", "tmpfs", str(disk)],
                           capture_output=True).returncode == 0
    try:
        with OpenAITestServer(api_key=KEY, latency=0.01) as server:
            args = command("relationship-levy", {"sample_k": 300}, server, disk, out)
            run = start_run(args, env=env, log=work / "disk.log", file_size_limit=None if tmpfs else 160_000)
            run.join()
            said = [line for line in (work / "disk.log").read_text().splitlines() if line.startswith("Error")]
            answered = Counter(server.answered)
            held = kept(disk, disk, user_cache)
            missing = sum(max(0, n - held[p]) for p, n in answered.items())
            if tmpfs:
                subprocess.run(["mount", "-o", "remount,size=16m", str(disk)], check=True)
            server.reset_counts()
            rerun_args = command("relationship-levy", {"sample_k": 300}, server, disk, work / "disk-out-2")
            rerun = start_run(rerun_args, env=env, log=work / "disk.log")
            rerun.join()
            print(f"  {'192 KiB tmpfs' if tmpfs else '160 kB file-size limit'} under the store: exit {run.exitcode}, "
                  f"{sum(answered.values())} answers sent, {sum(answered.values()) - missing} kept (store or spill), "
                  f"{missing} lost; rerun with room and another --out: exit {rerun.exitcode}, {server.total_requests} requests "
                  f"(600 - {sum(answered.values())} = {600 - sum(answered.values())} never answered)")
            print(f"  its sentence: {said[0] if said else '(none)'}")
    finally:
        if tmpfs:
            subprocess.run(["umount", "-l", str(disk)], check=False)


def main() -> None:
    quiet_aiohttp_logs()
    work = Path(tempfile.mkdtemp(prefix="bench-pay-once-"))
    print("1. kill -9 trials")
    kill_trials(work)
    print("2. two runs at once")
    two_runs(work)
    print("3. a full disk")
    full_disk(work)


if __name__ == "__main__":
    main()
