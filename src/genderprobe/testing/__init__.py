"""Real local servers for tests and benchmarks.

They speak the same HTTP protocols as the hosted APIs (OpenAI chat completions,
Anthropic Messages), answer like a model with a known bias, count what they are
asked, and inject faults on demand, so the run engine is exercised over real
loopback connections instead of mocks.
"""

from genderprobe.testing.answers import ChatCall, PreferMan, tokenize
from genderprobe.testing.faults import FAULT_KINDS, Faults
from genderprobe.testing.openai_server import OpenAITestServer

__all__ = ["FAULT_KINDS", "ChatCall", "Faults", "OpenAITestServer", "PreferMan", "tokenize"]
