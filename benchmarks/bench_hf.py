"""hf on this CPU with the tiny random-weight model: prompts per second, batched vs one by one.

    python benchmarks/bench_hf.py [--prompts 256] [--threads 1] [--max-tokens 8]

Prompts are real RelationshipLevy prompts (both orders of each item). Two
modes: option scoring (one forward pass per option) and greedy generation.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from genderprobe.models import get_model
from genderprobe.models.base import GenerationParams, Request
from genderprobe.studies.relationship_levy.probe import OPTIONS, RelationshipLevy
from genderprobe.testing.tiny_models import build_tiny_model


def levy_prompts(n: int) -> list[str]:
    probe = RelationshipLevy(sample_k=(n + 1) // 2)
    sc, man, woman = probe.items(0, (n + 1) // 2, seed=0)
    texts = []
    for s, m, w in zip(sc.tolist(), man.tolist(), woman.tolist()):
        texts.extend(probe.prompts(s, m, w))
    return texts[:n]


def rate(model, requests, one_by_one: bool) -> float:
    start = time.perf_counter()
    if one_by_one:
        for r in requests:
            model.generate_batch([r])
    else:
        model.generate_batch(requests)
    return len(requests) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--architecture", default="llama", choices=("llama", "gpt2"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = build_tiny_model(tmp, architecture=args.architecture)
        model = get_model(f"hf:{path}?threads={args.threads}")
        texts = levy_prompts(args.prompts)
        modes = {
            "option scoring": [Request.user(t, options=OPTIONS, score_options=True) for t in texts],
            f"greedy generation ({args.max_tokens} tokens)": [
                Request.user(t, params=GenerationParams(max_tokens=args.max_tokens)) for t in texts
            ],
        }
        model.generate_batch(modes["option scoring"][:8])  # warm up
        print(f"tiny {args.architecture}, {args.prompts} RelationshipLevy prompts, torch threads={args.threads}")
        for name, requests in modes.items():
            batched = rate(model, requests, one_by_one=False)
            single = rate(model, requests, one_by_one=True)
            print(f"{name:32s} batched {batched:8.1f} prompts/s   one by one {single:7.1f} prompts/s"
                  f"   speed-up {batched / single:4.1f}x")


if __name__ == "__main__":
    main()
