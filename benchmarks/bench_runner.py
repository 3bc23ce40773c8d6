"""Run-engine speed against the local OpenAI-compatible server (in its own process).

1. Throughput: N distinct prompts (default 4,000), 100 ms latency per request,
   concurrency 64, through Runner + OpenAICompatible + the SQLite store.
   Target: wall time within 125% of the ideal N x 0.1 / 64 s, and the runner's
   own CPU (this process: runner, HTTP client, JSON, store) under 1 ms/request.
2. Cached rerun: 6,000 prompts already in the store, asked again.
   Target: under 2 s (the server must see zero requests).
3. End to end: a fully cached RelationshipLevy run of 3,000 items (6,000
   prompts) through the Python API, parsing and metrics included.
4. The command line, as a user runs it: RelationshipLevy, 10,000 items (20,000
   requests) at concurrency 64 against the server with 20 ms latency, records
   and results written; wall time and the command's peak memory (max RSS).
   Run alone with ``--only cli`` (``--cli-items``, ``--cli-latency`` change it).

    python benchmarks/bench_runner.py
    python benchmarks/bench_runner.py -n 4000 --latency 0.1 --progress
    python benchmarks/bench_runner.py --only cli
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from genderprobe.engine.runner import Runner
from genderprobe.engine.store import Store
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models import ModelOptions, Request, get_model
from genderprobe.testing.openai_server import spawn_openai_server


def prompts(n: int, tag: str) -> list[Request]:
    return [
        Request.user(f"{tag} case {i}: who is right, (a) Adam or (b) Emma? Answer with (a) or (b).", options=("(a)", "(b)"))
        for i in range(n)
    ]


def progress_bar(enabled: bool):
    if not enabled:
        return None
    from rich.console import Console

    from genderprobe.outputs.terminal import Progress

    return Progress(Console(file=io.StringIO(), force_terminal=True, width=120))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=4000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--cached", type=int, default=6000)
    parser.add_argument("--progress", action="store_true", help="drive a (hidden) progress bar too")
    parser.add_argument("--only", choices=("runner", "cli"), default=None, help="run one part only")
    parser.add_argument("--cli-items", type=int, default=10_000)
    parser.add_argument("--cli-latency", type=float, default=0.02)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    if args.only != "runner":
        command_line(args, work)
    if args.only != "cli":
        runner_parts(args, work)


def command_line(args: argparse.Namespace, work: Path) -> None:
    """``genderprobe run relationship-levy`` in a process of its own: wall time and peak memory."""
    with spawn_openai_server("--latency", str(args.cli_latency)) as server:
        command = [sys.executable, "-m", "genderprobe", "run", "relationship-levy", "--model", "openai:bench",
                   "--base-url", server.base_url, "--sample-k", str(args.cli_items),
                   "--concurrency", str(args.concurrency), "--cache-dir", str(work / "cli-cache"),
                   "--out", str(work / "cli-out"), "--quiet"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        done = subprocess.run(command, env={**os.environ, "OPENAI_API_KEY": "sk-bench"}, capture_output=True, text=True)
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        peak_mb = after.ru_maxrss / 1024
        sent = server.stats()["total_requests"]
    assert done.returncode == 0, done.stderr
    n = 2 * args.cli_items
    ideal = n * args.cli_latency / args.concurrency
    print(f"command line: relationship-levy, {args.cli_items:,} items = {n:,} requests at "
          f"{args.cli_latency * 1000:.0f} ms, concurrency {args.concurrency}: {wall:.1f} s "
          f"(ideal {ideal:.1f} s), CPU {cpu:.1f} s, peak memory {peak_mb:.0f} MB, {sent:,} requests reached the server")


def runner_parts(args: argparse.Namespace, work: Path) -> None:
    options = dict(api_key="sk-bench", timeout=30)

    with spawn_openai_server("--latency", str(args.latency)) as server:
        model_options = ModelOptions(base_url=server.base_url, **options)
        # 1. Throughput.
        ideal = args.n * args.latency / args.concurrency
        with Store(work / "throughput.sqlite3") as store:
            warm = Runner(get_model("openai:bench", model_options), None, concurrency=args.concurrency)
            warm(prompts(args.concurrency, "warm-up"))
            warm.close()
            bar = progress_bar(args.progress)
            runner = Runner(get_model("openai:bench", model_options), store,
                            concurrency=args.concurrency, progress=bar)
            requests = prompts(args.n, "throughput")
            cpu, wall = time.process_time(), time.perf_counter()
            answers = runner(requests)
            wall = time.perf_counter() - wall
            cpu = time.process_time() - cpu
            runner.close()
            if bar:
                bar.stop()
            assert all(a.ok for a in answers)
        ms = cpu / args.n * 1000
        print(f"throughput: {args.n:,} requests at {args.latency * 1000:.0f} ms, concurrency {args.concurrency}: "
              f"{wall:.2f} s (ideal {ideal:.2f} s, {wall / ideal:.0%} of ideal; target <= 125%), "
              f"CPU {ms:.2f} ms/request (target < 1 ms)")

        # 2. Cached rerun of the runner alone.
        cached = prompts(args.cached, "cached")
        with Store(work / "cached.sqlite3") as store:
            fill = Runner(get_model("openai:bench", model_options), store, concurrency=args.concurrency)
            fill(cached)
            fill.close()
            before = server.stats()["total_requests"]
            wall = time.perf_counter()
            again = Runner(get_model("openai:bench", model_options), store, concurrency=args.concurrency)
            answers = again(cached)
            again.close()
            wall = time.perf_counter() - wall
            sent = server.stats()["total_requests"] - before
            assert all(a.cached for a in answers) and sent == 0
        print(f"cached rerun (runner): {args.cached:,} prompts in {wall:.3f} s, {sent} requests sent (target < 2 s)")

        # 3. End to end through the Python API: RelationshipLevy, 3,000 items = 6,000 prompts.
        config = RunConfig(model="openai:bench", model_options=model_options, concurrency=args.concurrency,
                           cache_dir=work / "e2e", keep_records=False)
        run_probe("relationship-levy", "openai:bench", config=config, sample_k=args.cached // 2)
        before = server.stats()["total_requests"]
        wall = time.perf_counter()
        out = run_probe("relationship-levy", "openai:bench", config=config, sample_k=args.cached // 2)
        wall = time.perf_counter() - wall
        sent = server.stats()["total_requests"] - before
        assert out.document["run"]["cached"] == args.cached and sent == 0
        print(f"cached rerun (relationship-levy, {args.cached // 2:,} items, metrics included): {wall:.3f} s, "
              f"{sent} requests sent (target < 2 s)")


if __name__ == "__main__":
    main()
