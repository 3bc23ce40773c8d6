"""Which HTTP client stack keeps up at concurrency 64?

Each client sends the same N chat-completion requests, 64 at a time, to the
local OpenAI-compatible test server running in its own process with a fixed
latency per request. Ideal wall time = N x latency / 64. Reported: wall time,
share of ideal throughput, and this process's CPU time per request.

    python benchmarks/bench_http_clients.py                  # 2,000 requests, 100 ms latency
    python benchmarks/bench_http_clients.py -n 4000 --latency 0.1

Clients: aiohttp (ClientSession, unlimited pool), httpx (AsyncClient with 64
connections), and the openai SDK (httpx underneath) when installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from genderprobe.testing.openai_server import spawn_openai_server

CONCURRENCY = 64


def body(i: int) -> dict:
    return {"model": "bench", "messages": [{"role": "user", "content": f"Case {i}: who is right, (a) Adam or (b) Emma?"}]}


async def drive(n: int, send) -> None:
    queue = list(range(n))

    async def worker() -> None:
        while queue:
            i = queue.pop()
            text = await send(i)
            assert text, "empty answer"

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


async def with_aiohttp(url: str, n: int) -> None:
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def send(i: int) -> str:
            async with session.post(f"{url}/chat/completions", json=body(i)) as resp:
                data = json.loads(await resp.read())
            return data["choices"][0]["message"]["content"]

        await drive(n, send)


async def with_httpx(url: str, n: int) -> None:
    import httpx

    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        async def send(i: int) -> str:
            resp = await client.post(f"{url}/chat/completions", json=body(i))
            return resp.json()["choices"][0]["message"]["content"]

        await drive(n, send)


async def with_openai_sdk(url: str, n: int) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="sk-" + "bench", max_retries=0)
    try:
        async def send(i: int) -> str:
            out = await client.chat.completions.create(**body(i))
            return out.choices[0].message.content or ""

        await drive(n, send)
    finally:
        await client.close()


CLIENTS = {"aiohttp": with_aiohttp, "httpx": with_httpx, "openai-sdk": with_openai_sdk}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="requests per client")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    args = parser.parse_args()
    ideal = args.n * args.latency / CONCURRENCY
    print(f"{args.n} requests, {args.latency * 1000:.0f} ms latency, concurrency {CONCURRENCY}: ideal {ideal:.2f} s")
    with spawn_openai_server("--latency", str(args.latency)) as server:
        for name in args.clients.split(","):
            try:
                run = CLIENTS[name]
                asyncio.run(run(server.base_url, 64))  # warm-up: imports, connections
            except ImportError as exc:
                print(f"{name:11s} skipped ({exc.name} not installed)")
                continue
            cpu, wall = time.process_time(), time.perf_counter()
            asyncio.run(run(server.base_url, args.n))
            wall = time.perf_counter() - wall
            cpu = time.process_time() - cpu
            print(f"{name:11s} {wall:6.2f} s  {ideal / wall:6.1%} of ideal  {cpu / args.n * 1000:5.2f} ms CPU/request")


if __name__ == "__main__":
    main()
