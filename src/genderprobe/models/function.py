"""``generate=``: a Python function of your own as a model backend.

``run_probe(probe, generate=fn)`` wraps ``fn`` in a :class:`FunctionModel`, so
the runner, the store, the records, the results and the report treat it like
any other backend.

The function takes a list of prompts and returns one text per prompt, in
order (``None`` for no answer, which the runner counts as an empty answer):

- ``generate=fn`` receives ``list[str]``: each request's prompt. A request
  with more than that (a system prompt, several turns) is refused rather than
  cut down, since the function would answer a question it was not asked.
- ``generate_chat=fn`` receives ``list[list[dict]]``: each request's whole
  conversation as ``{"role": ..., "content": ...}`` messages, the shape
  chat templates and chat APIs take.

A plain function is called with lists of at most ``batch_size`` prompts, one
list at a time (the runner stores each list's answers before asking the
next). An ``async def`` function takes and returns lists too, but each call's
list holds one prompt (one request per call, so the run's concurrency is how
many calls are awaited at once), on the runner's event loop.

The spec is ``function:NAME``, NAME being the function's ``__qualname__`` or
the name given. That name is the function's identity in the response store:
a rerun with the same name answers from the store without calling the
function, so two different functions need two different names.

Generation parameters (``max_tokens``, ``temperature``) are not passed to the
function: it decides how to generate. They stay part of the store key, and
the results record that nothing of them was sent.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from genderprobe.contract import count_in_range
from genderprobe.errors import UserError
from genderprobe.models.base import GenerationParams, Model, Request, Response

DEFAULT_BATCH_SIZE = 32


class FunctionModel(Model):
    """Answers requests by calling ``fn`` (see the module's docstring for the rules)."""

    cacheable = True

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, chat: bool = False,
                 batch_size: int = DEFAULT_BATCH_SIZE):
        if not callable(fn):
            raise UserError(f"generate= must be a function from a list of prompts to a list of texts; "
                            f"got {type(fn).__name__}.")
        count_in_range(batch_size, 1, None, "generate_batch_size")
        self.fn = fn
        self.chat = chat
        self.name = name or _name_of(fn)
        self.spec = f"function:{self.name}"
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        # A plain function blocks, so the runner hands it whole lists; an async
        # one gets concurrent single requests, as an API client would.
        self.batch_native = not self.is_async
        self.runner_batch_size = batch_size

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        out: list[Response] = []
        for start in range(0, len(requests), self.runner_batch_size):
            chunk = requests[start : start + self.runner_batch_size]
            out += self._responses(self._call(chunk), len(chunk))
        return out

    async def generate(self, request: Request) -> Response:
        if not self.is_async:
            return self.generate_batch([request])[0]
        inputs = self._inputs([request])
        try:
            texts = await self.fn(inputs)
        except Exception as exc:
            raise self._raised(exc) from None
        return self._responses(texts, 1)[0]

    def effective_params(self, params: GenerationParams) -> dict[str, Any]:
        return {}  # the function receives prompts only

    def decoding(self, params: GenerationParams) -> dict[str, Any]:
        return {"method": "your function", "note": "the generate function receives prompts only and decodes "
                "as it chooses; say how in your report"}

    # -- checks -----------------------------------------------------------------

    def _call(self, requests: Sequence[Request]) -> Any:
        inputs = self._inputs(requests)
        try:
            texts = self.fn(inputs)
        except Exception as exc:
            raise self._raised(exc) from None
        if inspect.isawaitable(texts):
            close = getattr(texts, "close", None)
            if close:
                close()  # never awaited: close it so Python does not warn about it
            raise UserError(f"The generate function '{self.name}' returned an awaitable; "
                            f"define it with async def so the runner awaits it.")
        return texts

    def _inputs(self, requests: Sequence[Request]) -> list[Any]:
        if self.chat:
            return [[{"role": role, "content": content} for role, content in r.messages] for r in requests]
        for r in requests:
            if len(r.messages) != 1 or r.messages[0][0] != "user":
                raise UserError(
                    "This run's requests carry a system prompt or several turns, which generate= would drop "
                    "(it receives only the prompt); pass the function as generate_chat= to receive whole "
                    "conversations."
                )
        return [r.messages[0][1] for r in requests]

    def _raised(self, exc: Exception) -> UserError:
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return UserError(f"The generate function '{self.name}' raised {detail}; fix it and run again "
                         f"(answers already stored are not asked again).")

    def _responses(self, texts: Any, n: int) -> list[Response]:
        who = f"The generate function '{self.name}'"
        if isinstance(texts, (str, bytes, Mapping)) or not isinstance(texts, Iterable):
            raise UserError(f"{who} returned {type(texts).__name__}; it must return a list of texts, one per prompt.")
        texts = list(texts)
        if len(texts) != n:
            raise UserError(f"{who} returned {_count(len(texts), 'text')} for {_count(n, 'prompt')}; "
                            f"it must return one text per prompt, in order.")
        for i, text in enumerate(texts):
            if text is not None and not isinstance(text, str):
                raise UserError(f"{who} returned {type(text).__name__} as answer {i + 1} of {n}; each answer "
                                f"must be a str, or None for no answer.")
        # None becomes Response(text=None), which the runner records as an empty answer.
        return [Response(text=text) for text in texts]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + "s" * (n != 1)


def _name_of(fn: Callable[..., Any]) -> str:
    """The function's __qualname__: its identity in the store, so a lambda's shared "<lambda>" will not do."""
    name = getattr(fn, "__qualname__", None)
    if not name or "<lambda>" in name:
        raise UserError("This generate function has no name of its own to key its answers in the store by; "
                        "name it with model='function:NAME'.")
    return name
