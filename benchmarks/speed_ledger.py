"""The speed ledger: the figures users feel, measured as they run them, beside the best recorded.

Each figure is a whole `genderprobe` process (records on, the command line), timed several times; the
median is quoted. Run it before every stop, so a change that slows a figure shows in the note that made it:

    python benchmarks/speed_ledger.py            # --help, the README run, 30,000 items, a cached rerun
    python benchmarks/speed_ledger.py --full     # also the full 17,440,000-item space (minutes, GBs)
    python benchmarks/speed_ledger.py --record   # write a better median into the ledger as the new best

The ledger (benchmarks/speed_ledger.json) holds each figure's goal, its best median with the date and
commit, and every recorded measurement. CPU seconds (user + system, the process and its children) move
less with a busy machine than wall seconds, so both are printed; a shared machine can still slow both.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

LEDGER = Path(__file__).with_name("speed_ledger.json")
GENDERPROBE = [sys.executable, "-m", "genderprobe"]
RUN = [*GENDERPROBE, "run", "relationship-levy", "--model", "reference:random"]


def timed(command: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """One whole process: wall and CPU seconds, and its peak memory (MiB), from the kernel's own accounting."""
    # Its messages go to a file, not a pipe read at the end: the progress lines of a run of minutes fill a
    # pipe's 64 KiB, and the run then waits for a reader (the full space stopped so for minutes).
    with tempfile.TemporaryFile() as messages:
        start = dt.datetime.now()
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=messages)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = (dt.datetime.now() - start).total_seconds()
        if os.waitstatus_to_exitcode(status) != 0:
            messages.seek(0)
            raise SystemExit(f"{' '.join(command)} failed: {messages.read().decode(errors='replace')[-500:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024}


def child_env(cache: Path) -> dict[str, str]:
    """This environment for a timed process, with its own store; Python may cache compiled modules, as it
    does for users (a shell that forbids it would time the compiling of every module on each start)."""
    env = {**os.environ, "GENDERPROBE_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def figure(name: str, command: list[str], runs: int, *, fresh_cache: bool, warm: bool = False,
           extra_env: dict[str, str] | None = None) -> dict:
    """The medians of ``runs`` runs, each in a fresh folder (and a fresh store unless ``fresh_cache`` is
    False, where one run fills the store first)."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = child_env(root / "cache") | (extra_env or {})
        if warm:
            timed([*command, "--out", str(root / "warm")], env, root)
        for i in range(runs):
            if fresh_cache:
                shutil.rmtree(root / "cache", ignore_errors=True)
            # A run gets a folder of its own; --help takes no --out (RUN[:3], the bare command, also starts --help).
            out = ["--out", str(root / f"out{i}")] if command[:4] == RUN[:4] else []
            results.append(timed([*command, *out], env, root))
    medians = {key: statistics.median(r[key] for r in results) for key in results[0]}
    return {"name": name, "runs": runs, **medians}


def cached_rerun() -> dict:
    """A rerun whose 4,000 answers all come from the store. A reference model never goes to the store,
    so the answers come from genderprobe's own OpenAI-compatible server on 127.0.0.1: one run fills the
    store, then each timed rerun must send it nothing (its work in this process is not timed)."""
    from genderprobe.testing.openai_server import OpenAITestServer

    with OpenAITestServer(p_man=0.7, model="test-model") as server:
        command = [*GENDERPROBE, "run", "relationship-levy", "--model", "openai:test-model",
                   "--base-url", server.base_url, "--sample-k", "2000"]
        result = figure("a cached rerun (4,000 requests)", command, 5, fresh_cache=False, warm=True,
                        extra_env={"OPENAI_API_KEY": "sk-" + "speed-ledger-not-a-key"})  # built, as tests' fake_key: no key-shaped literal
        if server.total_requests != 4000:
            raise SystemExit(f"the cached rerun sent {server.total_requests - 4000} requests beyond "
                             "the 4,000 that filled the store")
    return result


FIGURES = {
    "help": lambda: figure("genderprobe --help", [*GENDERPROBE, "--help"], 7, fresh_cache=True),
    "readme": lambda: figure("the README run (3,000 items)", RUN, 5, fresh_cache=True),
    "items_30000": lambda: figure("30,000 items", [*RUN, "--sample-k", "30000"], 3, fresh_cache=True),
    "cached_rerun": cached_rerun,
}
FULL = {"full_space": lambda: figure("the full space (17,440,000 items, records on)",
                                     [*RUN, "--sample-k", "17440000"], 1, fresh_cache=True)}


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also the full 17,440,000-item space")
    parser.add_argument("--record", action="store_true", help="record these medians; a better one becomes the best")
    parser.add_argument("--only", nargs="*", default=None, help="measure only these figures (keys of the ledger)")
    args = parser.parse_args()
    ledger = json.loads(LEDGER.read_text(encoding="utf-8"))
    wanted = {**FIGURES, **(FULL if args.full else {})}
    if args.only:
        wanted = {k: v for k, v in {**FIGURES, **FULL}.items() if k in args.only}
    when, at = dt.date.today().isoformat(), commit()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'figure':44s} {'wall s':>8s} {'cpu s':>8s} {'MiB':>7s}   best wall (when)        goal")
    slower = []
    for key, measure in wanted.items():
        now = measure()
        entry = ledger[key]
        best = entry.get("best") or {}
        goal = entry.get("goal") or {}
        goal_text = ", ".join(f"{k} < {v}" for k, v in goal.items()) or "-"
        over = [k for k, v in goal.items() if now.get(k, 0) > v]
        if best.get("wall_s") and now["wall_s"] > best["wall_s"] * 1.1:
            slower.append(key)
        print(f"{now['name']:44s} {now['wall_s']:8.2f} {now['cpu_s']:8.2f} {now['peak_mib']:7.0f}   "
              f"{best.get('wall_s', float('nan')):6.2f} ({best.get('date', '-')}, {best.get('commit', '-')})  "
              f"{goal_text}{'  OVER GOAL: ' + ', '.join(over) if over else ''}")
        if args.record:
            # The machine's load beside each row: a wall figure under load says little (CPU seconds less so).
            row = {k: round(now[k], 3) for k in ("wall_s", "cpu_s", "peak_mib")} | {
                "date": when, "commit": at, "load_avg": round(os.getloadavg()[0], 1)}
            entry.setdefault("history", []).append(row)
            if not best or now["wall_s"] < best.get("wall_s", float("inf")):
                entry["best"] = row
    if args.record:
        LEDGER.write_text(json.dumps(ledger, indent=2) + "\n", encoding="utf-8")
    if slower:
        print(f"Slower than the best by over 10%: {', '.join(slower)} (a busy machine can do this: rerun quiet).")


if __name__ == "__main__":
    main()
