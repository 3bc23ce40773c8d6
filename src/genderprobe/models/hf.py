"""``hf:PATH``: local weights with transformers, batched, on CPU or GPU.

Settings go after the path: ``hf:./ckpt?dtype=bfloat16&device=cuda:0``
(or in ``ModelOptions.extra``): ``device`` (auto, cpu, cuda, cuda:N), ``dtype``
(auto, float32, bfloat16, float16), ``max_batch_tokens`` (padded tokens per
forward pass; by default sized from free GPU memory; on a CPU 32,768, and 3,072
for scoring, the fastest there), ``max_batch_size`` (256; 64 on a CPU),
``max_new_tokens`` (when the run sets no max_tokens), ``threads`` (CPU threads
for torch; one per worker is fastest on a busy or shared machine) and
``trust_remote_code``.

Two modes per request:
- generation with the run's parameters: greedy when temperature is 0 or unset,
  else sampling with a per-request seed, so an answer does not depend on which
  other prompts share its batch (or its Ray worker);
- option scoring (``Request.score_options``): the exact log-likelihood of each
  option's tokens after the prompt, no generation; the prompt (and the tokens
  all options start with) is run once, each option continuing from its KV cache;
- raw-text log-likelihoods (``Request.raw_text``): each continuation's summed
  log-likelihood after the raw context, tokenized and computed as lm-eval's HFLM
  does (:mod:`genderprobe.models.loglikelihood`), one row per continuation
  (``Request.per_token``: divided by its number of tokens);
- constrained answers (``Request.constrain``, ``--constrain-answers``): the same
  scores choose the answer, the exact counterpart of a server's choice
  constraint: greedy (temperature 0 or unset) answers with the most likely
  option, sampling draws an option with probability proportional to
  exp(log-likelihood / temperature), seeded per request. The text is the option.

Decoding is our own short loop over the model's KV cache rather than
``model.generate``: it is what makes sampling batch-independent, it drops each
answer from the batch as soon as it ends, and it keeps us off an API that
changes between transformers releases.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genderprobe import steps
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
from genderprobe.models.loglikelihood import encode_pair

SETTINGS: dict[str, type] = {
    "device": str,
    "dtype": str,
    "max_batch_tokens": int,
    "max_batch_size": int,
    "max_new_tokens": int,
    "memory_fraction": float,
    "trust_remote_code": bool,
    "threads": int,
}
DTYPES = ("auto", "float32", "bfloat16", "float16")
DEFAULT_MAX_NEW_TOKENS = 128
# On a CPU memory is seldom the limit, speed is. Measured with SmolLM2-135M on
# two cores: generation is fastest with about 64 rows decoding together (room for
# 64 rows of 100 prompt and 300 answer tokens), while a scoring pass over more than
# about 3,000 tokens spills the CPU's caches and runs slower per token.
CPU_MAX_BATCH_TOKENS = 32768
CPU_MAX_BATCH_SIZE = 64
CPU_SCORE_BATCH_TOKENS = 3072
# Shorter shared beginnings are not worth a forward pass of their own.
MIN_SHARED_PREFIX = 8


class HFModel(SyncBatchModel):
    supports_option_scoring = True
    supports_loglikelihood = True
    supports_constrained_answers = True
    greedy_when_unset = True  # no temperature: greedy (see is_greedy)

    def __init__(self, name: str, settings: dict[str, Any]):
        import torch

        self._torch = torch
        if settings.get("threads"):
            torch.set_num_threads(max(1, settings["threads"]))
        self.source = name
        self.spec = f"hf:{name}"
        self.device = _device(settings.get("device", "auto"), torch)
        self.dtype_name = _dtype_name(settings.get("dtype", "auto"), self.device, torch)
        self.dtype = self.dtype_name
        on_cpu = self.device == "cpu"
        self.max_batch_size = max(1, settings.get("max_batch_size", CPU_MAX_BATCH_SIZE if on_cpu else 256))
        self.max_new_tokens = max(1, settings.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS))
        self.tokenizer, self.model = _load(name, self.device, self.dtype_name, settings.get("trust_remote_code", False))
        self.max_batch_tokens = settings.get("max_batch_tokens") or self._batch_tokens_budget(
            settings.get("memory_fraction", 0.8)
        )
        # Scoring batches on a CPU stay small for speed, unless the user chose a budget.
        self.score_batch_tokens = CPU_SCORE_BATCH_TOKENS if on_cpu and not settings.get("max_batch_tokens") else None
        self.max_positions = _max_positions(self.model.config)
        self.stop_ids = _stop_ids(self.model, self.tokenizer)
        self.pad_id = _pad_id(self.tokenizer)
        # Batch sizes, device and threads do not change answers, so they stay out.
        # "spec@details", as the store expects (cache clear/export --model hf:PATH).
        self._identity = f"hf:{name}@{self.dtype_name}:{self.max_new_tokens}:{fingerprint(name)}"
        self._option_cache: dict[str, list[int]] = {}
        self._tree_cache: dict[tuple[str, ...], tuple[list[int], list[list[int]]]] = {}

    @property
    def identity(self) -> str:
        """The spec plus dtype and a fingerprint of the weights: a retrained checkpoint
        at the same path is a new model for the store."""
        return self._identity

    # -- the contract ------------------------------------------------------------

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        responses: list[Response | None] = [None] * len(requests)
        raw = [i for i, r in enumerate(requests) if r.raw_text]
        encoded = [[] if r.raw_text else prompt_ids(self.tokenizer, r) for r in requests]
        scoring = [i for i, r in enumerate(requests) if (r.score_options or r.constrain) and not r.raw_text]
        generating = [i for i, r in enumerate(requests) if not (r.score_options or r.constrain or r.raw_text)]
        with self._torch.inference_mode():
            if raw:
                self._score_texts(requests, raw, responses)
            if scoring:
                self._score(requests, encoded, scoring, responses)
            # Requests of one run share their parameters; group anyway so a
            # batch never mixes greedy and sampled rows with different limits.
            groups: dict[tuple, list[int]] = {}
            for i in generating:
                groups.setdefault(_generation_key(requests[i], self.max_new_tokens), []).append(i)
            for idx in groups.values():
                self._generate(requests, encoded, idx, responses)
        return responses  # type: ignore[return-value]

    def close(self) -> None:
        self.model = None  # type: ignore[assignment]
        if self.device.startswith("cuda"):
            self._torch.cuda.empty_cache()

    # -- option scoring ----------------------------------------------------------

    def _options(self, option: str) -> list[int]:
        ids = self._option_cache.get(option)
        if ids is None:
            ids = self._option_cache[option] = option_ids(self.tokenizer, option)
        return ids

    def _option_tree(self, options: Sequence[str]) -> tuple[list[int], list[list[int]]]:
        """The tokens all ``options`` start with (their stem) and each option's own rest.

        Every rest keeps at least one token, so each option's score has a term of its own.
        """
        key = tuple(options)
        tree = self._tree_cache.get(key)
        if tree is None:
            ids = [self._options(o) for o in options]
            n, shortest = 0, min(map(len, ids))
            while n < shortest - 1 and all(t[n] == ids[0][n] for t in ids):
                n += 1
            tree = self._tree_cache[key] = (ids[0][:n], [t[n:] for t in ids])
        return tree

    def _score(self, requests, encoded, idx, responses) -> None:
        # One row per request: the prompt and the options' stem run once, and each
        # option's further tokens continue from that row's KV cache (see _score_batch).
        todo = []
        for i in idx:
            if not requests[i].options:
                responses[i] = Response.failure("bad_request", "Option scoring and constrained answers need answer options.")
            elif not self._too_long(encoded[i], max(len(self._options(o)) for o in requests[i].options), i, responses):
                todo.append(i)
        widths = [len(encoded[i]) + len(self._option_tree(requests[i].options)[0]) for i in todo]
        batches = self._plan(widths, extra=0, budget=self.score_batch_tokens)
        with steps.step(f"scoring the options of {len(todo):,} prompts on local weights", total=len(batches),
                        unit="batches") as scoring:
            for batch in batches:
                rows = [todo[b] for b in batch]
                self._run_or_split(rows, lambda b: self._score_batch(b, requests, encoded, responses), responses)
                scoring.advance()

    def _scored(self, request: Request, logprobs: list[float], n_prompt: int) -> Response:
        if not request.score_options:
            option = request.options[choose_option(request, logprobs)]
            return Response(text=option, prompt_tokens=n_prompt, completion_tokens=len(self._options(option)))
        best = int(np.argmax(logprobs))
        return Response(text=request.options[best], option_logprobs=tuple(logprobs), prompt_tokens=n_prompt)

    def _score_batch(self, rows, requests, encoded, responses) -> None:
        """Scores every option of each request in ``rows``, and answers it with them.

        A first pass over prompt + stem gives the stem's log-likelihood and that of
        each option's first own token; options longer than that feed their other
        tokens in a second pass from a copy of their row's KV cache. The prompt is
        computed once, not once per option.
        """
        torch = self._torch
        scores: dict[int, list[float]] = {}
        trees = [self._option_tree(requests[i].options) for i in rows]
        keep = max(len(stem) for stem, _ in trees) + 1
        more = [(row, k) for row, (_, rests) in enumerate(trees) for k, rest in enumerate(rests) if len(rest) > 1]
        out, mask, positions = self._prefill([encoded[i] + stem for i, (stem, _) in zip(rows, trees)], keep)
        logprobs = torch.log_softmax(out.logits.float(), dim=-1)
        for row, (i, (stem, rests)) in enumerate(zip(rows, trees)):
            # The last len(stem) + 1 logits predict the stem's tokens and then each rest's first.
            here = logprobs[row, keep - len(stem) - 1 :]
            base = sum(float(here[t, tok]) for t, tok in enumerate(stem))
            scores[i] = [base + float(here[-1, rest[0]]) for rest in rests]
        if more:
            self._score_rests(more, trees, rows, out.past_key_values, mask, positions, scores)
        for i in rows:
            responses[i] = self._scored(requests[i], scores[i], len(encoded[i]))

    def _score_rests(self, more, trees, rows, cache, mask, positions, scores) -> None:
        """The second pass: each (row, option) in ``more`` feeds its rest but the last
        token after its row's cached prompt + stem, right-padded to the longest."""
        torch = self._torch
        rests = [trees[row][1][k] for row, k in more]
        width = max(len(rest) for rest in rests) - 1
        ids = torch.full((len(more), width), self.pad_id, dtype=torch.long)
        tail_mask = torch.zeros((len(more), width), dtype=mask.dtype)
        for n, rest in enumerate(rests):
            ids[n, : len(rest) - 1] = torch.tensor(rest[:-1], dtype=torch.long)
            tail_mask[n, : len(rest) - 1] = 1
        owner = torch.tensor([row for row, _ in more], device=self.device)
        cache.batch_select_indices(owner)
        out = self.model(
            input_ids=ids.to(self.device),
            attention_mask=torch.cat([mask[owner], tail_mask.to(self.device)], dim=1),
            position_ids=positions[owner, -1:] + 1 + torch.arange(width, device=self.device),
            past_key_values=cache,
        )
        logprobs = torch.log_softmax(out.logits.float(), dim=-1)
        for n, ((row, k), rest) in enumerate(zip(more, rests)):
            targets = torch.tensor(rest[1:], device=logprobs.device)
            scores[rows[row]][k] += float(logprobs[n, : len(rest) - 1].gather(-1, targets[:, None]).sum())

    # -- raw-text log-likelihoods (lm-eval's) -----------------------------------------

    def _score_texts(self, requests, idx, responses) -> None:
        """Each continuation's log-likelihood after its raw context, one row per (request, continuation):
        lm-eval's tokens, the row fed without its last token, right-padded (causal attention never
        looks right, so padding changes no score)."""
        rows, scores, tokens = {}, {}, {}
        for i in idx:
            encoded = [encode_pair(self.tokenizer, requests[i].prompt, option) for option in requests[i].options]
            if any(not tail for _, tail in encoded):
                responses[i] = Response.failure("bad_request", "A continuation tokenizes to nothing.")
                continue
            longest = max(len(head) + len(tail) for head, tail in encoded) - 1  # the last token is not fed
            if self.max_positions and longest > self.max_positions:
                responses[i] = Response.failure(
                    "context_length", f"The text has {longest} tokens and the model takes {self.max_positions}.")
            else:
                scores[i], tokens[i] = [0.0] * len(encoded), sum(len(h) + len(t) for h, t in encoded)
                rows[i] = [(i, k, head, tail) for k, (head, tail) in enumerate(encoded)]
        todo = list(rows)
        # A request's continuations share its batch, so the progress counts requests; each is as wide as
        # its longest row times its rows.
        widths = [len(rows[i]) * (max(len(h) + len(t) for _, _, h, t in rows[i]) - 1) for i in todo]
        batches = self._plan(widths, extra=0, budget=self.score_batch_tokens)
        score = functools.partial(self._score_text_requests, requests, rows, scores, tokens, responses)
        score = functools.partial(self._score_text_requests, requests, rows, scores, tokens, responses)
        with steps.step(f"scoring the continuations of {len(todo):,} texts on local weights", total=len(batches),
                        unit="batches") as scoring:
            for batch in batches:
                self._run_or_split([todo[b] for b in batch], score, responses)
                scoring.advance()

    def _score_text_requests(self, requests, rows, scores, tokens, responses, batch) -> None:
        """Score a batch of requests' continuations and answer each (the runner may store them at once)."""
        self._score_text_batch([r for i in batch for r in rows[i]], scores)
        for i in batch:
            logprobs = scores[i]
            if requests[i].per_token:
                logprobs = [s / len(tail) for s, (_, _, _, tail) in zip(logprobs, rows[i])]
            responses[i] = Response(text=requests[i].options[int(np.argmax(logprobs))],
                                    option_logprobs=tuple(logprobs), prompt_tokens=tokens[i])

    def _score_text_batch(self, pairs, scores) -> None:
        torch = self._torch
        rows = [(head + tail)[:-1] for _, _, head, tail in pairs]
        ids = torch.full((len(rows), max(map(len, rows))), self.pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for n, row in enumerate(rows):
            ids[n, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[n, : len(row)] = 1
        logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
        for n, (i, k, head, tail) in enumerate(pairs):
            start = len(head) - 1  # the position whose logits predict the continuation's first token
            here = torch.log_softmax(logits[n, start : start + len(tail)].float(), dim=-1)
            targets = torch.tensor(tail, device=here.device)
            scores[i][k] = float(here.gather(-1, targets[:, None]).sum())

    # -- generation --------------------------------------------------------------

    def _generate(self, requests, encoded, idx, responses) -> None:
        limit = _generation_key(requests[idx[0]], self.max_new_tokens)[1]
        todo = [i for i in idx if not self._too_long(encoded[i], limit, i, responses)]
        for batch in self._plan([len(encoded[i]) for i in todo], extra=limit):
            rows = [todo[b] for b in batch]
            self._run_or_split(rows, lambda b: self._generate_batch(b, requests, encoded, limit, responses), responses)

    def _generate_batch(self, rows, requests, encoded, limit, responses) -> None:
        # One batch can take minutes on a CPU, and its answers all end together: its token steps are
        # what moves meanwhile (genderprobe.steps, shown where the run shows its progress).
        with steps.step(f"generating {len(rows):,} answers on local weights", total=limit,
                        unit="token steps (at most)") as moving:
            self._generate_rows(rows, requests, encoded, limit, responses, moving)

    def _generate_rows(self, rows, requests, encoded, limit, responses, moving: steps.Step) -> None:
        torch = self._torch
        out, mask, positions = self._prefill([encoded[i] for i in rows], keep=1)
        params = requests[rows[0]].params
        draws = None
        if not is_greedy(requests[rows[0]]):
            # One uniform stream per request: its tokens do not depend on its batch mates.
            draws = np.stack([np.random.default_rng(request_seed(requests[i])).random(limit) for i in rows])
        stop = torch.tensor(sorted(self.stop_ids), device=self.device, dtype=torch.long)
        produced: list[list[int]] = [[] for _ in rows]
        live = list(range(len(rows)))  # the rows still generating, in batch order
        for step in range(limit):
            logits = out.logits[:, -1, :].float()
            chosen = self._choose(logits, params, None if draws is None else draws[live, step])
            ended = torch.isin(chosen, stop).tolist()
            for row, token, end in zip(live, chosen.tolist(), ended):
                if not end:
                    produced[row].append(token)
            moving.advance()
            if all(ended) or step == limit - 1:
                break
            if any(ended):
                # A finished row would cost a full row per step until the longest
                # answer ends: drop it, and its KV cache, from the batch.
                going = torch.tensor([k for k, end in enumerate(ended) if not end], device=self.device)
                out.past_key_values.batch_select_indices(going)
                live = [live[k] for k in going.tolist()]
                chosen, mask, positions = chosen[going], mask[going], positions[going]
            mask = torch.cat([mask, torch.ones((len(live), 1), dtype=mask.dtype, device=self.device)], dim=1)
            positions = positions[:, -1:] + 1
            out = self.model(
                input_ids=chosen[:, None], attention_mask=mask, position_ids=positions,
                past_key_values=out.past_key_values, use_cache=True,
            )
        for row, i in enumerate(rows):
            text = self.tokenizer.decode(produced[row], skip_special_tokens=True)
            responses[i] = Response(text=text, prompt_tokens=len(encoded[i]), completion_tokens=len(produced[row]))

    def _choose(self, logits, params, uniforms):
        torch = self._torch
        if uniforms is None:
            return logits.argmax(dim=-1)
        probs = torch.softmax(logits / float(params.temperature), dim=-1)
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        if params.top_p is not None and params.top_p < 1:
            # Keep the smallest head of the distribution whose mass reaches top_p.
            sorted_probs = sorted_probs * ((sorted_probs.cumsum(-1) - sorted_probs) < params.top_p)
        cdf = sorted_probs.cumsum(-1)
        u = torch.tensor(uniforms, dtype=cdf.dtype, device=cdf.device)[:, None] * cdf[:, -1:]
        pick = torch.searchsorted(cdf, u).clamp(max=cdf.shape[-1] - 1)
        return order.gather(-1, pick)[:, 0]

    # -- batching ----------------------------------------------------------------

    def _prefill(self, rows: list[list[int]], keep: int):
        """The forward pass over ``rows``, with its KV cache and the logits of each row's last ``keep`` tokens;
        returns (output, attention mask, position ids) for the passes that continue from it.

        The tokens every row starts with (a chat template's system turn: a quarter
        of a RelationshipLevy prompt) are run once and their KV cache copied to
        every row; the rows' own tokens follow, left-padded after it.
        """
        torch = self._torch
        shared = _common_prefix(rows, most=min(map(len, rows)) - keep)
        if len(rows) < 2 or shared < MIN_SHARED_PREFIX:
            ids, mask, positions = self._left_pad(rows)
            out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                             logits_to_keep=keep)
            return out, mask, positions
        head = torch.tensor([rows[0][:shared]], dtype=torch.long, device=self.device)
        cache = self.model(input_ids=head, use_cache=True, logits_to_keep=1).past_key_values
        cache.batch_repeat_interleave(len(rows))
        ids, own_mask, own_positions = self._left_pad([r[shared:] for r in rows])
        mask = torch.cat([torch.ones((len(rows), shared), dtype=own_mask.dtype, device=self.device), own_mask], dim=1)
        positions = own_positions + shared
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=cache,
                         use_cache=True, logits_to_keep=keep)
        return out, mask, positions

    def _left_pad(self, rows: list[list[int]]):
        """Left padding keeps every row's last token in the last column (for
        ``logits_to_keep`` and for appending generated tokens)."""
        torch = self._torch
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for k, r in enumerate(rows):
            ids[k, width - len(r) :] = torch.tensor(r, dtype=torch.long)
            mask[k, width - len(r) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        return ids.to(self.device), mask.to(self.device), positions.to(self.device)

    def _plan(self, lengths: list[int], extra: int, budget: int | None = None) -> list[list[int]]:
        """Batches of indices, longest first, each under the padded-token budget
        (and under ``budget``, when given)."""
        limit = min(self.max_batch_tokens, budget or self.max_batch_tokens)
        order = sorted(range(len(lengths)), key=lambda j: -lengths[j])
        batches: list[list[int]] = []
        current: list[int] = []
        for j in order:
            width = lengths[current[0]] + extra if current else lengths[j] + extra
            if current and ((len(current) + 1) * width > limit or len(current) >= self.max_batch_size):
                batches.append(current)
                current = []
            current.append(j)
        if current:
            batches.append(current)
        return batches

    def _run_or_split(self, batch: list[int], run, responses: list[Response | None]) -> None:
        """Run a batch; when the GPU runs out of memory, halve it and try again.

        The retry happens after the ``except`` block: inside it, the traceback
        still holds the failed attempt's tensors, and the halves would run out
        of memory too.
        """
        try:
            run(batch)
            if self.answered is not None:  # the runner stores them now, not when the whole list is done
                self.answered({i: responses[i] for i in batch})  # type: ignore[misc]
            elif self.progress is not None:
                self.progress(len(batch))
            return
        except self._torch.OutOfMemoryError:
            if len(batch) == 1:
                raise UserError(
                    f"The model ran out of memory on {self.device} with a single prompt; free memory on the "
                    f"device or load the model with a smaller dtype."
                ) from None
        if self.device.startswith("cuda"):
            self._torch.cuda.empty_cache()
        self.max_batch_tokens = max(1, self.max_batch_tokens // 2)
        half = len(batch) // 2
        self._run_or_split(batch[:half], run, responses)
        self._run_or_split(batch[half:], run, responses)

    def _batch_tokens_budget(self, fraction: float) -> int:
        if not self.device.startswith("cuda"):
            return CPU_MAX_BATCH_TOKENS
        free, _ = self._torch.cuda.mem_get_info(self._torch.device(self.device))
        return max(256, int(free * fraction) // _bytes_per_token(self.model.config, self.dtype_name))

    def _too_long(self, ids: list[int], extra: int, i: int, responses) -> bool:
        if self.max_positions and len(ids) + extra > self.max_positions:
            responses[i] = Response.failure(
                "context_length",
                f"The prompt has {len(ids)} tokens and the model takes {self.max_positions}.",
            )
            return True
        return False


def _common_prefix(rows: list[list[int]], most: int) -> int:
    """How many first tokens all ``rows`` share, at most ``most``."""
    n, first = 0, rows[0]
    while n < most and all(r[n] == first[n] for r in rows):
        n += 1
    return n


# -- loading ----------------------------------------------------------------------


def choose_option(request: Request, logprobs: Sequence[float]) -> int:
    """Which option a constrained request answers with, from the options' log-likelihoods.

    Greedy: the most likely. Sampling: a seeded draw with probabilities proportional
    to exp(log-likelihood / temperature).
    """
    scores = np.asarray(logprobs, dtype=np.float64)
    if is_greedy(request):
        return int(np.argmax(scores))
    scaled = scores / float(request.params.temperature)
    weights = np.exp(scaled - scaled.max())
    draw = np.random.default_rng(request_seed(request)).random()
    return int(min(np.searchsorted(np.cumsum(weights / weights.sum()), draw, side="right"), len(scores) - 1))


def _device(name: str, torch: Any) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"Device '{name}' was asked for but torch sees no CUDA GPU; use device=cpu.")
    if name != "cpu" and not name.startswith(("cuda", "mps", "xpu")):
        raise UserError(f"Unknown device '{name}'; use auto, cpu, cuda or cuda:N.")
    return name


def _dtype_name(name: str, device: str, torch: Any) -> str:
    if name not in DTYPES:
        raise UserError(f"Unknown dtype '{name}'; use one of {', '.join(DTYPES)}.")
    if name != "auto":
        return name
    if device.startswith("cuda") and torch.cuda.is_bf16_supported():
        return "bfloat16"
    return "float32"


def _load(name: str, device: str, dtype: str, trust_remote_code: bool):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    local = Path(name).expanduser()
    source = str(local) if local.exists() else name
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(
            source, dtype=getattr(torch, dtype), trust_remote_code=trust_remote_code
        )
    except Exception as exc:  # noqa: BLE001 - missing files, bad config, corrupt weights: all one sentence
        first = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else type(exc).__name__
        raise UserError(f"Cannot load the hf model '{name}': {first}.") from None
    model.to(device)
    model.eval()
    if device == "cpu":
        _attend_grouped_heads_whole(model, torch)
    return tokenizer, model


GROUPED_SDPA = "genderprobe_grouped_sdpa"


def _attend_grouped_heads_whole(model: Any, torch: Any) -> None:
    """On a CPU, give torch's attention the grouped key/value heads as they are.

    transformers' sdpa attention copies each key/value head once per query head
    whenever a padding mask is given (every batch of ours): with SmolLM2's 9
    query heads on 3 key/value heads that copy of the whole KV cache was a third
    of each decoding step. torch 2.5+ takes the groups itself (``enable_gqa``), on
    a CPU with a mask as well; the arithmetic and the answers are the same.
    """
    config = model.config
    heads = getattr(config, "num_attention_heads", None)
    groups = heads // (getattr(config, "num_key_value_heads", None) or heads) if heads else 1
    version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    if groups <= 1 or version < (2, 5) or getattr(config, "_attn_implementation", None) != "sdpa":
        return
    try:
        from transformers import AttentionInterface, AttentionMaskInterface
        from transformers.masking_utils import sdpa_mask
    except ImportError:
        return
    AttentionInterface.register(GROUPED_SDPA, _grouped_sdpa)
    AttentionMaskInterface.register(GROUPED_SDPA, sdpa_mask)  # the masks sdpa gets
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(GROUPED_SDPA)


def _grouped_sdpa(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs):
    """transformers' sdpa attention, with grouped key/value heads passed whole."""
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    causal = getattr(module, "is_causal", True) if is_causal is None else is_causal
    causal = bool(causal) and attention_mask is None and query.shape[2] > 1
    unusual = dropout or kwargs.get("position_bias") is not None or kwargs.get("cache") is not None
    if unusual or (causal and key.shape[2] != query.shape[2]):  # what only transformers' own handles
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      is_causal=is_causal, **kwargs)
    out = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, scale=scaling, is_causal=causal, enable_gqa=True
    )
    return out.transpose(1, 2).contiguous(), None


