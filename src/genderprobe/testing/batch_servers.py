"""Real local servers for the providers' batch APIs, for tests.

:class:`OpenAIBatchServer` adds OpenAI's Files API (``POST /v1/files``
multipart upload, ``GET /v1/files/{id}`` and ``/content``) and Batch API
(``POST /v1/batches``, ``GET /v1/batches`` newest first with ``after`` and
``limit``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``) to the
chat-completions test server; :class:`AnthropicBatchServer` adds the Message
Batches API (``/v1/messages/batches`` create and list, retrieve, cancel and the
JSONL ``results``) to the Messages test server. Both keep the normal endpoints,
so what a batch leaves unanswered can be asked the normal way, and they answer
a batched request exactly as they answer the same chat request.

Controls (constructor arguments, attributes, or ``POST /_control`` with JSON):

- ``polls_until_done``: a batch ends at this retrieve of it (1: the first);
- ``expire``: batches end expired, every request unanswered;
- ``fail_share``: the share of the requests in a batch that fail (chosen by a
  seeded draw on the custom_id);
- ``fail_batches``: batches fail validation as a whole (OpenAI);
- ``busy_polls``: the next this many retrieves answer 503 (the API is busy).

Counters (attributes, and ``GET /_stats``): ``batches_created``,
``files_uploaded``, ``batch_polls``, ``batch_answered`` (prompt -> answers sent
in batches) and the normal path's ``requests`` / ``total_requests``.

A server in its own process, for runs that are killed and resumed::

    python -m genderprobe.testing.batch_servers openai --polls-until-done 1000000
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from genderprobe.testing.answers import unit_draw
from genderprobe.testing.anthropic_server import AnthropicTestServer, _messages_call, message_body
from genderprobe.testing.anthropic_server import _error as _anthropic_error
from genderprobe.testing.background import quiet_aiohttp_logs, serve_until_terminated, spawned
from genderprobe.testing.openai_server import OpenAITestServer, _chat_call
from genderprobe.testing.openai_server import _error as _openai_error

OPENAI_MAX_REQUESTS = 50_000
ANTHROPIC_MAX_REQUESTS = 100_000
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# Fields a Message Batches request's params may carry (anything else is refused, as the API does).
_ANTHROPIC_PARAMS = frozenset(
    {
        "model",
        "max_tokens",
        "messages",
        "system",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "metadata",
        "tools",
        "tool_choice",
        "thinking",
        "service_tier",
        "container",
        "mcp_servers",
    }
)
CONTROLS = ("polls_until_done", "expire", "fail_share", "fail_batches", "busy_polls")


@dataclass
class _Batch:
    id: str
    created: float
    requests: list[dict[str, Any]]  # OpenAI: input lines; Anthropic: {custom_id, params}
    meta: dict[str, Any] = field(default_factory=dict)
    polls: int = 0
    status: str = ""
    cancel: bool = False
    ended: float | None = None
    problems: list[dict[str, Any]] = field(default_factory=list)


class _BatchControls:
    """Controls and counters shared by both batch servers (a mixin for the test servers)."""

    _lock: threading.Lock
    seed: int

    def _setup_batches(
        self, polls_until_done: int, expire: bool, fail_share: float, fail_batches: bool
    ) -> None:
        self.polls_until_done = polls_until_done
        self.expire = expire
        self.fail_share = fail_share
        self.fail_batches = fail_batches
        self.busy_polls = 0
        self.batches: dict[str, _Batch] = {}
        self.batches_created = 0
        self.files_uploaded = 0
        self.batch_polls = 0
        self.batch_answered: Counter[str] = Counter()
        self._ids = 0

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}{self._ids:06d}{time.time_ns() & 0xFFFFFF:06x}"

    def batch_stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "batches_created": self.batches_created,
                "files_uploaded": self.files_uploaded,
                "batch_polls": self.batch_polls,
                "batch_answered": sum(self.batch_answered.values()),
                "max_batch_answers_per_prompt": max(self.batch_answered.values(), default=0),
                "controls": {name: getattr(self, name) for name in CONTROLS},
            }

    def _busy(self) -> bool:
        """Whether this retrieve is one of the ``busy_polls`` that answer 503."""
        with self._lock:
            if self.busy_polls > 0:
                self.busy_polls -= 1
                self.batch_polls += 1
                return True
            return False

    def _fails(self, custom_id: str) -> bool:
        return unit_draw(self.seed, "batch-fail", custom_id) < self.fail_share

    async def _control(self, request: web.Request) -> web.Response:
        changes = await request.json()
        for name, value in changes.items():
            if name not in CONTROLS:
                return web.json_response({"error": f"unknown control {name}"}, status=400)
            setattr(self, name, value)
        return web.json_response(self.batch_stats())

    def _listing(self, request: web.Request, render: Any, after_key: str) -> dict[str, Any]:
        """A page of batches, newest first, after the id named by ``after_key``."""
        limit = max(1, min(100, int(request.query.get("limit", "20"))))
        with self._lock:
            ordered = sorted(self.batches.values(), key=lambda b: b.created, reverse=True)
        after = request.query.get(after_key)
        if after:
            ids = [b.id for b in ordered]
            ordered = ordered[ids.index(after) + 1 :] if after in ids else []
        page = ordered[:limit]
        data = [render(b) for b in page]
        return {
            "data": data,
            "has_more": len(ordered) > limit,
            "first_id": page[0].id if page else None,
            "last_id": page[-1].id if page else None,
        }


class OpenAIBatchServer(_BatchControls, OpenAITestServer):
    """The OpenAI test server with the Files and Batch APIs; ``base_url`` ends in /v1."""

    def __init__(
        self,
        *args: Any,
        polls_until_done: int = 2,
        expire: bool = False,
        fail_share: float = 0.0,
        fail_batches: bool = False,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.seed = kwargs.get("seed", 0)
        self._setup_batches(polls_until_done, expire, fail_share, fail_batches)
        self.files: dict[str, dict[str, Any]] = {}  # id -> file object with its "content"

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), **self.batch_stats()}

    def routes(self) -> list[web.RouteDef]:
        return [
            *super().routes(),
            web.post("/v1/files", self._upload),
            web.get("/v1/files/{file_id}", self._file),
            web.get("/v1/files/{file_id}/content", self._file_content),
            web.post("/v1/batches", self._create),
            web.get("/v1/batches", self._list),
            web.get("/v1/batches/{batch_id}", self._retrieve),
            web.post("/v1/batches/{batch_id}/cancel", self._cancel),
            web.post("/_control", self._control),
        ]

    def _refused(self, request: web.Request) -> web.Response | None:
        if (
            self.api_key is not None
            and request.headers.get("Authorization") != f"Bearer {self.api_key}"
        ):
            return _openai_error(401, "Incorrect API key provided.")
        return None

    # -- files ------------------------------------------------------------------

    def _add_file(self, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = self._next_id("file-")
        entry = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "content": content,
        }
        with self._lock:
            self.files[file_id] = entry
        return entry

    async def _upload(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        if not request.content_type.startswith("multipart/form-data"):
            return _openai_error(
                400, f"Invalid Content-Type {request.content_type!r}: expected multipart/form-data."
            )
        form = await request.post()
        upload, purpose = form.get("file"), form.get("purpose")
        if not isinstance(upload, web.FileField):
            return _openai_error(400, "file: a file is required.")
        if purpose != "batch":
            return _openai_error(
                400, f"purpose: expected 'batch' for this server, got {purpose!r}."
            )
        entry = self._add_file(upload.file.read(), upload.filename, "batch")
        with self._lock:
            self.files_uploaded += 1
        return web.json_response({k: v for k, v in entry.items() if k != "content"})

    async def _file(self, request: web.Request) -> web.Response:
        entry = self.files.get(request.match_info["file_id"])
        if entry is None:
            return _openai_error(404, "No such File object.")
        return web.json_response({k: v for k, v in entry.items() if k != "content"})

    async def _file_content(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        entry = self.files.get(request.match_info["file_id"])
        if entry is None:
            return _openai_error(404, "No such File object.")
        return web.Response(body=entry["content"], content_type="application/octet-stream")

    # -- batches ----------------------------------------------------------------

    async def _create(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        try:
            body = await request.json()
        except ValueError:
            return _openai_error(400, "The body is not JSON.")
        file_entry = self.files.get(body.get("input_file_id"))
        if file_entry is None or file_entry["purpose"] != "batch":
            return _openai_error(
                400, f"input_file_id: no batch input file {body.get('input_file_id')!r}."
            )
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return _openai_error(
                400, "endpoint must be /v1/chat/completions and completion_window 24h."
            )
        metadata = body.get("metadata")
        if metadata is not None and not (
            isinstance(metadata, dict)
            and len(metadata) <= 16
            and all(
                isinstance(k, str) and len(k) <= 64 and isinstance(v, str) and len(v) <= 512
                for k, v in metadata.items()
            )
        ):
            return _openai_error(
                400, "metadata: at most 16 string pairs (keys 64, values 512 characters)."
            )
        lines, problems = _read_input(file_entry["content"])
        batch = _Batch(
            self._next_id("batch_"),
            time.time(),
            lines,
            problems=problems,
            meta={
                "input_file_id": file_entry["id"],
                "metadata": metadata,
                "endpoint": body["endpoint"],
            },
        )
        batch.status = "validating"
        with self._lock:
            self.batches[batch.id] = batch
            self.batches_created += 1
        return web.json_response(self._render(batch))

    async def _list(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        return web.json_response(
            {"object": "list", **self._listing(request, self._render, "after")}
        )

    async def _retrieve(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        if self._busy():
            return _openai_error(503, "The server is overloaded, please try again.")
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _openai_error(404, "No such batch.")
        with self._lock:
            self.batch_polls += 1
            batch.polls += 1
        self._advance(batch)
        return web.json_response(self._render(batch))

    async def _cancel(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _openai_error(404, "No such batch.")
        if batch.status not in ("completed", "failed", "expired", "cancelled"):
            batch.cancel, batch.status = True, "cancelling"
        return web.json_response(self._render(batch))

    def _advance(self, batch: _Batch) -> None:
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return
        if batch.problems or self.fail_batches or len(batch.requests) > OPENAI_MAX_REQUESTS:
            if not batch.problems:
                batch.problems = [
                    {
                        "code": "invalid_batch",
                        "message": "The batch failed validation.",
                        "line": None,
                    }
                ]
            batch.status, batch.ended = "failed", time.time()
            return
        if batch.cancel:
            batch.status, batch.ended = "cancelled", time.time()
            return
        if batch.polls < self.polls_until_done:
            batch.status = "validating" if batch.polls <= 1 else "in_progress"
            return
        outputs, errors = [], []
        for line in batch.requests:
            outcome = self._answer_line(line)
            answered = (outcome["response"] or {}).get("status_code") == 200
            (outputs if answered else errors).append(outcome)
        if outputs:
            batch.meta["output_file_id"] = self._jsonl_file(outputs, f"{batch.id}_output.jsonl")
        if errors:
            batch.meta["error_file_id"] = self._jsonl_file(errors, f"{batch.id}_error.jsonl")
        batch.meta["counts"] = {
            "total": len(batch.requests),
            "completed": len(outputs),
            "failed": len(errors),
        }
        batch.status, batch.ended = ("expired" if self.expire else "completed"), time.time()

    def _answer_line(self, line: dict[str, Any]) -> dict[str, Any]:
        custom = line["custom_id"]
        record: dict[str, Any] = {
            "id": f"batch_req_{unit_draw(custom) * 1e12:012.0f}",
            "custom_id": custom,
            "response": None,
            "error": None,
        }
        if self.expire:
            record["error"] = {
                "code": "batch_expired",
                "message": "This request could not be executed before the completion window expired.",
            }
            return record
        body = line["body"]
        if self._fails(custom):
            error = {
                "message": "The server had an error while processing your request.",
                "type": "server_error",
            }
            record["response"] = {
                "status_code": 500,
                "request_id": f"req_{custom[:16]}",
                "body": {"error": error},
            }
            return record
        if self.model is not None and body.get("model") != self.model:
            error = {
                "message": f"The model '{body.get('model')}' does not exist.",
                "type": "model_not_found",
            }
            record["response"] = {
                "status_code": 404,
                "request_id": f"req_{custom[:16]}",
                "body": {"error": error},
            }
            return record
        call = _chat_call(body)
        completion = self._completion(call, body)
        with self._lock:
            self.batch_answered[call.prompt] += 1
        record["response"] = {
            "status_code": 200,
            "request_id": f"req_{custom[:16]}",
            "body": completion,
        }
        return record

    def _jsonl_file(self, records: list[dict[str, Any]], name: str) -> str:
        content = b"".join(json.dumps(r).encode() + b"\n" for r in records)
        return self._add_file(content, name, "batch_output")["id"]

    def _render(self, batch: _Batch) -> dict[str, Any]:
        created = int(batch.created)
        ended = int(batch.ended) if batch.ended else None
        status = batch.status
        counts = batch.meta.get("counts") or {
            "total": len(batch.requests),
            "completed": 0,
            "failed": 0,
        }
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.meta["endpoint"],
            "errors": {"object": "list", "data": batch.problems} if status == "failed" else None,
            "input_file_id": batch.meta["input_file_id"],
            "completion_window": "24h",
            "status": status,
            "output_file_id": batch.meta.get("output_file_id"),
            "error_file_id": batch.meta.get("error_file_id"),
            "created_at": created,
            "in_progress_at": created if batch.polls > 1 else None,
            "expires_at": created + 86400,
            "finalizing_at": ended if status in ("completed", "expired") else None,
            "completed_at": ended if status == "completed" else None,
            "failed_at": ended if status == "failed" else None,
            "expired_at": ended if status == "expired" else None,
            "cancelling_at": created if batch.cancel else None,
            "cancelled_at": ended if status == "cancelled" else None,
            "request_counts": counts,
            "metadata": batch.meta.get("metadata"),
        }


def _read_input(content: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The input file's request lines and the problems that fail the batch's validation."""
    lines: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, raw in enumerate(content.splitlines(), start=1):
        try:
            line = json.loads(raw)
            custom = line["custom_id"]
            ok = (
                isinstance(custom, str)
                and custom not in seen
                and line["method"] == "POST"
                and line["url"] == "/v1/chat/completions"
                and isinstance(line["body"], dict)
                and isinstance(line["body"].get("messages"), list)
            )
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            problems.append(
                {
                    "code": "invalid_request",
                    "line": number,
                    "message": "Each line needs a unique custom_id, method POST, url "
                    "/v1/chat/completions and a chat body.",
                }
            )
            continue
        seen.add(custom)
        lines.append(line)
    if not lines and not problems:
        problems.append({"code": "empty_file", "line": None, "message": "The input file is empty."})
    return lines, problems


