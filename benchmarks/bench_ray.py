"""Ray workers against the local OpenAI-compatible test server at 100 ms latency:
throughput with 2 local workers vs 1, at the same per-worker concurrency.

    python benchmarks/bench_ray.py [--requests 1600] [--concurrency 16] [--latency 0.1]

Every request goes through the runner (no store), the Ray pool and a worker's
API client, to a server in this process on 127.0.0.1. Ideal for one worker:
concurrency / latency requests per second; two workers should double it.
"""

from __future__ import annotations

import argparse
import os
import time

from genderprobe.engine.executors.ray_pool import RayPool
from genderprobe.engine.runner import Runner
from genderprobe.models.base import ModelOptions, Request
from genderprobe.studies.relationship_levy.probe import OPTIONS
from genderprobe.testing.openai_server import OpenAITestServer


def throughput(server: OpenAITestServer, workers: int, concurrency: int, requests: list[Request]) -> float:
    options = ModelOptions(base_url=server.base_url, api_key="sk-bench")
    pool = RayPool("openai:bench", options, workers=workers, concurrency=concurrency, worker_cpus=0.5)
    runner = Runner(pool, None, concurrency=pool.runner_concurrency)
    try:
        runner(requests[:workers * concurrency])  # warm up connections
        start = time.perf_counter()
        responses = runner(requests)
        elapsed = time.perf_counter() - start
    finally:
        runner.close()
    assert all(r.ok for r in responses)
    return len(requests) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1600)
    parser.add_argument("--concurrency", type=int, default=16, help="per worker")
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    import ray

    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback only
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    with OpenAITestServer(latency=args.latency) as server:
        figures = {}
        for workers in (1, 2):
            reqs = [Request.user(f"Prompt {workers}-{i}: (a) or (b)?", options=OPTIONS) for i in range(args.requests)]
            figures[workers] = throughput(server, workers, args.concurrency, reqs)
            ideal = workers * args.concurrency / args.latency
            print(f"{workers} worker(s), concurrency {args.concurrency} each: {figures[workers]:7.1f} req/s "
                  f"(ideal {ideal:.0f}, {figures[workers] / ideal:.0%})")
    print(f"2 workers / 1 worker: {figures[2] / figures[1]:.2f}x")
    ray.shutdown()


if __name__ == "__main__":
    main()
