"""``openai:MODEL``: any OpenAI-compatible chat-completions endpoint.

vLLM, Ollama, llama.cpp, TGI and OpenRouter all speak this protocol, so they
work with ``--base-url`` alone. The key comes from ``OPENAI_API_KEY`` (or the
variable named by ``--api-key-env``) and is never part of the spec, the cache
key, logs or results; error messages are scrubbed of it.

The HTTP client is aiohttp: at 64 concurrent requests it kept up with the
ideal throughput where the SDK's httpx stack did not
(benchmarks/bench_http_clients.py, figures in docs/run-engine.md).

Log-probability option scoring (``Request.score_options``): the request asks
for the top log-probabilities of the first answer token (max_tokens 1, the
faithful setting). Tokenizers that split "(a)" into "(" and "a" need one more
token: model option ``logprob_tokens = 2`` looks past a first token that all
options share.

Constrained answers (``Request.constrain``, ``--constrain-answers``): the model
option ``constrain_with`` says how the request asks for one of the options:
``structured_outputs`` sends vLLM's ``"structured_outputs": {"choice": [...]}``
(vLLM 0.32; the older ``guided_choice`` field is ignored by current vLLM), and
``json_schema`` sends OpenAI's ``response_format`` with a JSON schema whose one
property ``answer`` is an enum of the options, then reads the answer back out of
the JSON. ``auto`` (the default) uses ``json_schema`` for the OpenAI API
(api.openai.com) and ``structured_outputs`` for every other server.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from genderprobe.errors import ModelError, UserError
from genderprobe.models.base import Model, ModelOptions, Request, Response

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Statuses worth retrying: timeouts, conflicts, throttling and server trouble.
RETRYABLE_4XX = frozenset({408, 409, 425, 429})
# How a constrained request asks for one of the options (model option constrain_with).
CONSTRAIN_WITH = ("auto", "structured_outputs", "json_schema")


class OpenAICompatible(Model):
    supports_option_scoring = True
    supports_constrained_answers = True

    def __init__(self, model: str, options: ModelOptions):
        self.model = model
        base_url = options.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.base_url = _check_url(base_url.rstrip("/"))
        key_env = options.api_key_env or "OPENAI_API_KEY"
        self._api_key = options.api_key or os.environ.get(key_env) or None
        if options.api_key_env and not self._api_key:
            raise UserError(f"The environment variable {options.api_key_env} named by --api-key-env is not set.")
        if not self._api_key and self.base_url == DEFAULT_BASE_URL:
            raise UserError("No API key: set OPENAI_API_KEY (or pass --api-key-env NAME) to use the OpenAI API.")
        if self._api_key and urlsplit(self.base_url).username is not None:
            raise UserError(
                f"The base URL {public_url(self.base_url)} carries a user name and password and an API key is set "
                f"too ({options.api_key_env or 'OPENAI_API_KEY'}); a request can carry only one, so drop one of them."
            )
        self._key_hint = options.api_key_env or "OPENAI_API_KEY"
        self.timeout = options.timeout
        extra = dict(options.extra)
        self.logprob_tokens = _whole(extra.pop("logprob_tokens", 1), "logprob_tokens", 1, 5)
        self.top_logprobs = _whole(extra.pop("top_logprobs", 20), "top_logprobs", 1, 20)
        chosen = extra.pop("constrain_with", "auto")
        if chosen not in CONSTRAIN_WITH:
            raise UserError(f"The model option constrain_with must be one of {', '.join(CONSTRAIN_WITH)}; got {chosen!r}.")
        auto = "json_schema" if urlsplit(self.base_url).hostname == "api.openai.com" else "structured_outputs"
        self.constrain_with = auto if chosen == "auto" else chosen
        if extra:
            raise UserError(
                f"The openai backend has no option '{sorted(extra)[0]}'; known: constrain_with, logprob_tokens, top_logprobs."
            )
        self.spec = f"openai:{model}"
        # The same model name on two servers is two models, but a URL may carry
        # credentials (user:pass@, ?key=): the identity keeps neither.
        self._identity = f"openai:{model}@{public_url(self.base_url)}"
        if (self.logprob_tokens, self.top_logprobs) != (1, 20):
            # They change which option scores can be read: not the same answers.
            self._identity += f"#logprobs={self.logprob_tokens},{self.top_logprobs}"
        if self.constrain_with != auto:
            # Another way of constraining the same server may give other answers.
            self._identity += f"#constrain={self.constrain_with}"
        # The path goes before any query string (?api-version=... on Azure).
        parts = urlsplit(self.base_url)
        self._endpoint = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))
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
                # The runner bounds concurrency; the pool must not add its own cap.
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            )
        return self._session

    def payload(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": role, "content": content} for role, content in request.messages],
            **request.params.as_dict(),
        }
        if request.score_options:
            body["max_tokens"] = self.logprob_tokens
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs
        if request.constrain:
            body.update(constraint(request.options, self.constrain_with))
        return body

    async def generate(self, request: Request) -> Response:
        url = self._endpoint
        try:
            async with self._client().post(url, json=self.payload(request)) as resp:
                raw = await resp.read()
                if resp.status != 200:
                    raise self._http_error(resp.status, raw, resp.headers.get("Retry-After"))
        except TimeoutError:
            raise ModelError(f"no answer within {self.timeout:g} s", kind="timeout") from None
        except aiohttp.ClientConnectorError:
            raise ModelError(
                f"cannot connect to {public_url(self.base_url)}; check that the server is running and that --base-url is right",
                kind="connect",
            ) from None
        except aiohttp.ClientConnectionError as exc:
            raise ModelError(f"the connection dropped ({exc.__class__.__name__})", kind="connection") from None
        except aiohttp.ClientPayloadError:
            raise ModelError("the connection dropped mid-answer", kind="connection") from None
        response = _parse(raw, request, self.spec)
        if request.constrain and self.constrain_with == "json_schema" and response.text:
            response.text = unwrap_json_answer(response.text)
        return response

    def _http_error(self, status: int, raw: bytes, retry_after: str | None) -> ModelError:
        detail = self._scrub(_error_detail(raw))
        spec = self.spec
        if status in (401, 403):
            return ModelError(
                f"the API rejected the key for {spec} (HTTP {status}{detail}); check {self._key_hint} or --api-key-env",
                kind="auth", fatal=True, status=status,
            )
        if status == 404:
            return ModelError(
                f"the server does not know model {spec} or the endpoint (HTTP 404{detail}); check the model name and --base-url",
                kind="not_found", fatal=True, status=status,
            )
        if 400 <= status < 500 and status not in RETRYABLE_4XX:
            return ModelError(
                f"the server refused the request for {spec} as invalid (HTTP {status}{detail}); check the generation parameters",
                kind="bad_request", fatal=True, status=status,
            )
        kind = "rate_limit" if status == 429 else "server"
        return ModelError(f"HTTP {status}{detail}", kind=kind, retry_after=retry_after_seconds(retry_after), status=status)

    def _scrub(self, text: str) -> str:
        """Servers sometimes echo the key back; it must not reach a message, the store or a log."""
        if self._api_key and len(self._api_key) >= 4:
            text = text.replace(self._api_key, "***")
        return text

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _check_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        raise UserError(f"The base URL is not a valid URL ({exc}); write it like http://localhost:8000/v1.") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"The base URL '{public_url(url)}' is not an http(s) URL; write it like http://localhost:8000/v1.")
    return url


def public_url(url: str) -> str:
    """The URL without user:password@ and without a query string."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "(an unparseable URL)"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _whole(value: Any, name: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise UserError(f"The model option {name} must be a whole number from {low} to {high}; got {value!r}.")
    return value


