"""A real OpenAI-compatible server with the quirks of particular providers, for tests.

    with QuirkyServer(reasoning=True) as server:
        model = get_model("openai:o3-mini", ModelOptions(base_url=server.base_url))
        ...
        assert [hit.path for hit in server.hits] == ["/v1/chat/completions", ...]

Each flag makes it behave like one kind of server the backends must handle:

reasoning: an OpenAI reasoning model (o1, o3, gpt-5): a 400 in OpenAI's shape
    for ``max_tokens`` ("use max_completion_tokens"), for a temperature or top_p
    other than 1; answers carry ``reasoning_content``, usage with reasoning
    tokens, a dated ``model`` and a ``system_fingerprint``.
think: answers open with a ``<think>...</think>`` block (vLLM without a
    reasoning parser, Ollama).
null_content: answers have ``content: null`` (a model that thought until its limit).
html: every request gets a web page with status 200 (a web UI at the URL).
azure_key: Azure OpenAI: the key must come in an ``api-key`` header and
    ``?api-version=`` is required (401 / 404 otherwise, as Azure answers); the
    401 echoes the key it got, as careless servers do.
reject: request fields refused with a 400 as unsupported, in ``error_shape``
    "openai" (the field in ``error.param``) or "vllm" (only in the message).
served: the model names served; others get a 404 "does not exist", and
    ``GET /v1/models`` lists them.

It also serves ``POST /v1/messages`` (Anthropic Messages) with a thinking block
before the answer. Every request, to any path, is recorded in :attr:`hits`.
Answers come from :class:`~genderprobe.testing.answers.PreferMan`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from genderprobe.testing.answers import ChatCall, PreferMan, tokenize
from genderprobe.testing.background import BackgroundServer

WEB_PAGE = "<!doctype html>\n<html><head><title>Chat UI</title></head><body><div id=app></div></body></html>\n"
REASONING = "The question asks who is right; I weigh both sides before answering."
DATED = "-2025-01-31"  # an alias resolves to a dated version, as OpenAI's do


@dataclass
class Hit:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any  # the JSON body, or None


class QuirkyServer(BackgroundServer):
    def __init__(
        self,
        *,
        reasoning: bool = False,
        think: bool = False,
        null_content: bool = False,
        html: bool = False,
        azure_key: str | None = None,
        reject: Iterable[str] = (),
        error_shape: str = "openai",
        served: Iterable[str] | None = None,
        p_man: float = 1.0,
    ):
        super().__init__()
        self.reasoning = reasoning
        self.think = think
        self.null_content = null_content
        self.html = html
        self.azure_key = azure_key
        self.reject = tuple(reject)
        self.error_shape = error_shape
        self.served = tuple(served) if served is not None else None
        self.answer = PreferMan(p_man)
        self.hits: list[Hit] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def chat_hits(self) -> list[Hit]:
        return [h for h in self.hits if h.path.endswith("/chat/completions")]

    def routes(self) -> list[web.RouteDef]:
        return [
            web.post("/v1/chat/completions", self._chat),
            web.post("/openai/deployments/{deployment}/chat/completions", self._chat),  # Azure's path
            web.get("/v1/models", self._models),
            web.post("/v1/messages", self._messages),
            web.route("*", "/{tail:.*}", self._elsewhere),  # last: anything else
        ]

    # -- handlers -------------------------------------------------------------

    async def _record(self, request: web.Request) -> Any:
        try:
            body = await request.json() if request.can_read_body else None
        except ValueError:
            body = None
        with self._lock:
            self.hits.append(Hit(request.method, request.path, dict(request.query), dict(request.headers), body))
        return body

    async def _elsewhere(self, request: web.Request) -> web.Response:
        await self._record(request)
        if self.html:
            return web.Response(text=WEB_PAGE, content_type="text/html")
        raise web.HTTPNotFound()  # aiohttp's plain "404: Not Found", as most servers answer an unknown path

    async def _models(self, request: web.Request) -> web.Response:
        await self._record(request)
        names = self.served or ("quirky-model",)
        return web.json_response({"object": "list", "data": [{"id": n, "object": "model"} for n in names]})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        if self.html:
            return web.Response(text=WEB_PAGE, content_type="text/html")
        refusal = self._azure_refusal(request) or self._refusal(body)
        if refusal is not None:
            return refusal
        call = ChatCall(str(body["model"]), tuple((m["role"], m["content"]) for m in body["messages"]),
                        {k: v for k, v in body.items() if k not in ("model", "messages")})
        return web.json_response(self._completion(call))

    async def _messages(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        call = ChatCall(str(body["model"]), tuple((m["role"], m["content"]) for m in body["messages"]))
        answer = self.answer(call)
        return web.json_response({
            "id": "msg_quirky", "type": "message", "role": "assistant", "model": call.model + "-20250219",
            "content": [{"type": "thinking", "thinking": REASONING, "signature": "sig"},
                        {"type": "text", "text": answer}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": len(tokenize(call.prompt)), "output_tokens": len(tokenize(answer)) + 12},
        })

    # -- quirks ---------------------------------------------------------------

    def _azure_refusal(self, request: web.Request) -> web.Response | None:
        if self.azure_key is None:
            return None
        got = request.headers.get("api-key", "")
        if got != self.azure_key:
            return _error(401, f"Access denied due to invalid subscription key (got '{got}').", code="401")
        if "api-version" not in request.query:
            return _error(404, "Resource not found", code="404")
        return None

    def _refusal(self, body: Any) -> web.Response | None:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or "model" not in body:
            return _error(400, "the request body is not a chat-completions request")
        if self.served is not None and body["model"] not in self.served:
            return _error(404, f"The model `{body['model']}` does not exist or you do not have access to it.",
                          code="model_not_found")
        if self.reasoning:
            if "max_tokens" in body:
                return _error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                   "Use 'max_completion_tokens' instead.", param="max_tokens", code="unsupported_parameter")
            for name in ("temperature", "top_p"):
                if body.get(name, 1) != 1:
                    return _error(400, f"Unsupported value: '{name}' does not support {body[name]} with this model. "
                                       f"Only the default (1) value is supported.", param=name, code="unsupported_value")
        for name in self.reject:
            if name in body:
                return self._unsupported(name)
        return None

    def _unsupported(self, name: str) -> web.Response:
        if self.error_shape == "vllm":  # vLLM names the field only inside its message, in a flat error object
            message = f"1 validation error: [{{'type': 'extra_forbidden', 'loc': ('body', '{name}'), 'msg': 'Extra inputs are not permitted'}}]"
            return web.json_response({"object": "error", "message": message, "type": "BadRequestError",
                                      "param": None, "code": 400}, status=400)
        return _error(400, f"Unsupported parameter: '{name}' is not supported with this model.",
                      param=name, code="unsupported_parameter")

    def _completion(self, call: ChatCall) -> dict[str, Any]:
        answer = self.answer(call)
        content: str | None = answer
        if self.think:
            content = f"<think>\n{REASONING}\n</think>\n\n{answer}"
        if self.null_content:
            content = None
        message: dict[str, Any] = {"role": "assistant", "content": content}
        data: dict[str, Any] = {"id": "chatcmpl-quirky", "object": "chat.completion", "model": call.model}
        answer_tokens = len(tokenize(answer))
        prompt_tokens = sum(len(tokenize(text)) + 3 for _, text in call.messages)
        usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": answer_tokens}
        if self.reasoning:
            reasoning_tokens = len(tokenize(REASONING))
            message["reasoning_content"] = REASONING
            data["model"] = call.model + DATED
            data["system_fingerprint"] = "fp_quirky01"
            usage["completion_tokens"] += reasoning_tokens  # billed as answer tokens, as OpenAI does
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = "length" if self.null_content else "stop"
        return {**data, "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}


def _error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> web.Response:
    """An error in OpenAI's shape."""
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return web.json_response({"error": error}, status=status)
