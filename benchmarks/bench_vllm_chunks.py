"""vllm: what storing a list chunk by chunk costs, against answering it in one piece.

    python benchmarks/bench_vllm_chunks.py [--prompts 2048] [--rounds 3] [--max-tokens 8]

One engine (vLLM's CPU build or a GPU) with the small random-weight model; the same
RelationshipLevy prompts answered alternately with the chunks the backend uses
(genderprobe.models.vllm_engine.chunk_size) and as one list, for generation and
option scoring. Prints the median seconds of each and their ratio. Engine start
is left out: it is the same either way.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_hf import levy_prompts

from genderprobe.models import get_model
from genderprobe.models.base import GenerationParams, Request
from genderprobe.studies.relationship_levy.probe import OPTIONS
from genderprobe.testing.tiny_models import build_tiny_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = build_tiny_model(Path(tmp) / "m", size="small")
        model = get_model(f"vllm:{path}?dtype=float32&enforce_eager=1&kv_cache_memory_bytes={2**30}")
        chunk = model.chunk
        texts = levy_prompts(args.prompts)
        lists = {
            "generation": [Request.user(t, params=GenerationParams(max_tokens=args.max_tokens)) for t in texts],
            "scoring": [Request.user(t, options=OPTIONS, score_options=True) for t in texts],
        }
        print(f"{args.prompts} prompts, chunks of {chunk} (vllm_engine.chunk_size), {args.rounds} rounds")
        for mode, requests in lists.items():
            times: dict[str, list[float]] = {"chunks": [], "one list": []}
            model.generate_batch(requests[:64])  # warm up
            for _ in range(args.rounds):
                for label, size in (("chunks", chunk), ("one list", len(requests) + 1)):
                    model.chunk = size
                    start = time.perf_counter()
                    model.generate_batch(requests)
                    times[label].append(time.perf_counter() - start)
            a, b = (statistics.median(times[k]) for k in ("chunks", "one list"))
            print(f"{mode}: chunks {a:.2f} s, one list {b:.2f} s, ratio {a / b:.3f}")
        model.close()


if __name__ == "__main__":
    main()