def _max_positions(config: Any) -> int | None:
    for attr in ("max_position_embeddings", "n_positions"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _stop_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for value in (getattr(model.generation_config, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    return ids


def _pad_id(tokenizer: Any) -> int:
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id, 0):
        if isinstance(value, int):
            return value
    return 0


def _bytes_per_token(config: Any, dtype: str) -> int:
    """A generous estimate of GPU memory one padded token costs in a forward pass:
    its KV cache in every layer plus one layer's activations, twice for safety."""
    size = 4 if dtype == "float32" else 2
    hidden = getattr(config, "hidden_size", None) or getattr(config, "n_embd", 1024)
    layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", 24)
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", 16)
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    inner = getattr(config, "intermediate_size", None) or 4 * hidden
    kv = 2 * layers * kv_heads * (hidden // heads) * size
    activations = (6 * hidden + 3 * inner) * size
    return 2 * (kv + activations)


def _generation_key(request: Request, default_max: int) -> tuple:
    p = request.params
    limit = p.max_tokens if p.max_tokens else default_max
    return (is_greedy(request), limit, p.temperature or 0.0, p.top_p)


# Files a training run writes beside the weights; from_pretrained never reads them.
TRAINING_STATE = ("optimizer", "scheduler", "rng_state", "trainer_state", "training_args")


def fingerprint(name: str) -> str:
    """A content hash of the model directory's own files (config, tokenizer,
    every byte of the weights): any change to them is a new model for the
    store, and a copy at another path or on another node is the same model.

    Subfolders, hidden files and trainer state are left out (from_pretrained
    does not read them). A hub id is fingerprinted by its downloaded snapshot.
    Each file's digest is remembered by path, size and modification time in
    the cache directory, so the weights are read once, not on every run.
    """
    root = Path(name).expanduser()
    if not root.is_dir():
        root = _hub_snapshot(name)
        if root is None:
            return "hub"
    memo = _DigestMemo()
    h = hashlib.sha256()
    for path in sorted(root.iterdir()):
        if path.name.startswith((".", *TRAINING_STATE)) or not path.is_file():
            continue
        h.update(f"{path.name}\x00{memo.digest(path)}\x00".encode())
    memo.save()
    return h.hexdigest()[:16]


def _hub_snapshot(name: str) -> Path | None:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception:  # noqa: BLE001 - not a hub id, or not downloaded: nothing to hash
        return None


class _DigestMemo:
    """SHA-256 digests of files, remembered across runs by (path, size, mtime)."""

    def __init__(self) -> None:
        from genderprobe.cache_dir import default_cache_dir

        self.path = default_cache_dir() / "file-digests.json"
        try:
            self.known: dict[str, list] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.known = {}
        self.changed = False

    def digest(self, path: Path) -> str:
        stat = path.stat()
        key, stamp = str(path.resolve()), [stat.st_size, stat.st_mtime_ns]
        entry = self.known.get(key)
        if entry and entry[:2] == stamp:
            return entry[2]
        with path.open("rb") as f:
            value = hashlib.file_digest(f, "sha256").hexdigest()
        self.known[key] = [*stamp, value]
        self.changed = True
        return value

    def save(self) -> None:
        if not self.changed:
            return
        try:  # a memo only: an unwritable cache directory costs time, not answers
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.known))
            os.replace(tmp, self.path)
        except OSError:
            pass


def create(name: str, options: ModelOptions) -> HFModel:
    path, settings = split_spec(name, SETTINGS)
    # Checked before torch is imported: a typo should cost no seconds.
    local_dir(path)
    for key, value in options.extra.items():
        if key in SETTINGS:
            settings[key] = value
    require_packages("hf", ("torch", "transformers"))
    return HFModel(path, settings)


def require_packages(extra: str, packages: tuple[str, ...]) -> None:
    """One sentence naming the extra to install when a package it brings is missing."""
    import importlib.util

    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    if missing:
        needed = " and ".join(missing) if len(missing) <= 2 else ", ".join(missing[:-1]) + f" and {missing[-1]}"
        which = "which is" if len(missing) == 1 else "which are"
        raise UserError(f"The '{extra}' backend needs {needed}, {which} not installed; "
                        f"install it with: pip install 'genderprobe[{extra}]'.")
