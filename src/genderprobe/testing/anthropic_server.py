"""A real Anthropic Messages-API-compatible server for tests.

Serves ``POST /v1/messages`` with the same answers, counters and faults as
:class:`~genderprobe.testing.openai_server.OpenAITestServer`; it checks the key
(``x-api-key`` or ``Authorization: Bearer``), the ``anthropic-version`` header and that ``max_tokens`` is set,
as the real API does. Errors use the Messages API's error shape.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import web

from genderprobe.testing.answers import ChatCall, tokenize
from genderprobe.testing.openai_server import OpenAITestServer

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


class AnthropicTestServer(OpenAITestServer):
    """Takes the same arguments as :class:`OpenAITestServer`; ``base_url`` has no /v1."""

    @property
    def base_url(self) -> str:
        return self.url

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/v1/messages", self._messages), web.get("/_stats", self._stats)]

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
            call = _messages_call(body)
        except (ValueError, KeyError, TypeError):
            return _error(400, "the request body is not a Messages API request")
        if not isinstance(body.get("max_tokens"), int):
            return _error(400, "max_tokens: field required")
        self.last_params = dict(call.params)
        if not request.headers.get("anthropic-version"):
            return _error(400, "anthropic-version header is required")
        # Older SDKs send x-api-key, newer ones Authorization: Bearer; the API takes both.
        bearer = request.headers.get("Authorization", "")
        key = request.headers.get("x-api-key") or (bearer[7:] if bearer.startswith("Bearer ") else "")
        with self._lock:
            self.requests[call.prompt] += 1
            self.auth_headers[key] += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.api_key is not None and key != self.api_key:
            return _error(401, "invalid x-api-key")
        if self.model is not None and call.model != self.model:
            return _error(404, f"model: {call.model}")
        fault = self.faults.draw()
        if fault is not None:
            if fault == "429":
                return _error(429, "Rate limited.", {"retry-after": f"{self.retry_after:g}"})
            if fault.isdigit():
                echo = f" (you sent {key})" if self.echo_key else ""
                return _error(int(fault), f"injected HTTP {fault}{echo}")
            response = await self._fault(request, fault)
            if response is not None:
                return response
        message = message_body(call, self.answer(call), body["max_tokens"])
        with self._lock:
            self.answered[call.prompt] += 1
        return web.json_response(message)


def message_body(call: ChatCall, text: str, limit: int) -> dict[str, Any]:
    """A Messages API answer carrying ``text``, cut at ``limit`` tokens as the API cuts it."""
    tokens = tokenize(text)
    stop = "end_turn"
    if 0 < limit < len(tokens):
        tokens, stop = tokens[:limit], "max_tokens"
    return {
        "id": f"msg_{time.monotonic_ns():x}",
        "type": "message",
        "role": "assistant",
        "model": call.model,
        "content": [{"type": "text", "text": "".join(tokens)}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": sum(len(tokenize(c)) for _, c in call.messages),
            "output_tokens": len(tokens),
        },
    }


def _messages_call(body: Any) -> ChatCall:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise ValueError("no messages")
    turns = [(str(m["role"]), str(m["content"])) for m in body["messages"]]
    if body.get("system"):
        turns.insert(0, ("system", str(body["system"])))
    params = {k: v for k, v in body.items() if k not in ("messages", "model", "system")}
    return ChatCall(model=str(body.get("model", "")), messages=tuple(turns), params=params)


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    payload = {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}
    return web.json_response(payload, status=status, headers=headers)
