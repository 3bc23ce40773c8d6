"""Run-engine speed against the local OpenAI-compatible server (in its own process).

1. Throughput: N distinct prompts (default 4,000), 100 ms latency per request,
   concurrency 64, through Runner + OpenAICompatible + the SQLite store.
   Target: wall time within 125% of the ideal N x 0.1 / 64 s, and the runner's
   own CPU (this process: runner, HTTP client, JSON, store) under 1 ms/request.
2. Cached rerun: 6,000 prompts already in the store, asked again.
   Target: under 2 s (the server must see zero requests).
3. End to end: a fully cached RelationshipLevy run of 3,000 items (6,000
   prompts) through the Python API, parsing and metrics included.

    python benchmarks/bench_runner.py
    python benchmarks/bench_runner.py -n 4000 --latency 0.1 --progress
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

from genderprobe.api import RunConfig, run_probe
from genderprobe.models import ModelOptions, Request, get_model
from genderprobe.runner import Runner
from genderprobe.store import Store
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

    from genderprobe.terminal import Progress

    return Progress(Console(file=io.StringIO(), force_terminal=True, width=120))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=4000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--cached", type=int, default=6000)
    parser.add_argument("--progress", action="store_true", help="drive a (hidden) progress bar too")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-runner-"))
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