class AnthropicBatchServer(_BatchControls, AnthropicTestServer):
    """The Anthropic test server with the Message Batches API; ``base_url`` has no /v1."""

    def __init__(
        self,
        *args: Any,
        polls_until_done: int = 2,
        expire: bool = False,
        fail_share: float = 0.0,
        fail_batches: bool = False,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.seed = kwargs.get("seed", 0)
        self._setup_batches(polls_until_done, expire, fail_share, fail_batches)

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), **self.batch_stats()}

    def routes(self) -> list[web.RouteDef]:
        return [
            *super().routes(),
            web.post("/v1/messages/batches", self._create),
            web.get("/v1/messages/batches", self._list),
            web.get("/v1/messages/batches/{batch_id}", self._retrieve),
            web.post("/v1/messages/batches/{batch_id}/cancel", self._cancel),
            web.get("/v1/messages/batches/{batch_id}/results", self._results),
            web.post("/_control", self._control),
        ]

    def _refused(self, request: web.Request) -> web.Response | None:
        if not request.headers.get("anthropic-version"):
            return _anthropic_error(400, "anthropic-version header is required")
        bearer = request.headers.get("Authorization", "")
        key = request.headers.get("x-api-key") or (
            bearer[7:] if bearer.startswith("Bearer ") else ""
        )
        if self.api_key is not None and key != self.api_key:
            return _anthropic_error(401, "invalid x-api-key")
        return None

    async def _create(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        try:
            body = await request.json()
            items = body["requests"]
            if not isinstance(items, list) or not items:
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return _anthropic_error(400, "requests: a non-empty list is required")
        if len(items) > ANTHROPIC_MAX_REQUESTS:
            return _anthropic_error(400, f"requests: at most {ANTHROPIC_MAX_REQUESTS} per batch")
        seen: set[str] = set()
        for n, item in enumerate(items):
            problem = _anthropic_problem(item, seen)
            if problem:
                return _anthropic_error(400, f"requests.{n}.{problem}")
        batch = _Batch(self._next_id("msgbatch_"), time.time(), items, status="in_progress")
        with self._lock:
            self.batches[batch.id] = batch
            self.batches_created += 1
        return web.json_response(self._render(batch))

    async def _list(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        return web.json_response(self._listing(request, self._render, "after_id"))

    async def _retrieve(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        if self._busy():
            return _anthropic_error(529, "Overloaded")
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _anthropic_error(404, "batch not found")
        with self._lock:
            self.batch_polls += 1
            batch.polls += 1
        self._advance(batch)
        return web.json_response(self._render(batch))

    async def _cancel(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _anthropic_error(404, "batch not found")
        if batch.status != "ended":
            batch.cancel, batch.status = True, "canceling"
        return web.json_response(self._render(batch))

    async def _results(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None or batch.status != "ended":
            return _anthropic_error(404, "results are available once the batch has ended")
        lines = b"".join(json.dumps(r).encode() + b"\n" for r in batch.meta["results"])
        return web.Response(body=lines, content_type="application/binary")

    def _advance(self, batch: _Batch) -> None:
        if batch.status == "ended" or (batch.polls < self.polls_until_done and not batch.cancel):
            return
        results = [self._result(item, canceled=batch.cancel) for item in batch.requests]
        batch.meta["results"] = results
        batch.status, batch.ended = "ended", time.time()

    def _result(self, item: dict[str, Any], *, canceled: bool) -> dict[str, Any]:
        custom, params = item["custom_id"], item["params"]
        if canceled:
            return {"custom_id": custom, "result": {"type": "canceled"}}
        if self.expire:
            return {"custom_id": custom, "result": {"type": "expired"}}
        if self._fails(custom):
            error = {
                "type": "error",
                "error": {"type": "api_error", "message": "Internal server error"},
            }
            return {"custom_id": custom, "result": {"type": "errored", "error": error}}
        call = _messages_call(params)
        message = message_body(call, self.answer(call), params["max_tokens"])
        with self._lock:
            self.batch_answered[call.prompt] += 1
        return {"custom_id": custom, "result": {"type": "succeeded", "message": message}}

    def _render(self, batch: _Batch) -> dict[str, Any]:
        counts = Counter(r["result"]["type"] for r in batch.meta.get("results", ()))
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": {
                "processing": 0 if ended else len(batch.requests),
                "succeeded": counts["succeeded"],
                "errored": counts["errored"],
                "canceled": counts["canceled"],
                "expired": counts["expired"],
            },
            "ended_at": _rfc3339(batch.ended) if batch.ended else None,
            "created_at": _rfc3339(batch.created),
            "expires_at": _rfc3339(batch.created + 86400),
            "archived_at": None,
            "cancel_initiated_at": _rfc3339(batch.created) if batch.cancel else None,
            "results_url": f"{self.url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }


def _anthropic_problem(item: Any, seen: set[str]) -> str | None:
    """What is wrong with one request of a Message Batch, or None."""
    if not isinstance(item, dict):
        return "request: an object is required"
    custom, params = item.get("custom_id"), item.get("params")
    if not isinstance(custom, str) or not _CUSTOM_ID.match(custom):
        return "custom_id: 1 to 64 letters, digits, underscores or hyphens"
    if custom in seen:
        return f"custom_id: {custom} is used twice"
    seen.add(custom)
    if not isinstance(params, dict):
        return "params: an object is required"
    extra = sorted(set(params) - _ANTHROPIC_PARAMS)
    if extra:
        return f"params.{extra[0]}: Extra inputs are not permitted"
    if not isinstance(params.get("max_tokens"), int) or not isinstance(
        params.get("messages"), list
    ):
        return "params: model, max_tokens and messages are required"
    return None


def _rfc3339(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat().replace("+00:00", "Z")


# -- a server in its own process ------------------------------------------------


class RemoteBatchServer:
    """Handle on a batch server running in a subprocess."""

    def __init__(self, process: subprocess.Popen[str], port: int, kind: str):
        self.process = process
        self.url = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.url}/v1" if kind == "openai" else self.url

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/_stats", timeout=10) as resp:
            return json.loads(resp.read())

    def control(self, **changes: Any) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.url}/_control",
            data=json.dumps(changes).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as resp:
            return json.loads(resp.read())


@contextmanager
def spawn_batch_server(kind: str, *args: str) -> Iterator[RemoteBatchServer]:
    """Run ``python -m genderprobe.testing.batch_servers KIND ARGS`` and yield its handle."""
    command = [sys.executable, "-m", "genderprobe.testing.batch_servers", kind, *args]
    with spawned(command, "batch test server") as (process, port):
        yield RemoteBatchServer(process, port, kind)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="A local batch-API test server (OpenAI or Anthropic)."
    )
    parser.add_argument("kind", choices=("openai", "anthropic"))
    parser.add_argument("--p-man", type=float, default=0.75)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--api-key-env", default=None, help="variable holding the key to require")
    parser.add_argument("--polls-until-done", type=int, default=2)
    parser.add_argument("--fail-share", type=float, default=0.0)
    parser.add_argument("--expire", action="store_true")
    args = parser.parse_args(argv)
    quiet_aiohttp_logs()
    server_class = OpenAIBatchServer if args.kind == "openai" else AnthropicBatchServer
    server = server_class(
        p_man=args.p_man,
        seed=args.seed,
        api_key=os.environ.get(args.api_key_env) if args.api_key_env else None,
        polls_until_done=args.polls_until_done,
        fail_share=args.fail_share,
        expire=args.expire,
    )
    serve_until_terminated(server)


if __name__ == "__main__":
    main()
