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

Raw-text log-likelihoods (``Request.raw_text``; the log-likelihood way of Winogender, CrowS-Pairs and
StereoSet), from a server that says it gives them: ``openai:MODEL?loglikelihood=1``. Each request's
continuations go in one ``POST /v1/completions`` (its legacy endpoint, which vLLM, llama.cpp and
others serve) as a list of prompts, context + continuation each, with ``echo``, ``logprobs`` 1 and
``max_tokens`` 1, as lm-evaluation-harness's ``local-completions`` asks; a continuation's score is
the sum of the log-probabilities of the echoed tokens that start at or after it (the returned
``text_offset``; counted back from the generated token, so a beginning-of-text token the server
echoes as text moves nothing), the generated token left out. Spaces that end the context move to
the continuation, as lm-eval does. A text after an empty context (CrowS-Pairs, StereoSet) needs a
first token that the model sees before it: servers whose tokenizer adds a beginning-of-text token
(Llama's) give it; for the others name the token's text, ``?loglikelihood=1&bos=<|endoftext|>``,
as lm-eval puts that token there. ``bos`` is part of the identity; ``loglikelihood`` is not (it
changes what can be asked, not the answers).

Constrained answers (``Request.constrain``, ``--constrain-answers``): the model
option ``constrain_with`` says how the request asks for one of the options:
``structured_outputs`` sends vLLM's ``"structured_outputs": {"choice": [...]}``
(vLLM 0.32; the older ``guided_choice`` field is ignored by current vLLM), and
``json_schema`` sends OpenAI's ``response_format`` with a JSON schema whose one
property ``answer`` is an enum of the options, then reads the answer back out of
the JSON. ``auto`` (the default) uses ``json_schema`` for the OpenAI API
(api.openai.com) and ``structured_outputs`` for every other server.

Reasoning models (o1, o3, o4, gpt-5, after an optional ``provider/``) take
``max_completion_tokens`` instead of ``max_tokens`` and only the default
temperature and top_p (1): for them max_tokens is renamed and other values are
dropped. A server that refuses max_tokens as unsupported, or a temperature or
top_p other than the default, teaches the same for any other name: the refused request is sent again, fixed,
and the lesson holds for the rest of the run. The request's GenerationParams
(and so the cache key) stay the user's; :meth:`effective_params` shows what is
sent and :attr:`notes` says in one sentence each what was changed.
``reasoning_effort`` is sent as given.

Model options from the config file: ``body`` (a table merged into every
request; part of the identity, as a hash), ``headers`` (extra HTTP headers; not
part of the identity, values never shown), and for Azure OpenAI
``api_key_header`` (the header carrying the key instead of ``Authorization:
Bearer``; ``api-key`` by default on ``*.openai.azure.com``) and ``api_version``
(sent as ``?api-version=``; not part of the identity: a new API version
does not change the deployed model's answers).

Answers keep what the server says beside the text: the reasoning
(``reasoning_content``, ``reasoning``, or a leading ``<think>`` block, never
left in the text), the model that answered, ``system_fingerprint`` and the
finish reason.

A wrong URL, key or model gives one sentence (the runner sends a run's first
request alone, so it costs one request): a web page instead of the API, a 404
(with "did you mean .../v1?" or the names the server serves), a parameter the
server does not accept (named, with how to drop it).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import json
import math
import os
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import aiohttp

from genderprobe.errors import ModelError, UserError
from genderprobe.models import OPENAI_SETTINGS
from genderprobe.models.base import GenerationParams, Model, ModelOptions, Request, Response
from genderprobe.models.credentials import Scrubber, header_credentials, url_credentials
from genderprobe.models.http_options import check_body, check_header_name, check_headers
from genderprobe.models.local_prompts import split_spec

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Statuses worth retrying: timeouts, conflicts, throttling and server trouble.
RETRYABLE_4XX = frozenset({408, 409, 425, 429})
# How a constrained request asks for one of the options (model option constrain_with).
CONSTRAIN_WITH = ("auto", "structured_outputs", "json_schema")
# OpenAI's reasoning families, after an optional provider prefix (openai/o3-mini on OpenRouter).
REASONING_FAMILY = re.compile(r"(?:[^/]+/)?(?:o1|o3|o4|gpt-5)(?=$|[-_.:])")
# How servers say a field is not for this model (OpenAI, Azure, vLLM, llama.cpp, pydantic).
_UNSUPPORTED = re.compile(
    r"unsupported|not supported|does not support|only the default|not allowed|not permitted"
    r"|unrecognized|unknown (?:field|parameter|argument)|extra_forbidden",
    re.IGNORECASE,
)
# How a reasoning model refuses a sampling value: it takes the field, but only at its default.
_DEFAULT_ONLY = re.compile(r"only the default|unsupported.value", re.IGNORECASE)
_UNKNOWN_MODEL = re.compile(r"model\b.*\b(?:does not exist|not found|unknown)|(?:unknown|no such) model", re.I | re.S)
# How to stop sending a refused field.
_DROP = {
    "temperature": "drop --temperature (or temperature in [generation])",
    "top_p": "drop --top-p (or top_p in [generation])",
    "max_tokens": "drop --max-tokens (or max_tokens in [generation])",
    "max_completion_tokens": "drop --max-tokens (or max_tokens in [generation])",
    "seed": "drop --generation-seed (or seed in [generation])",
    "reasoning_effort": "drop --reasoning-effort (or reasoning_effort in [generation])",
    "logprobs": "run without --score-options",
    "top_logprobs": "run without --score-options",
    "response_format": "run without --constrain-answers, or set the model option constrain_with",
    "structured_outputs": "run without --constrain-answers, or set the model option constrain_with",
}


class OpenAICompatible(Model):
    supports_option_scoring = True
    supports_constrained_answers = True

    def __init__(self, name: str, options: ModelOptions):
        model, settings = split_spec(name, OPENAI_SETTINGS)
        self.model = model
        self.supports_loglikelihood = settings.get("loglikelihood", False)
        self.bos = settings.get("bos", "")
        if self.bos and not self.supports_loglikelihood:
            raise UserError(f"The setting bos in 'openai:{name}' is for log-likelihoods; add loglikelihood=1.")
        base_url = options.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.base_url = _check_url(base_url.rstrip("/"))
        key_env = options.api_key_env or "OPENAI_API_KEY"
        self._api_key = options.api_key or os.environ.get(key_env) or None
        if options.api_key_env and not self._api_key:
            raise UserError(f"The environment variable {options.api_key_env} named by --api-key-env is not set.")
        if self._api_key and urlsplit(self.base_url).username is not None:
            raise UserError(
                f"The base URL {public_url(self.base_url)} carries a user name and password and an API key is set "
                f"too ({options.api_key_env or 'OPENAI_API_KEY'}); a request can carry only one, so drop one of them."
            )
        self._key_hint = options.api_key_env or "OPENAI_API_KEY"
        self.timeout = options.timeout
        self._read_options(dict(options.extra))
        self.secrets = (self._api_key or "", *header_credentials(self.headers), *url_credentials(self.base_url))
        self._scrubber = Scrubber(self.secrets)
        self.spec = f"openai:{name}"
        self._identity = self._make_identity()
        self._endpoint = self._url("/chat/completions")
        self._completions = self._url("/completions")
        self._session: aiohttp.ClientSession | None = None
        # Reasoning-model quirks: known by name, or learned from the server's refusal.
        reasoning = REASONING_FAMILY.match(model) is not None
        self._tokens_field = "max_completion_tokens" if reasoning else "max_tokens"
        self._default_sampling_only = reasoning
        self._learned: set[str] = set()
        # What was renamed or dropped, one sentence each (the harness adds them to the results' warnings).
        self.notes: list[str] = []

    def _read_options(self, extra: dict[str, Any]) -> None:
        self.logprob_tokens = _whole(extra.pop("logprob_tokens", 1), "logprob_tokens", 1, 5)
        self.top_logprobs = _whole(extra.pop("top_logprobs", 20), "top_logprobs", 1, 20)
        chosen = extra.pop("constrain_with", "auto")
        if chosen not in CONSTRAIN_WITH:
            raise UserError(f"The model option constrain_with must be one of {', '.join(CONSTRAIN_WITH)}; got {chosen!r}.")
        parts = urlsplit(self.base_url)
        self._auto_constrain = "json_schema" if parts.hostname == "api.openai.com" else "structured_outputs"
        self.constrain_with = self._auto_constrain if chosen == "auto" else chosen
        self.body: dict[str, Any] = checked_option("body", extra.pop("body", {}), check_body)
        self.headers: dict[str, str] = checked_option("headers", extra.pop("headers", {}), check_headers)
        self.azure = (parts.hostname or "").endswith(".openai.azure.com")
        self.api_key_header: str | None = checked_option(
            "api_key_header", extra.pop("api_key_header", "api-key" if self.azure else None), check_header_name
        )
        self.api_version: str | None = extra.pop("api_version", None)
        if self.api_version is not None and (not isinstance(self.api_version, str) or not self.api_version.strip()):
            raise UserError(f"The model option api_version must be a version such as 2024-10-21; got {self.api_version!r}.")
        if extra:
            known = "api_key_header, api_version, body, constrain_with, headers, logprob_tokens, top_logprobs"
            raise UserError(f"The openai backend has no option '{sorted(extra)[0]}'; known: {known}.")
        key_header = self.api_key_header or "Authorization"
        if self._api_key and any(name.lower() == key_header.lower() for name in self.headers):
            raise UserError(
                f"The model option headers sets {key_header}, which carries the API key ({self._key_hint}); "
                f"a request can carry only one, so drop one of them."
            )

    def _make_identity(self) -> str:
        # The same model name on two servers is two models, but a URL may carry
        # credentials (user:pass@, ?key=): the identity keeps neither.
        identity = f"openai:{self.model}@{public_url(self.base_url)}"
        if (self.logprob_tokens, self.top_logprobs) != (1, 20):
            # They change which option scores can be read: not the same answers.
            identity += f"#logprobs={self.logprob_tokens},{self.top_logprobs}"
        if self.constrain_with != self._auto_constrain:
            # Another way of constraining the same server may give other answers.
            identity += f"#constrain={self.constrain_with}"
        # Not the Azure API version: it changes the protocol, not the deployed model's
        # answers, and stores filled before the option existed must still answer.
        if self.body:
            identity += f"#body={body_hash(self.body)}"  # extra fields change the answers; headers do not
        if self.bos:
            identity += f"#bos={self.bos}"  # the first token of a text after an empty context
        return identity

    def _url(self, path: str) -> str:
        """base_url + path, before any query string (?api-version=... on Azure)."""
        parts = urlsplit(self.base_url)
        query = parts.query
        if self.api_version:
            pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "api-version"]
            query = urlencode([*pairs, ("api-version", self.api_version)])
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path, query=query))

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def endpoint(self) -> str:
        return public_url(self.base_url)

    def check_credentials(self) -> None:
        # Only OpenAI's own API is known to need a key; a local server often takes none.
        if not self._api_key and self.base_url == DEFAULT_BASE_URL:
            raise UserError("No API key: set OPENAI_API_KEY (or pass --api-key-env NAME) to use the OpenAI API.")

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Content-Type": "application/json", **self.headers}
            if self._api_key:
                if self.api_key_header:
                    headers[self.api_key_header] = self._api_key
                else:
                    headers["Authorization"] = f"Bearer {self._api_key}"
            self._session = aiohttp.ClientSession(
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                # The runner bounds concurrency; the pool must not add its own cap.
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            )
        return self._session

    # -- what is sent ------------------------------------------------------

    def _sent_fields(self, params: GenerationParams) -> dict[str, Any]:
        """The generation fields sent for ``params``: renamed and dropped as this model needs, noted."""
        fields = params.as_dict()
        if "max_tokens" in fields and self._tokens_field != "max_tokens":
            fields[self._tokens_field] = fields.pop("max_tokens")
            self._note(f"max_tokens was sent as {self._tokens_field}, the only name {self.model} takes")
        if self._default_sampling_only:
            for name in ("temperature", "top_p"):
                if name in fields and fields[name] != 1:
                    value = fields.pop(name)
                    self._note(f"{name} {value:g} was not sent: {self.model} accepts only the default (1)")
        return fields

    def _note(self, sentence: str) -> None:
        if sentence not in self.notes:
            self.notes.append(sentence)

    def effective_params(self, params: GenerationParams) -> dict[str, Any]:
        return {**self._sent_fields(params), **self.body}

    def payload(self, request: Request) -> dict[str, Any]:
        params = request.params
        if request.score_options:
            params = params.replace(max_tokens=self.logprob_tokens)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": role, "content": content} for role, content in request.messages],
            **self._sent_fields(params),
            **self.body,
        }
        if request.score_options:
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs
        if request.constrain:
            body.update(constraint(request.options, self.constrain_with))
        return body

    # -- sending -------------------------------------------------------------

    def loglikelihood_payload(self, request: Request) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """The /v1/completions body of a raw-text request, and each continuation's (prompt, continuation) as
        sent: lm-eval's local-completions fields, the context's closing spaces moved to the continuation."""
        context = request.prompt
        spaces = len(context) - len(context.rstrip())
        texts = []
        for option in request.options:
            head, tail = (context[:-spaces], context[-spaces:] + option) if spaces else (context, option)
            texts.append(((head or self.bos) + tail, tail))
        body = {"model": self.model, "prompt": [t for t, _ in texts], "echo": True, "logprobs": 1, "max_tokens": 1,
                "temperature": 0, **self.body}
        return body, texts

    async def generate(self, request: Request) -> Response:
        if request.raw_text:
            payload, texts = self.loglikelihood_payload(request)
            raw = await self._answer(payload, self._completions)
            return _parse_loglikelihoods(raw, request, texts, self.spec)
        raw = await self._answer(None, self._endpoint, request)
        response = _parse(raw, request, self.spec)
        if request.constrain and self.constrain_with == "json_schema" and response.text:
            response.text = unwrap_json_answer(response.text)
        return response

    async def _answer(self, payload: dict[str, Any] | None, endpoint: str, request: Request | None = None) -> bytes:
        """The body of the server's answer to ``payload`` (or to ``request``'s chat payload, sent again where the
        server teaches a quirk), or a ModelError."""
        # Ends: each quirk is learned at most once, then a refusal is an error.
        while True:
            sent = payload if request is None else self.payload(request)
            status, content_type, raw, retry_after = await self._post(sent, endpoint)
            if status == 200:
                break
            if not (status == 400 and request is not None and self._learn(raw, sent)):
                raise await self._http_error(status, raw, retry_after, sent)
        if content_type.startswith("text/html") or raw.lstrip()[:1] == b"<":
            raise ModelError(
                f"the server at {public_url(self.base_url)} answered with a web page, not the API's JSON; "
                f"point --base-url at the API itself (for most servers it ends in /v1)",
                kind="not_api", fatal=True, status=status,
            )
        return raw

    async def _post(self, payload: dict[str, Any], endpoint: str) -> tuple[int, str, bytes, str | None]:
        """(status, content type, body, Retry-After) of one POST, or a ModelError for a failed connection."""
        try:
            async with self._client().post(endpoint, json=payload) as resp:
                return resp.status, resp.content_type, await resp.read(), resp.headers.get("Retry-After")
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

    def _learn(self, raw: bytes, payload: dict[str, Any]) -> bool:
        """Learn a reasoning-model quirk from a 400; True if the request should be sent again.

        Only the reasoning models' own refusals teach: max_tokens as unsupported, and a
        temperature or top_p other than the default. Anything else (a value out of range,
        top_p refused outright) is the user's to fix and gets a sentence.
        """
        message, param, code = _error_info(raw)
        refused = refused_field(message, param, payload)
        said = f"{message} {code or ''}"
        if refused in ("max_tokens", "max_completion_tokens") and _UNSUPPORTED.search(said) and "tokens" not in self._learned:
            self._learned.add("tokens")
            self._tokens_field = "max_completion_tokens" if refused == "max_tokens" else "max_tokens"
            return True
        if refused in ("temperature", "top_p") and _DEFAULT_ONLY.search(said) and not self._default_sampling_only:
            self._default_sampling_only = True
            return True
        return False

    async def _http_error(self, status: int, raw: bytes, retry_after: str | None, payload: dict[str, Any]) -> ModelError:
        message, param, _ = _error_info(raw)
        detail = f": {self._scrub(message)[:200]}" if message else ""  # scrubbed whole: a cut could halve a secret
        spec = self.spec
        if status in (401, 403):
            return ModelError(
                f"the API rejected the key for {spec} (HTTP {status}{detail}); check {self._key_hint} or --api-key-env",
                kind="auth", fatal=True, status=status,
            )
        if status == 404:
            return ModelError(await self._not_found(message, detail), kind="not_found", fatal=True, status=status)
        if 400 <= status < 500 and status not in RETRYABLE_4XX:
            refused = refused_field(message, param, payload)
            if refused is not None:
                return ModelError(
                    f"the server does not accept {refused} for {spec} (HTTP {status}{detail}); {self._how_to_drop(refused)}",
                    kind="bad_request", fatal=True, status=status,
                )
            return ModelError(
                f"the server refused the request for {spec} as invalid (HTTP {status}{detail}); check the generation parameters",
                kind="bad_request", fatal=True, status=status,
            )
        kind = "rate_limit" if status == 429 else "server"
        return ModelError(f"HTTP {status}{detail}", kind=kind, retry_after=retry_after_seconds(retry_after), status=status)

    async def _not_found(self, message: str, detail: str) -> str:
        """The sentence for a 404: an unknown model, a base URL missing its /v1, or either."""
        url = public_url(self.base_url)
        if _UNKNOWN_MODEL.search(message):
            served = await self._served_models()
            listing = f" (it serves {', '.join(served[:10])}{', ...' if len(served) > 10 else ''})" if served else ""
            return (f"the server at {url} does not know model {self.spec} (HTTP 404{detail}); "
                    f"check the model name{listing}")
        azure_like = self.azure or self.api_version or self.api_key_header
        if not azure_like and not urlsplit(self.base_url).path.rstrip("/").endswith("/v1"):
            return (f"the server at {url} has no chat-completions API there (HTTP 404{detail}); "
                    f"check --base-url (did you mean {url}/v1?)")
        return (f"the server does not know model {self.spec} or the endpoint (HTTP 404{detail}); "
                f"check the model name and --base-url")

    async def _served_models(self) -> list[str]:
        """The model names GET /models lists, or [] if it does not answer quickly: only a hint."""
        try:
            async with self._client().get(self._url("/models"), timeout=aiohttp.ClientTimeout(total=3)) as resp:
                data = await resp.json(content_type=None)
            return [str(m["id"]) for m in data["data"]]
        except Exception:
            return []

    def _how_to_drop(self, field: str) -> str:
        if field in self.body:
            return f"remove {field} from [model.body] in the config file"
        return _DROP.get(field, "check the generation parameters and model options")

    def _scrub(self, text: str) -> str:
        """Servers sometimes echo a credential back; it must not reach a message, the store or a log."""
        return self._scrubber(text)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def checked_option(name: str, value: Any, check: Callable[[Any], str | None]) -> Any:
    """A model option checked with the config file's rule (None stays None)."""
    problem = None if value is None else check(value)
    if problem:
        raise UserError(f"The model option {name} {problem}.")
    return value


