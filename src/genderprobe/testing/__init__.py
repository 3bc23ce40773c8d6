"""Real local servers for tests and benchmarks.

They speak the same HTTP protocols as the hosted APIs (OpenAI chat completions,
Anthropic Messages), answer like a model with a known bias, count what they are
asked, and inject faults on demand, so the run engine is exercised over real
loopback connections instead of mocks.
"""

from typing import Any

from genderprobe.testing.answers import ChatCall, PreferMan, tokenize
from genderprobe.testing.faults import FAULT_KINDS, Faults

__all__ = ["FAULT_KINDS", "ChatCall", "Faults", "OpenAITestServer", "PreferMan", "tokenize"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so `python -m genderprobe.testing.openai_server`
    # does not find its own module already imported (runpy warns about that).
    if name == "OpenAITestServer":
        from genderprobe.testing.openai_server import OpenAITestServer

        return OpenAITestServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
