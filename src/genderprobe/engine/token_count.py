"""Prompt tokens before anything is sent (--dry-run, plan, --tpm pacing).

OpenAI's own models are counted exactly with ``tiktoken`` where it is installed
and can load the model's encoding (it downloads it once, then reads its cache);
every other model, and any model when tiktoken cannot serve, at about four
characters a token. Either way each message adds a few tokens of chat framing.
Which method counted is said wherever the count is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from genderprobe.models.base import Request

FRAMING = 4  # tokens of chat framing per message (role markers and separators)
ESTIMATE = "four characters a token"


@dataclass(frozen=True)
class TokenCounter:
    method: str  # "tiktoken o200k_base", or ESTIMATE with why tiktoken did not serve
    encode: Callable[[str], list[int]] | None = None

    def prompt_tokens(self, request: Request) -> int:
        if self.encode is None:
            text = sum(len(content) for _, content in request.messages) // 4
        else:
            text = sum(len(self.encode(content)) for _, content in request.messages)
        return text + FRAMING * len(request.messages)


def token_counter(spec: str) -> TokenCounter:
    """The counter for a model spec: tiktoken's encoding for ``openai:NAME`` where it knows NAME."""
    backend, _, name = spec.partition(":")
    if backend != "openai" or not name:
        return TokenCounter(ESTIMATE)
    return _openai_counter(name.rsplit("/", 1)[-1])  # openai/gpt-4o-mini on a router is gpt-4o-mini


@lru_cache(maxsize=32)
def _openai_counter(name: str) -> TokenCounter:
    try:
        import tiktoken
    except ImportError:
        return TokenCounter(ESTIMATE)
    try:
        encoding = tiktoken.encoding_for_model(name)
    except KeyError:  # not a model tiktoken knows: a local server's model, say
        return TokenCounter(ESTIMATE)
    except Exception as exc:  # tiktoken could not fetch its encoding file (offline)
        return TokenCounter(f"{ESTIMATE} (tiktoken could not load the encoding for {name}: "
                            f"{type(exc).__name__})")
    return TokenCounter(f"tiktoken {encoding.name}", encoding.encode_ordinary)