def body_hash(body: dict[str, Any]) -> str:
    """A short stable name for extra request fields, for the model identity."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def refused_field(message: str, param: str | None, payload: dict[str, Any]) -> str | None:
    """The request field a 400 names: OpenAI's ``error.param``, else a sent field quoted in the message."""
    sent = [k for k in payload if k not in ("model", "messages")]
    if param in sent:
        return param
    for name in sent:
        if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message):
            return name
    return None


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


def retry_after_seconds(header: str | None, now: float | None = None) -> float | None:
    """Retry-After in seconds: delay-seconds, or an HTTP date (RFC 9110) less the time ``now``."""
    if not header:
        return None
    try:
        value = float(header)
    except ValueError:
        try:  # the standard library reads the three date forms HTTP allows
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:  # an HTTP date is in GMT even where the zone is missing
            when = when.replace(tzinfo=dt.UTC)
        value = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, value) if math.isfinite(value) else None


def _error_info(raw: bytes) -> tuple[str, str | None, str | None]:
    """(message, param, code) of an error body in any common shape: OpenAI's
    {"error": {...}}, vLLM's flat {"message": ...}, Ollama's {"error": "..."}."""
    try:
        data = json.loads(raw)
    except ValueError:
        return "", None, None
    error = data.get("error", data) if isinstance(data, dict) else None
    if isinstance(error, str):
        return error, None, None
    if not isinstance(error, dict):
        return "", None, None
    message, param, code = error.get("message"), error.get("param"), error.get("code")
    return (
        message if isinstance(message, str) else "",
        param if isinstance(param, str) else None,
        None if code is None else str(code),
    )


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


