"""The test kit: real local servers and models for tests and benchmarks, ours and plugin authors'.

The servers speak the same HTTP protocols as the hosted APIs (OpenAI chat
completions, Anthropic Messages, both batch APIs), answer like a model with a
known bias, count what they are asked, and inject faults on demand, so the run
engine is exercised over real loopback connections instead of mocks.
``tiny_models`` builds random-weight local models; ``smollm2`` the real test
model. docs/plugins.md shows a plugin's tests using them; what only
genderprobe's own tests use lives under tests/ (docs/design.md).

It may import anything of genderprobe; nothing in the package imports it.
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
