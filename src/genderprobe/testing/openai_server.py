"""A real OpenAI-compatible chat-completions server for tests and benchmarks.

    with OpenAITestServer(p_man=0.8, latency=0.01, api_key="sk-test") as server:
        model = get_model("openai:test", ModelOptions(base_url=server.base_url, api_key="sk-test"))
        ...
        assert max(server.requests.values()) == 1   # nothing asked twice

It serves ``POST /v1/chat/completions`` (with ``logprobs``/``top_logprobs``, and
answers constrained to a choice by vLLM's ``structured_outputs.choice`` or
OpenAI's ``response_format`` JSON schema with an enum),
``GET /v1/models`` and ``GET /_stats`` (the counters as JSON, for a server run
in another process with ``python -m genderprobe.testing.openai_server``).
Given local weights (``scorer=LocalWeights(folder)``), it also serves ``POST /v1/completions``
with ``echo`` and ``logprobs`` as vLLM does, each prompt's tokens scored by the real model: what
raw-text log-likelihoods from a server are tested against.
Faults are injected through :attr:`faults` (see :mod:`genderprobe.testing.faults`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from aiohttp import web

from genderprobe.testing.answers import AnswerFn, ChatCall, PreferMan, tokenize, unit_draw
from genderprobe.testing.background import (
    BackgroundServer,
    quiet_aiohttp_logs,
    serve_until_terminated,
    spawned,
)
from genderprobe.testing.faults import Faults

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    403: "permission_denied",
    404: "model_not_found",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "service_unavailable",
}


class OpenAITestServer(BackgroundServer):
    """A chat-completions endpoint that answers like a model with a known bias.

    answer: a function of the :class:`ChatCall` returning the answer text; if it
        has a ``probabilities(call)`` method (like :class:`PreferMan`), log-prob
        requests get the matching token distribution. Default: ``PreferMan(p_man)``.
    latency: seconds every request waits before its answer (or fault).
    api_key: when set, requests without ``Authorization: Bearer <api_key>`` get 401.
    model: when set, requests for any other model name get 404.
    faults: a :class:`Faults` or a mapping of fault kind -> rate.
    retry_after: the Retry-After header of injected 429s, in seconds.
    slow_seconds: how long a "slow" fault waits before answering.
    split_parens: tokenise "(a)" as "(", "a", ")" (as some tokenizers do) for log-probs.
    echo_key: injected error messages repeat the Authorization header, as careless
        servers do, so tests can check the client keeps the key out of every file.
    scorer: a :class:`LocalWeights` that answers ``/v1/completions``; None: that endpoint is 404.
    """

    def __init__(
        self,
        answer: AnswerFn | None = None,
        *,
        p_man: float = 0.75,
        seed: int = 0,
        latency: float = 0.0,
        api_key: str | None = None,
        model: str | None = None,
        faults: Faults | Mapping[str, float] | None = None,
        retry_after: float = 0.05,
        slow_seconds: float = 5.0,
        split_parens: bool = False,
        echo_key: bool = False,
        scorer: LocalWeights | None = None,
    ):
        super().__init__()
        self.scorer = scorer
        self.answer = answer or PreferMan(p_man, seed=seed)
        self.latency = latency
        self.api_key = api_key
        self.model = model
        self.faults = faults if isinstance(faults, Faults) else Faults(faults, seed=seed)
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        self.split_parens = split_parens
        self.echo_key = echo_key
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()  # prompt -> requests received (any outcome)
        self.answered: Counter[str] = Counter()  # prompt -> successful answers sent
        self.auth_headers: Counter[str] = Counter()  # Authorization header values seen
        self.constrained: Counter[str] = Counter()  # constraint kind -> constrained answers sent
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def total_requests(self) -> int:
        return sum(self.requests.values())

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.clear()
            self.answered.clear()
            self.auth_headers.clear()
            self.constrained.clear()
            self.faults.injected.clear()
            self.max_in_flight = 0

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "total_requests": sum(self.requests.values()),
                "total_answered": sum(self.answered.values()),
                "distinct_prompts": len(self.requests),
                "max_requests_per_prompt": max(self.requests.values(), default=0),
                "max_answers_per_prompt": max(self.answered.values(), default=0),
                "faults": dict(self.faults.injected),
                "max_in_flight": self.max_in_flight,
            }

    def routes(self) -> list[web.RouteDef]:
        return [
            web.post("/v1/chat/completions", self._chat),
            web.post("/v1/completions", self._text_completion),
            web.get("/v1/models", self._models),
            web.get("/_stats", self._stats),
        ]

    # -- handlers -------------------------------------------------------------

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": self.model or "test-model", "object": "model"}]}
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
            call = _chat_call(body)
        except (ValueError, KeyError, TypeError):
            return _error(400, "the request body is not a chat-completions request")
        with self._lock:
            self.requests[call.prompt] += 1
            self.auth_headers[request.headers.get("Authorization", "")] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
                return _error(401, "Incorrect API key provided.")
            if self.model is not None and call.model != self.model:
                return _error(404, f"The model '{call.model}' does not exist.")
            fault = self.faults.draw()
            if fault is not None:
                response = await self._fault(request, fault)
                if response is not None:
                    return response
            payload = self._completion(call, body)
            with self._lock:
                self.answered[call.prompt] += 1
            return web.json_response(payload)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _text_completion(self, request: web.Request) -> web.Response:
        """The legacy completions endpoint, for echoed prompt log-probabilities (lm-eval's local-completions)."""
        if self.scorer is None:
            return _error(404, "This server serves no text completions.")
        try:
            body = await request.json()
            prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
            texts = [str(p) for p in prompts]
        except (ValueError, KeyError, TypeError):
            return _error(400, "the request body is not a completions request")
        with self._lock:
            for text in texts:
                self.requests[text] += 1
        if not (body.get("echo") and body.get("logprobs") is not None and body.get("max_tokens") == 1):
            return _error(400, "this test server answers echo requests with logprobs and max_tokens 1 only")
        choices, prompt_tokens = [], 0
        for index, text in enumerate(texts):
            logprobs = self.scorer(text)
            prompt_tokens += len(logprobs["tokens"]) - 1
            choices.append({"index": index, "text": text + logprobs["tokens"][-1], "logprobs": logprobs,
                            "finish_reason": "length"})
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(texts),
                 "total_tokens": prompt_tokens + len(texts)}
        return web.json_response({"id": f"cmpl-{time.monotonic_ns():x}", "object": "text_completion",
                                  "created": int(time.time()), "model": body.get("model", ""), "choices": choices,
                                  "usage": usage})

    async def _fault(self, request: web.Request, kind: str) -> web.StreamResponse | None:
        """The faulty response, or None when the fault only delays a good answer."""
        if kind == "429":
            return _error(429, "Rate limit reached.", {"Retry-After": f"{self.retry_after:g}"})
        if kind.isdigit():
            echo = f" (you sent {request.headers.get('Authorization', '')})" if self.echo_key else ""
            return _error(int(kind), f"injected HTTP {kind}{echo}")
        if kind == "malformed":
            return web.Response(status=200, text='{"choices": [{"message": ', content_type="application/json")
        if kind == "empty":
            choice = {"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "stop"}
            usage = {"prompt_tokens": 12, "completion_tokens": 0, "total_tokens": 12}
            return web.json_response({"object": "chat.completion", "choices": [choice], "usage": usage})
        if kind == "slow":
            await asyncio.sleep(self.slow_seconds)
            return None
        transport = request.transport
        if kind == "truncate":
            response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            response.content_length = 4096
            await response.prepare(request)
            await response.write(b'{"id": "chatcmpl-cut", "choices": [')
        if transport is not None:
            transport.close()
        # The connection is gone; this only ends the handler.
        raise asyncio.CancelledError

    def _completion(self, call: ChatCall, body: dict[str, Any]) -> dict[str, Any]:
        text = self.answer(call)
        kind, choices = _choices(body)
        if choices:
            # The answer the model would give when it is an option, else a seeded pick.
            if text not in choices:
                text = choices[int(unit_draw(call.params.get("seed"), call.prompt) * len(choices))]
            if kind == "json_schema":
                text = json.dumps({"answer": text})
            with self._lock:
                self.constrained[kind] += 1
        tokens = tokenize(text, split_parens=self.split_parens)
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        finish = "stop"
        if isinstance(limit, int) and 0 < limit < len(tokens):
            tokens, finish = tokens[:limit], "length"
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": "".join(tokens)},
            "finish_reason": finish,
        }
        if body.get("logprobs"):
            top_n = int(body.get("top_logprobs") or 0)
            choice["logprobs"] = {"content": self._token_logprobs(call, text, tokens, top_n)}
        prompt_tokens = sum(len(tokenize(content)) + 3 for _, content in call.messages)
        return {
            "id": f"chatcmpl-{time.monotonic_ns():x}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": call.model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(tokens),
                "total_tokens": prompt_tokens + len(tokens),
            },
        }

    def _token_logprobs(
        self, call: ChatCall, text: str, tokens: list[str], top_n: int
    ) -> list[dict[str, Any]]:
        """Per generated token: its log-probability and the top alternatives.

        Alternatives come from the answer distribution: at position i, the
        candidates sharing the tokens before i, grouped by their token at i.
        """
        probabilities = getattr(self.answer, "probabilities", None)
        dist = probabilities(call) if probabilities else None
        if not dist or text not in dist:
            dist = {text: 1.0}
        candidates = [(tokenize(t, split_parens=self.split_parens), p) for t, p in dist.items() if p > 0]
        content = []
        for i, token in enumerate(tokens):
            mass: Counter[str] = Counter()
            for cand, p in candidates:
                if len(cand) > i and cand[:i] == tokens[:i]:
                    mass[cand[i]] += p
            total = sum(mass.values()) or 1.0
            chosen = mass.get(token, 0.0) / total

            def entry(tok: str, p: float) -> dict[str, Any]:
                return {"token": tok, "logprob": math.log(p) if p > 0 else -9999.0, "bytes": list(tok.encode())}

            item = entry(token, chosen if chosen > 0 else 1.0)
            item["top_logprobs"] = [entry(t, p / total) for t, p in mass.most_common(top_n)]
            content.append(item)
        return content