# Appended to finish_reason (kept in the store and shown in records) when a body was not UTF-8.
NOT_UTF8 = "body not UTF-8: bytes replaced with U+FFFD"


def decode_json(raw: bytes) -> tuple[Any, bool]:
    """A body's JSON, and whether bytes that are not UTF-8 were replaced (U+FFFD) to read it:
    such an answer is paid for, and asking again would only pay for the same bytes."""
    try:
        return json.loads(raw), False
    except UnicodeDecodeError:
        return json.loads(raw.decode("utf-8", "replace")), True


def _parse(raw: bytes, request: Request, spec: str = "openai") -> Response:
    try:
        data, replaced = decode_json(raw)
        choice = data["choices"][0]
        message = choice["message"]
        content = message.get("content")
        if not isinstance(content, (str, type(None))):
            raise TypeError("content is not text")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ModelError("the server answered with malformed JSON", kind="malformed") from None
    # A null content (a reasoning model that spent its tokens thinking) is an empty answer, for the runner to count.
    text, thought = split_think(content or "")
    # DeepSeek and vLLM send reasoning_content, OpenRouter and Ollama reasoning.
    given = _text(message.get("reasoning_content")) or _text(message.get("reasoning"))
    reasoning = "\n\n".join(r for r in (given, thought) if r)
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
        completion_tokens=int(usage.get("completion_tokens") or 0),  # reasoning tokens included, as billed
        reasoning=reasoning or None,
        served_model=_text(data.get("model")),
        fingerprint=_text(data.get("system_fingerprint")),
        finish_reason=with_note(_text(choice.get("finish_reason")), NOT_UTF8 if replaced else None),
    )


