"""``anthropic:MODEL``: the Anthropic Messages API, through the official SDK (extra ``[anthropic]``).

The key comes from ``ANTHROPIC_API_KEY`` (or the variable named by
``--api-key-env``), the endpoint from ``--base-url`` / ``ANTHROPIC_BASE_URL``.
The SDK's own retries are off: the runner retries, backs off and counts.

The Messages API takes no seed and offers no log-probabilities, so ``seed`` is
not sent (it still separates cache entries) and option scoring is refused.
``reasoning_effort`` is not sent either (thinking is asked for with a
``thinking`` field in ``[model.body]``); both are said in :attr:`notes`.
``max_tokens`` is required by the API; without one, 1024 is sent, as
:meth:`effective_params` shows.

The model option ``body`` (``[model.body]`` in the config file) is merged into
every request and is part of the identity, as a hash; any other option is
refused. Answers keep the model that answered, the stop reason and the text
of ``thinking`` blocks (as reasoning, never as the answer). As with
``openai:``, the first request goes out alone, so a wrong key or model name
costs one request.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import anthropic

from genderprobe.errors import ModelError, UserError
from genderprobe.models.base import GenerationParams, Model, ModelOptions, Request, Response
from genderprobe.models.credentials import Scrubber, url_credentials
from genderprobe.models.http_options import check_body
from genderprobe.models.openai_compatible import (
    NOT_UTF8,
    body_hash,
    checked_option,
    decode_json,
    public_url,
    retry_after_seconds,
    with_note,
)

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 1024
RETRYABLE_4XX = frozenset({408, 409, 425, 429})


class AnthropicMessages(Model):
    supports_option_scoring = False

    def __init__(self, model: str, options: ModelOptions):
        self.model = model
        base_url = (options.base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise UserError(f"The base URL '{public_url(base_url)}' is not an http(s) URL; write it like https://api.anthropic.com.")
        self.base_url = base_url
        key_env = options.api_key_env or "ANTHROPIC_API_KEY"
        self._api_key = options.api_key or os.environ.get(key_env) or None
        self._key_hint = key_env
        self.secrets = (self._api_key or "", *url_credentials(base_url))
        self._scrubber = Scrubber(self.secrets)
        extra = dict(options.extra)
        self.body: dict[str, Any] = checked_option("body", extra.pop("body", {}), check_body)
        if extra:
            raise UserError(f"The anthropic backend has no option '{sorted(extra)[0]}'; known: body.")
        self.timeout = options.timeout
        self.spec = f"anthropic:{model}"
        self._identity = f"anthropic:{model}@{public_url(base_url)}"
        if self.body:
            self._identity += f"#body={body_hash(self.body)}"  # extra fields change the answers
        self._client: anthropic.AsyncAnthropic | None = None
        # What the API cannot take and was not sent, one sentence each (the harness adds them to the warnings).
        self.notes: list[str] = []

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def endpoint(self) -> str:
        return public_url(self.base_url)

    def check_credentials(self) -> None:
        if not self._api_key:
            raise UserError(f"No API key: set {self._key_hint} (or pass --api-key-env NAME) to use {self.spec}.")

    def effective_params(self, params: GenerationParams) -> dict[str, Any]:
        return {**self._sent_fields(params), **self.body}

    def _sent_fields(self, params: GenerationParams) -> dict[str, Any]:
        """The generation fields sent for ``params``: the default max_tokens added, seed and reasoning_effort noted."""
        for name, why in (("seed", "the Messages API takes no seed"),
                          ("reasoning_effort", "the Messages API has no such field; ask for thinking in [model.body]")):
            if getattr(params, name) is not None and (note := f"{name} was not sent: {why}") not in self.notes:
                self.notes.append(note)
        fields: dict[str, Any] = {"max_tokens": params.max_tokens or DEFAULT_MAX_TOKENS}
        fields.update((k, v) for k, v in (("temperature", params.temperature), ("top_p", params.top_p)) if v is not None)
        return fields

    def client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
            )
        return self._client

    def payload(self, request: Request) -> dict[str, Any]:
        system = "\n\n".join(content for role, content in request.messages if role == "system")
        fields = self._sent_fields(request.params)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": fields.pop("max_tokens"),
            "messages": [{"role": role, "content": content} for role, content in request.messages if role != "system"],
        }
        if system:
            body["system"] = system
        # Sampling parameters go in extra_body: recent SDKs no longer name them,
        # while the API still reads them for the models that take them. So do
        # the config's extra fields, whatever the SDK version knows of them.
        if fields or self.body:
            body["extra_body"] = {**fields, **self.body}
        return body

    async def generate(self, request: Request) -> Response:
        if request.score_options:
            raise ModelError("the Anthropic Messages API offers no log-probabilities; run without --score-options",
                             kind="bad_request", fatal=True)
        return await self._send(request)

    async def _send(self, request: Request) -> Response:
        try:
            raw = await self.client().messages.with_raw_response.create(**self.payload(request))
            return await _read(raw)
        except anthropic.APITimeoutError:
            raise ModelError(f"no answer within {self.timeout:g} s", kind="timeout") from None
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__
            if cause is not None and "connect" in type(cause).__name__.lower():
                raise ModelError(
                    f"cannot connect to {public_url(self.base_url)}; check that the server is running and that --base-url is right",
                    kind="connect",
                ) from None
            raise ModelError("the connection dropped", kind="connection") from None
        except anthropic.APIStatusError as exc:
            raise self._status_error(exc) from None
        except anthropic.APIError as exc:  # an answer the SDK could not read
            raise ModelError(self._scrub(f"the server answered with malformed data ({type(exc).__name__})"),
                             kind="malformed") from None
        except (AttributeError, TypeError, ValueError):
            raise ModelError("the server answered with malformed JSON", kind="malformed") from None

    def _status_error(self, exc: anthropic.APIStatusError) -> ModelError:
        status = exc.status_code
        detail = _message(exc, self._scrub)
        spec = self.spec
        if status in (401, 403):
            return ModelError(f"the API rejected the key for {spec} (HTTP {status}{detail}); check {self._key_hint} or --api-key-env",
                              kind="auth", fatal=True, status=status)
        if status == 404:
            return ModelError(f"the server does not know model {spec} or the endpoint (HTTP 404{detail}); check the model name and --base-url",
                              kind="not_found", fatal=True, status=status)
        if 400 <= status < 500 and status not in RETRYABLE_4XX:
            return ModelError(f"the server refused the request for {spec} as invalid (HTTP {status}{detail}); check the generation parameters",
                              kind="bad_request", fatal=True, status=status)
        retry_after = retry_after_seconds(exc.response.headers.get("retry-after"))
        kind = "rate_limit" if status == 429 else "overloaded" if status == 529 else "server"
        return ModelError(f"HTTP {status}{detail}", kind=kind, retry_after=retry_after, status=status)

    def _scrub(self, text: str) -> str:
        return self._scrubber(text)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


async def _read(raw: Any) -> Response:
    """The answer of a raw SDK response. A body that is not UTF-8 is read with its bad bytes
    replaced and noted (see :func:`decode_json`): asking again would pay for the same bytes."""
    body = raw.http_response.content
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        data, _ = decode_json(body)
        response = read_message(_as_attributes(data))
        response.finish_reason = with_note(response.finish_reason, NOT_UTF8)
        return response
    message = raw.parse()
    if inspect.isawaitable(message):  # the SDK's async responses parse in a coroutine, older ones at once
        message = await message
    return read_message(message)


def _as_attributes(value: Any) -> Any:
    """JSON read as the SDK's objects are (``block.text``), for :func:`read_message`."""
    if isinstance(value, dict):
        return SimpleNamespace(**{str(k): _as_attributes(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_as_attributes(v) for v in value]
    return value


def read_message(message: Any) -> Response:
    """A Messages API answer as a Response: the text blocks as the answer, thinking blocks
    apart as the reasoning. Raises AttributeError/TypeError/ValueError on a malformed one."""
    blocks = message.content
    text = "".join(b.text for b in blocks if getattr(b, "type", "") == "text")
    thinking = "\n\n".join(b.thinking for b in blocks if getattr(b, "type", "") == "thinking")
    usage = message.usage
    return Response(
        text=text,
        prompt_tokens=int(getattr(usage, "input_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        reasoning=thinking or None,
        served_model=getattr(message, "model", None) or None,
        finish_reason=getattr(message, "stop_reason", None) or None,
    )


def _message(exc: anthropic.APIStatusError, scrub: Callable[[str], str]) -> str:
    body = exc.body
    try:
        message = body["error"]["message"]  # type: ignore[index]
        return f": {scrub(str(message))[:200]}"  # scrubbed whole: a cut could halve a secret
    except (KeyError, TypeError, IndexError):
        return ""


def create(name: str, options: ModelOptions) -> AnthropicMessages:
    return AnthropicMessages(name, options)
