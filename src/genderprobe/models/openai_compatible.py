"""``openai:MODEL``: any OpenAI-compatible chat-completions endpoint.

vLLM, Ollama, llama.cpp, TGI and OpenRouter all speak this protocol, so they
work with ``--base-url`` alone. The key comes from ``OPENAI_API_KEY`` (or the
variable named by ``--api-key-env``) and is never part of the spec, the cache
key, logs or results.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import aiohttp

from genderprobe.errors import ModelError, UserError
from genderprobe.models.base import Model, ModelOptions, Request, Response

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAICompatible(Model):
    supports_option_scoring = True

    def __init__(self, model: str, options: ModelOptions):
        self.model = model
        self.base_url = (options.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key_env = options.api_key_env or "OPENAI_API_KEY"
        self._api_key = options.api_key or os.environ.get(key_env)
        if options.api_key_env and not self._api_key:
            raise UserError(f"The environment variable {options.api_key_env} named by --api-key-env is not set.")
        if not self._api_key and self.base_url == DEFAULT_BASE_URL:
            raise UserError("No API key: set OPENAI_API_KEY (or pass --api-key-env NAME) to use the OpenAI API.")
        self.timeout = options.timeout
        # The spec names the endpoint too: the same model name on two servers is two models.
        self.spec = f"openai:{model}"
        self._identity = f"openai:{model}@{self.base_url}"
        self._session: aiohttp.ClientSession | None = None

    @property
    def identity(self) -> str:
        return self._identity

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Content-Type": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            self._session = aiohttp.ClientSession(
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                connector=aiohttp.TCPConnector(limit=0),
            )
        return self._session

    def payload(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": role, "content": content} for role, content in request.messages],
            **request.params.as_dict(),
        }
        if request.score_options:
            body["max_tokens"] = 1
            body["logprobs"] = True
            body["top_logprobs"] = 20
        return body

    async def generate(self, request: Request) -> Response:
        url = f"{self.base_url}/chat/completions"
        try:
            async with self._client().post(url, json=self.payload(request)) as resp:
                raw = await resp.read()
                if resp.status != 200:
                    raise _http_error(resp.status, raw, resp.headers.get("Retry-After"), self.spec)
        except TimeoutError:
            raise ModelError(f"no answer within {self.timeout:g} s", kind="timeout") from None
        except aiohttp.ClientConnectionError as exc:
            raise ModelError(f"connection failed: {exc.__class__.__name__}", kind="connection") from None
        except aiohttp.ClientPayloadError:
            raise ModelError("the connection dropped mid-answer", kind="connection") from None
        return _parse(raw, request)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def _http_error(status: int, raw: bytes, retry_after: str | None, spec: str) -> ModelError:
    detail = _error_detail(raw)
    if status in (401, 403):
        return ModelError(f"the API rejected the key for {spec} (HTTP {status}{detail}); check OPENAI_API_KEY or --api-key-env", kind="auth", fatal=True, status=status)
    if status == 404:
        return ModelError(f"the server does not know model {spec} or the endpoint (HTTP 404{detail}); check the model name and --base-url", kind="not_found", fatal=True, status=status)
    if status in (400, 422):
        return ModelError(f"the server refused the request as malformed (HTTP {status}{detail})", kind="bad_request", fatal=True, status=status)
    delay = None
    if retry_after:
        try:
            delay = max(0.0, float(retry_after))
        except ValueError:
            delay = None
    kind = "rate_limit" if status == 429 else "server"
    return ModelError(f"HTTP {status}{detail}", kind=kind, retry_after=delay, status=status)


def _error_detail(raw: bytes) -> str:
    try:
        message = json.loads(raw)["error"]["message"]
        return f": {str(message)[:200]}"
    except Exception:
        return ""


def _parse(raw: bytes, request: Request) -> Response:
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ModelError("the server answered with malformed JSON", kind="malformed") from None
    usage = data.get("usage") or {}
    logprobs = None
    if request.score_options:
        logprobs = _option_logprobs(choice, request.options)
    return Response(
        text=text,
        option_logprobs=logprobs,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
    )


def _normalise(token: str) -> str:
    return token.strip().strip("()").strip().lower()


def _option_logprobs(choice: dict[str, Any], options: tuple[str, ...]) -> tuple[float, ...] | None:
    """Log-probability of each option's first answer token among the top log-probs.

    "(a)", "a", " a" and "(a" all count for option "(a)"; an option absent from
    the top list gets -inf (probability 0 after normalisation).
    """
    try:
        top = choice["logprobs"]["content"][0]["top_logprobs"]
    except (KeyError, IndexError, TypeError):
        return None
    wanted = {_normalise(o): i for i, o in enumerate(options)}
    best = [-math.inf] * len(options)
    for entry in top:
        i = wanted.get(_normalise(entry.get("token", "")))
        if i is not None:
            lp = float(entry.get("logprob", -math.inf))
            best[i] = max(best[i], lp) if best[i] > -math.inf else lp
    if all(v == -math.inf for v in best):
        return None
    return tuple(best)


def create(name: str, options: ModelOptions) -> OpenAICompatible:
    return OpenAICompatible(name, options)