def _parse_loglikelihoods(raw: bytes, request: Request, texts: list[tuple[str, str]], spec: str) -> Response:
    """Each continuation's log-likelihood (its mean per token with ``Request.per_token``) from the echoed
    prompt tokens of the completion whose index is the continuation's."""
    try:
        data, _ = decode_json(raw)
        choices = {int(c["index"]): c["logprobs"] for c in data["choices"]}
        logprobs = [choices[k] for k in range(len(texts))]
        rows = [(list(lp["token_logprobs"]), [int(o) for o in lp["text_offset"]]) for lp in logprobs]
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ModelError(f"the server gave no echoed log-probabilities for {spec} (POST /completions with echo and "
                         "logprobs); drop loglikelihood=1 from the model spec and ask --method generation",
                         kind="no_logprobs", fatal=True) from None
    scores = []
    for (values, offsets), (_, tail) in zip(rows, texts):
        # The last token is the one generated (max_tokens 1); the continuation's tokens start len(tail)
        # characters before it.
        start = offsets[-1] - len(tail)
        picked = [v for v, o in zip(values[:-1], offsets[:-1]) if o >= start]
        if not picked:
            raise ModelError(f"the server echoed no token of a continuation for {spec}; its text offsets do not "
                             "match the prompt it was sent", kind="malformed", fatal=True)
        if any(v is None for v in picked):
            raise ModelError(f"the server gave no log-probability for the first token of a text after an empty "
                             f"context ({spec}): its tokenizer adds no beginning-of-text token; name that token's text "
                             "in the spec, for example ?loglikelihood=1&bos=<|endoftext|>", kind="no_logprobs", fatal=True)
        total = float(sum(picked))
        scores.append(total / len(picked) if request.per_token else total)
    usage = data.get("usage") or {}
    best = max(range(len(scores)), key=scores.__getitem__)
    return Response(text=request.options[best], option_logprobs=tuple(scores),
                    prompt_tokens=int(usage.get("prompt_tokens") or 0),
                    completion_tokens=int(usage.get("completion_tokens") or 0), served_model=_text(data.get("model")))


def with_note(finish_reason: str | None, note: str | None) -> str | None:
    return finish_reason if note is None else f"{finish_reason or 'stop'}; {note}"


# A leading thinking block (vLLM without a reasoning parser, Ollama); unclosed when cut off mid-thought.
_THINK = re.compile(r"\s*<think>(.*?)(?:</think>|$)\s*", re.DOTALL)


def split_think(text: str) -> tuple[str, str | None]:
    """(answer, reasoning) of a content that opens with a <think> block; other text unchanged."""
    match = _THINK.match(text)
    if match is None:
        return text, None
    return text[match.end():], match.group(1).strip() or None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


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
