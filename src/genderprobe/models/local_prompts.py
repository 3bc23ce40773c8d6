"""Turning requests into token ids for local-weight backends (hf, vllm).

Both backends must see the same tokens, so the prompt text, the option
continuations and the per-request sampling seed are decided here once.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from genderprobe.errors import UserError
from genderprobe.models.base import Request


def split_spec(name: str, allowed: dict[str, type]) -> tuple[str, dict[str, Any]]:
    """``PATH?key=value&key=value`` -> (PATH, typed settings); unknown keys are refused."""
    path, _, query = name.partition("?")
    settings: dict[str, Any] = {}
    for key, raw in parse_qsl(query, keep_blank_values=True):
        if key not in allowed:
            known = ", ".join(sorted(allowed))
            raise UserError(f"Unknown model setting '{key}' in '{name}'; known settings: {known}.")
        kind = allowed[key]
        try:
            settings[key] = _boolean(raw) if kind is bool else kind(raw)
        except ValueError:
            what = {bool: "true or false", int: "a whole number", float: "a number"}.get(kind, kind.__name__)
            raise UserError(f"Model setting '{key}' must be {what}; got '{raw}'.") from None
    if not path:
        raise UserError(f"Model spec '{name}' names no model directory.")
    return path, settings


def _boolean(raw: str) -> bool:
    value = raw.lower()
    if value in ("", "1", "true", "yes", "on"):
        return True  # a bare "?trust_remote_code" turns it on
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


def local_dir(path: str) -> None:
    """Refuse, in one sentence, a path that cannot be a model directory.

    A name that does not look like a path (``org/model``) is left to the hub.
    """
    local = Path(path).expanduser()
    if not local.exists():
        if path.startswith((".", "/", "~")) or path.count("/") > 1:
            raise UserError(f"The model directory {path} does not exist.")
        return
    if not local.is_dir():
        raise UserError(f"{path} is a file; give the directory that holds the model's config.json.")
    if not (local / "config.json").is_file():
        raise UserError(
            f"The directory {path} has no config.json, so it holds no transformers model; "
            f"give the directory save_pretrained wrote."
        )


def has_chat_template(tokenizer: Any) -> bool:
    return bool(getattr(tokenizer, "chat_template", None))


def prompt_ids(tokenizer: Any, request: Request) -> list[int]:
    """The prompt's tokens: the chat template when the model has one, else the turns joined."""
    if has_chat_template(tokenizer):
        turns = [{"role": role, "content": content} for role, content in request.messages]
        text = tokenizer.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    text = "\n\n".join(content for _, content in request.messages)
    return list(tokenizer(text)["input_ids"])


def option_ids(tokenizer: Any, option: str) -> list[int]:
    """An answer option's tokens as the model would write them after the prompt.

    After a chat template the answer starts the assistant turn; after plain
    text a base model continues with a space.
    """
    text = option if has_chat_template(tokenizer) else " " + option
    ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    if not ids:
        raise UserError(f"The answer option {option!r} tokenizes to nothing.")
    return ids


def request_seed(request: Request) -> int:
    """A sampling seed for one request, independent of batch and shard.

    Derived from the run's seed and the request itself, so repetitions differ,
    and a request gets the same tokens alone, in any batch or on any Ray worker.
    Without a seed, fresh entropy.
    """
    if request.params.seed is None:
        return int.from_bytes(os.urandom(8), "little") >> 1
    h = hashlib.blake2b(digest_size=8)
    h.update(f"{request.params.seed}\x00{request.repetition}".encode())
    for role, content in request.messages:
        h.update(f"\x00{role}\x01{content}".encode())
    return int.from_bytes(h.digest(), "little") >> 1


def is_greedy(request: Request) -> bool:
    return not request.params.temperature