def retry_after_seconds(header: str | None) -> float | None:
    """Retry-After in seconds (an HTTP date is rare for APIs and treated as absent)."""
    if not header:
        return None
    try:
        value = float(header)
    except ValueError:
        return None
    return max(0.0, value) if math.isfinite(value) else None


def _error_detail(raw: bytes) -> str:
    try:
        message = json.loads(raw)["error"]["message"]
        return f": {str(message)[:200]}"
    except Exception:
        return ""


def constraint(options: tuple[str, ...], how: str) -> dict[str, Any]:
    """The request fields that ask for exactly one of ``options``."""
    if how == "structured_outputs":
        return {"structured_outputs": {"choice": list(options)}}
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string", "enum": list(options)}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    return {"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": schema}}}


def unwrap_json_answer(text: str) -> str:
    """The option inside a json_schema answer ({"answer": "(b)"} -> "(b)"); other text unchanged."""
    try:
        answer = json.loads(text)["answer"]
    except (ValueError, KeyError, TypeError):
        return text
    return answer if isinstance(answer, str) else text


def _parse(raw: bytes, request: Request, spec: str = "openai") -> Response:
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ModelError("the server answered with malformed JSON", kind="malformed") from None
    usage = data.get("usage") or {}
    logprobs = None
    if request.score_options:
        logprobs, status = scan_option_logprobs(choice, request.options)
        if status == "no_logprobs":
            raise ModelError(
                f"the server returned no log-probabilities for {spec}, so it cannot score options; "
                f"run without --score-options",
                kind="no_logprobs", fatal=True,
            )
        if status == "prefix_only":
            raise ModelError(
                f"the first answer token of {spec} is a prefix every option shares, such as '('; "
                f"set the model option logprob_tokens = 2 in the config file",
                kind="no_logprobs", fatal=True,
            )
    return Response(
        text=text,
        option_logprobs=logprobs,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
    )


def _normalise(token: str) -> str:
    return token.strip().strip("()").strip().lower()


def scan_option_logprobs(
    choice: dict[str, Any], options: tuple[str, ...]
) -> tuple[tuple[float, ...] | None, str]:
    """Log-probability of each option from the top log-probs of its first distinguishing token.

    "(a)", "a", " a" and "(a" all count for option "(a)" (the best entry wins
    when several match). A generated token that every option shares, such as
    "(", is skipped and the next position is read; its log-probability is
    common to all options and cancels when the probe normalises. An option
    absent from the top list gets -inf (probability 0 after normalisation).

    Returns (log-probs or None, status): "ok"; "absent" (the answer names no
    option among the top entries); "prefix_only" (every returned token was a
    shared prefix: more tokens are needed); "no_logprobs" (none returned).
    """
    try:
        positions = choice["logprobs"]["content"]
    except (KeyError, TypeError):
        return None, "no_logprobs"
    if not isinstance(positions, list) or not positions:
        return None, "no_logprobs"
    wanted: dict[str, int] = {}
    for i, o in enumerate(options):
        wanted.setdefault(_normalise(o), i)
    for position in positions:
        top = position.get("top_logprobs") if isinstance(position, dict) else None
        if not top:
            return None, "no_logprobs"
        best = [-math.inf] * len(options)
        for entry in top:
            if not isinstance(entry, dict):
                continue
            i = wanted.get(_normalise(str(entry.get("token", ""))))
            if i is not None:
                best[i] = max(best[i], float(entry.get("logprob", -math.inf)))
        if any(v > -math.inf for v in best):
            return tuple(best), "ok"
        # Only a shared prefix ("(", a space) may be skipped; anything else names no option.
        if _normalise(str(position.get("token", ""))):
            return None, "absent"
    return None, "prefix_only"


def create(name: str, options: ModelOptions) -> OpenAICompatible:
    return OpenAICompatible(name, options)
