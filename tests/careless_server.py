"""A real OpenAI-compatible server that is careless in the two ways issue 47 found, for tests.

    with CarelessServer(fail_share=0.25) as server:       # echoes the request back
        ... --base-url http://user:pass@127.0.0.1:PORT/v1?api_key=... ...
    with CarelessServer(answer_chars=30_000_000) as server:  # ignores max_tokens
        ...

fail_share: that share of the prompts (chosen by a hash of the prompt, so every
    run fails the same ones) get a 500 whose message repeats the request line
    and every header, the Basic ``Authorization`` included; the others get an
    answer, "(a)" or "(b)" (:class:`~genderprobe.testing.answers.PreferMan`),
    followed by the same repetition of the request, as a model coaxed into
    quoting it would.
answer_chars: instead, every answer is the option followed by filler up to this
    many characters, whatever max_tokens asks (the body is built once per
    option, so the server's CPU stays out of the client's measurement).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from typing import Any

from aiohttp import web

from genderprobe.testing.answers import ChatCall, PreferMan
from genderprobe.testing.background import BackgroundServer


class CarelessServer(BackgroundServer):
    def __init__(self, *, fail_share: float = 0.0, answer_chars: int | None = None):
        super().__init__()
        self.fail_share = fail_share
        self.answer_chars = answer_chars
        self.answer = PreferMan(0.7)
        self._bodies: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.sent: Counter[str] = Counter()  # "answer" / "500" -> how many

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/v1/chat/completions", self._chat)]

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        call = ChatCall(str(body["model"]), tuple((m["role"], m["content"]) for m in body["messages"]))
        option = self.answer(call)
        if self.answer_chars is not None:
            self._count("answer")
            return web.Response(body=self._huge(option), content_type="application/json")
        echo = f"you sent {request.method} {request.path_qs} with " + "; ".join(
            f"{name}: {value}" for name, value in sorted(request.headers.items()))
        if _share(call.prompt) < self.fail_share:
            self._count("500")
            return web.json_response({"error": {"message": f"internal error ({echo})"}}, status=500)
        self._count("answer")
        return web.json_response(_completion(f"{option}. By the way, {echo}"))

    def _count(self, what: str) -> None:
        with self._lock:
            self.sent[what] += 1

    def _huge(self, option: str) -> bytes:
        with self._lock:
            if option not in self._bodies:
                filler = " and so on" * (self.answer_chars // 10 + 1)  # type: ignore[operator]
                text = (option + filler)[: self.answer_chars]
                self._bodies[option] = json.dumps(_completion(text)).encode()
            return self._bodies[option]


def _share(prompt: str) -> float:
    return int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:4], "big") / 2**32


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-careless", "object": "chat.completion", "model": "careless",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": max(1, len(text) // 4)},
    }
