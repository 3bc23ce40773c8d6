"""``hf:PATH``: local weights with transformers, batched, on CPU or GPU.

Settings go after the path: ``hf:./ckpt?dtype=bfloat16&device=cuda:0``
(or in ``ModelOptions.extra``): ``device`` (auto, cpu, cuda, cuda:N), ``dtype``
(auto, float32, bfloat16, float16), ``max_batch_tokens`` (padded tokens per
forward pass; by default sized from free GPU memory), ``max_batch_size``,
``max_new_tokens`` (when the run sets no max_tokens), ``threads`` (CPU threads
for torch; one per worker is fastest on a busy or shared machine) and
``trust_remote_code``.

Two modes per request:
- generation with the run's parameters: greedy when temperature is 0 or unset,
  else sampling with a per-request seed, so an answer does not depend on which
  other prompts share its batch (or its Ray worker);
- option scoring (``Request.score_options``): the exact log-likelihood of each
  option's tokens after the prompt, one forward pass, no generation;
- constrained answers (``Request.constrain``, ``--constrain-answers``): the same
  scores choose the answer, the exact counterpart of a server's choice
  constraint: greedy (temperature 0 or unset) answers with the most likely
  option, sampling draws an option with probability proportional to
  exp(log-likelihood / temperature), seeded per request. The text is the option.

Decoding is our own short loop over the model's KV cache rather than
``model.generate``: it is what makes sampling batch-independent, and it keeps us
off an API that changes between transformers releases.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

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
CPU_MAX_BATCH_TOKENS = 8192


class HFModel(SyncBatchModel):
    supports_option_scoring = True
    supports_constrained_answers = True

    def __init__(self, name: str, settings: dict[str, Any]):
        import torch

        self._torch = torch
        if settings.get("threads"):
            torch.set_num_threads(max(1, settings["threads"]))
        self.source = name
        self.spec = f"hf:{name}"
        self.device = _device(settings.get("device", "auto"), torch)
        self.dtype_name = _dtype_name(settings.get("dtype", "auto"), self.device, torch)
        self.max_batch_size = max(1, settings.get("max_batch_size", 256))
        self.max_new_tokens = max(1, settings.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS))
        self.tokenizer, self.model = _load(name, self.device, self.dtype_name, settings.get("trust_remote_code", False))
        self.max_batch_tokens = settings.get("max_batch_tokens") or self._batch_tokens_budget(
            settings.get("memory_fraction", 0.8)
        )
        self.max_positions = _max_positions(self.model.config)
        self.stop_ids = _stop_ids(self.model, self.tokenizer)
        self.pad_id = _pad_id(self.tokenizer)
        # Batch sizes, device and threads do not change answers, so they stay out.
        # "spec@details", as the store expects (cache clear/export --model hf:PATH).
        self._identity = f"hf:{name}@{self.dtype_name}:{self.max_new_tokens}:{fingerprint(name)}"
        self._option_cache: dict[str, list[int]] = {}

    @property
    def identity(self) -> str:
        """The spec plus dtype and a fingerprint of the weights: a retrained checkpoint
        at the same path is a new model for the store."""
        return self._identity

    # -- the contract ------------------------------------------------------------

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        responses: list[Response | None] = [None] * len(requests)
        encoded = [prompt_ids(self.tokenizer, r) for r in requests]
        scoring = [i for i, r in enumerate(requests) if r.score_options or r.constrain]
        generating = [i for i, r in enumerate(requests) if not (r.score_options or r.constrain)]
        with self._torch.inference_mode():
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

    def _score(self, requests, encoded, idx, responses) -> None:
        # One sequence per (request, option); batches are planned over all of them.
        seqs, owners = [], []
        for i in idx:
            if not requests[i].options:
                responses[i] = Response.failure("bad_request", "Option scoring and constrained answers need answer options.")
                continue
            if self._too_long(encoded[i], max(len(self._options(o)) for o in requests[i].options), i, responses):
                continue
            for k, option in enumerate(requests[i].options):
                seqs.append(encoded[i] + self._options(option))
                owners.append((i, k, len(self._options(option))))
        scores: list[float] = [0.0] * len(seqs)
        for batch in self._plan([len(s) for s in seqs], extra=0):
            self._run_or_split(batch, lambda b: self._score_batch(b, seqs, owners, scores))
        per_request: dict[int, list[float]] = {}
        for (i, k, _), s in zip(owners, scores):
            per_request.setdefault(i, [0.0] * len(requests[i].options))[k] = s
        for i, logprobs in per_request.items():
            r = requests[i]
            if not r.score_options:
                option = r.options[choose_option(r, logprobs)]
                responses[i] = Response(
                    text=option, prompt_tokens=len(encoded[i]), completion_tokens=len(self._options(option))
                )
                continue
            best = int(np.argmax(logprobs))
            responses[i] = Response(
                text=r.options[best], option_logprobs=tuple(logprobs), prompt_tokens=len(encoded[i])
            )

    def _score_batch(self, batch, seqs, owners, scores) -> None:
        torch = self._torch
        rows = [seqs[j] for j in batch]
        tails = [owners[j][2] for j in batch]
        keep = max(tails) + 1
        ids, mask, positions = self._left_pad(rows)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=keep)
        logprobs = torch.log_softmax(out.logits.float(), dim=-1)
        for row, (j, n) in enumerate(zip(batch, tails)):
            # The option's tokens are the last n of the row; the logit before each predicts it.
            targets = torch.tensor(seqs[j][-n:], device=logprobs.device)
            picked = logprobs[row, keep - n - 1 : keep - 1].gather(-1, targets[:, None])
            scores[j] = float(picked.sum())

    # -- generation --------------------------------------------------------------

    def _generate(self, requests, encoded, idx, responses) -> None:
        limit = _generation_key(requests[idx[0]], self.max_new_tokens)[1]
        todo = [i for i in idx if not self._too_long(encoded[i], limit, i, responses)]
        for batch in self._plan([len(encoded[i]) for i in todo], extra=limit):
            rows = [todo[b] for b in batch]
            self._run_or_split(rows, lambda b: self._generate_batch(b, requests, encoded, limit, responses))

    def _generate_batch(self, rows, requests, encoded, limit, responses) -> None:
        torch = self._torch
        n = len(rows)
        ids, mask, positions = self._left_pad([encoded[i] for i in rows])
        draws = None
        if not is_greedy(requests[rows[0]]):
            # One uniform stream per request: its tokens do not depend on its batch mates.
            draws = np.stack([np.random.default_rng(request_seed(requests[i])).random(limit) for i in rows])
        stop = torch.tensor(sorted(self.stop_ids), device=self.device, dtype=torch.long)
        done = torch.zeros(n, dtype=torch.bool, device=self.device)
        produced = torch.full((n, limit), -1, dtype=torch.long, device=self.device)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=1)
        for step in range(limit):
            logits = out.logits[:, -1, :].float()
            params = requests[rows[0]].params
            chosen = self._choose(logits, params, None if draws is None else draws[:, step])
            chosen = torch.where(done, torch.full_like(chosen, self.pad_id), chosen)
            produced[:, step] = torch.where(done, torch.full_like(chosen, -1), chosen)
            done |= torch.isin(chosen, stop)
            if bool(done.all()) or step == limit - 1:
                break
            mask = torch.cat([mask, torch.ones((n, 1), dtype=mask.dtype, device=self.device)], dim=1)
            positions = positions[:, -1:] + 1
            out = self.model(
                input_ids=chosen[:, None], attention_mask=mask, position_ids=positions,
                past_key_values=out.past_key_values, use_cache=True,
            )
        for row, i in enumerate(rows):
            tokens = [t for t in produced[row].tolist() if t >= 0]
            while tokens and tokens[-1] in self.stop_ids:
                tokens.pop()
            text = self.tokenizer.decode(tokens, skip_special_tokens=True)
            responses[i] = Response(text=text, prompt_tokens=len(encoded[i]), completion_tokens=len(tokens))

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

    def _plan(self, lengths: list[int], extra: int) -> list[list[int]]:
        """Batches of indices, longest first, each under the padded-token budget."""
        order = sorted(range(len(lengths)), key=lambda j: -lengths[j])
        batches: list[list[int]] = []
        current: list[int] = []
        for j in order:
            width = lengths[current[0]] + extra if current else lengths[j] + extra
            if current and ((len(current) + 1) * width > self.max_batch_tokens or len(current) >= self.max_batch_size):
                batches.append(current)
                current = []
            current.append(j)
        if current:
            batches.append(current)
        return batches

    def _run_or_split(self, batch: list[int], run) -> None:
        """Run a batch; when the GPU runs out of memory, halve it and try again.

        The retry happens after the ``except`` block: inside it, the traceback
        still holds the failed attempt's tensors, and the halves would run out
        of memory too.
        """
        try:
            run(batch)
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
        self._run_or_split(batch[:half], run)
        self._run_or_split(batch[half:], run)

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
    return tokenizer, model


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
        from genderprobe.store import default_cache_dir

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
        raise UserError(f"The '{extra}' backend needs {', '.join(missing)}, which is not installed; "
                        f"install it with: pip install 'genderprobe[{extra}]'.")