class LocalWeights:
    """A causal language model from a folder (tests/: a tiny random-weight one) that scores texts as vLLM's
    completions endpoint echoes them: the text tokenized with the tokenizer's own special tokens, each
    token's log-probability given those before it (None for the first), its character offset in the text,
    then the most likely next token, the one "generated"."""

    def __init__(self, folder: str | os.PathLike[str]):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()

    def __call__(self, text: str) -> dict[str, Any]:
        torch = self._torch
        encoded = self.tokenizer(text, return_offsets_mapping=True)
        ids = list(encoded["input_ids"])
        with torch.no_grad():
            logp = torch.log_softmax(self.model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
        following = int(logp[-1].argmax())
        values = [None] + [float(logp[i - 1, ids[i]]) for i in range(1, len(ids))] + [float(logp[-1, following])]
        tokens = [self.tokenizer.decode([i]) for i in [*ids, following]]
        offsets = [start for start, _ in encoded["offset_mapping"]] + [len(text)]
        return {"tokens": tokens, "token_logprobs": values, "text_offset": offsets,
                "top_logprobs": [None] + [{t: v} for t, v in zip(tokens[1:], values[1:])]}


def _choices(body: dict[str, Any]) -> tuple[str | None, list[str] | None]:
    """(kind, options) of a request constrained to a choice, else (None, None)."""
    structured = body.get("structured_outputs")
    if isinstance(structured, dict) and isinstance(structured.get("choice"), list):
        return "structured_outputs", [str(c) for c in structured["choice"]]
    fmt = body.get("response_format")
    try:
        enum = fmt["json_schema"]["schema"]["properties"]["answer"]["enum"]
    except (KeyError, TypeError):
        return None, None
    return ("json_schema", [str(c) for c in enum]) if isinstance(enum, list) and enum else (None, None)


def _chat_call(body: Any) -> ChatCall:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise ValueError("no messages")
    messages = tuple((str(m["role"]), str(m["content"])) for m in body["messages"])
    params = {k: v for k, v in body.items() if k not in ("messages", "model")}
    return ChatCall(model=str(body.get("model", "")), messages=messages, params=params)


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    payload = {"error": {"message": message, "type": _ERROR_TYPES.get(status, "error"), "code": status}}
    return web.json_response(payload, status=status, headers=headers)


# -- a server in its own process (benchmarks: keeps its CPU off the client's) ----


class RemoteStats:
    """Handle on a server running in a subprocess."""

    def __init__(self, process: subprocess.Popen[str], port: int):
        self.process = process
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stats", timeout=10) as resp:
            return json.loads(resp.read())


@contextmanager
def spawn_openai_server(*args: str) -> Iterator[RemoteStats]:
    """Run the server with command-line ``args`` in a subprocess and yield its handle."""
    launch = "import sys; from genderprobe.testing.openai_server import main; main(sys.argv[1:])"
    with spawned([sys.executable, "-c", launch, *args], "test server") as (process, port):
        yield RemoteStats(process, port)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A local OpenAI-compatible test server.")
    parser.add_argument("--p-man", type=float, default=0.75)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--api-key-env", default=None, help="variable holding the key to require")
    parser.add_argument("--model", default=None)
    parser.add_argument("--faults", default="", help="kind=rate,... e.g. 429=0.05,drop=0.01")
    parser.add_argument("--retry-after", type=float, default=0.05)
    parser.add_argument("--slow-seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    rates = {}
    for part in filter(None, args.faults.split(",")):
        kind, _, rate = part.partition("=")
        rates[kind.strip()] = float(rate)
    quiet_aiohttp_logs()
    server = OpenAITestServer(
        p_man=args.p_man,
        seed=args.seed,
        latency=args.latency,
        api_key=os.environ.get(args.api_key_env) if args.api_key_env else None,
        model=args.model,
        faults=rates,
        retry_after=args.retry_after,
        slow_seconds=args.slow_seconds,
    )
    serve_until_terminated(server)


if __name__ == "__main__":
    main()
