"""OpenAI's Batch API: a JSONL input file (Files API), a batch over it, output files back.

Requests go through the model's own aiohttp session, so they carry the same
credentials and headers as its chat requests. Paths are inserted before any
query string of the base URL (``?api-version=...`` on Azure).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import aiohttp

from genderprobe.engine.batch.failures import status_failure
from genderprobe.engine.batch.ledger import BatchRow, custom_id, key_of
from genderprobe.engine.batch.provider import BatchRejected, BatchUnavailable, Limits, Poll
from genderprobe.errors import ModelError
from genderprobe.models.base import Request, Response
from genderprobe.models.openai_compatible import (
    OpenAICompatible,
    _parse,
    public_url,
    unwrap_json_answer,
)

ENDPOINT = "/v1/chat/completions"
# The documented limits are 50,000 requests and 200 MB per input file; the
# byte cap leaves room for the multipart envelope.
MAX_REQUESTS = 50_000
MAX_BYTES = 190_000_000
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
SUBMISSION_KEY = "genderprobe_submission"  # metadata key naming our submission
# How far back to look for a batch whose id was never recorded: the batch was
# created after its row, give or take the two clocks' difference.
CLOCK_SLACK_S = 3600.0
MAX_LIST_PAGES = 50
# Uploads and downloads may take far longer than one chat answer.
TRANSFER_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=60, sock_read=600)


class OpenAIBatches:
    name = "openai"
    limits = Limits(MAX_REQUESTS, MAX_BYTES)

    def __init__(self, model: OpenAICompatible):
        self.model = model

    # -- submitting ----------------------------------------------------------

    def encode(self, key: bytes, request: Request) -> tuple[Any, int] | None:
        if request.raw_text:
            return None  # log-likelihoods come from /v1/completions, which batches do not serve: the normal way
        line = {
            "custom_id": custom_id(key),
            "method": "POST",
            "url": ENDPOINT,
            "body": self.model.payload(request),
        }
        data = json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        return data, len(data)

    async def upload(self, items: list[Any]) -> str | None:
        with aiohttp.MultipartWriter("form-data") as form:
            purpose = form.append("batch")
            purpose.set_content_disposition("form-data", name="purpose")
            body = form.append(b"".join(items), {"Content-Type": "application/jsonl"})
            body.set_content_disposition(
                "form-data", name="file", filename="genderprobe-batch.jsonl"
            )
        # The session sends JSON by default; the multipart type with its boundary must win.
        raw = await self._call(
            "POST",
            "/files",
            "upload the batch input file",
            data=form,
            headers={"Content-Type": form.content_type},
            timeout=TRANSFER_TIMEOUT,
        )
        file_id = _field(raw, "id")
        if not isinstance(file_id, str):
            raise BatchUnavailable("the Files API answered an upload without a file id")
        return file_id

    async def create(self, row: BatchRow, items: list[Any] | None) -> str:
        body = {
            "input_file_id": row.input_file_id,
            "endpoint": ENDPOINT,
            "completion_window": "24h",
            "metadata": {SUBMISSION_KEY: row.submission},
        }
        raw = await self._call("POST", "/batches", "create the batch", json=body)
        batch_id = _field(raw, "id")
        if not isinstance(batch_id, str):
            # It may exist all the same: the caller looks for it before trying again.
            raise BatchUnavailable("the Batch API answered without a batch id")
        return batch_id

    async def find(self, row: BatchRow, known: set[str]) -> str | None:
        after: str | None = None
        for _ in range(MAX_LIST_PAGES):
            query = {"limit": "100", **({"after": after} if after else {})}
            page = _json(await self._call("GET", "/batches", "list the batches", query=query))
            data = page.get("data") if isinstance(page, dict) else None
            if not isinstance(data, list) or not data:
                return None
            for batch in data:
                if not isinstance(batch, dict) or batch.get("id") in known:
                    continue
                metadata = batch.get("metadata") or {}
                ours = batch.get("input_file_id") == row.input_file_id or (
                    isinstance(metadata, dict) and metadata.get(SUBMISSION_KEY) == row.submission
                )
                if ours and isinstance(batch.get("id"), str):
                    return batch["id"]
            oldest = data[-1].get("created_at") if isinstance(data[-1], dict) else None
            # Newest first: once past the row's time, the batch was never created.
            if isinstance(oldest, int | float) and oldest < row.created - CLOCK_SLACK_S:
                return None
            after = data[-1].get("id") if isinstance(data[-1], dict) else None
            if not page.get("has_more") or not after:
                return None
        return None

    # -- polling and reading -------------------------------------------------

    async def poll(self, batch_id: str) -> Poll:
        try:
            raw = await self._call("GET", f"/batches/{batch_id}", "check the batch")
        except BatchRejected:
            # Deleted, or another account's: nothing will ever come of it.
            return Poll("gone", terminal=True, finished=False)
        batch = _json(raw)
        status = batch.get("status") if isinstance(batch, dict) else None
        if not isinstance(status, str):
            raise BatchUnavailable("the Batch API answered without a status")
        files = tuple(
            f
            for f in (batch.get("output_file_id"), batch.get("error_file_id"))
            if isinstance(f, str)
        )
        # Expired and cancelled batches still hand back what they finished (and bill it).
        return Poll(
            status, terminal=status in TERMINAL, finished=status == "completed", output=files
        )

    async def results(self, batch_id: str, poll: Poll) -> AsyncIterator[tuple[bytes, Any]]:
        for file_id in poll.output or ():
            async for line in self._lines(f"/files/{file_id}/content"):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                key = key_of(record.get("custom_id")) if isinstance(record, dict) else None
                if key is None:
                    continue
                response = record.get("response")
                if (
                    record.get("error")
                    or not isinstance(response, dict)
                    or response.get("status_code") != 200
                ):
                    yield key, None
                    continue
                yield key, response.get("body")

    def to_response(self, payload: Any, request: Request) -> Response | None:
        if not isinstance(payload, dict):
            return None
        try:
            response = _parse(json.dumps(payload).encode(), request, self.model.spec)
        except ModelError:
            return None  # the normal path meets the same answer and reports it properly
        if request.constrain and self.model.constrain_with == "json_schema" and response.text:
            response.text = unwrap_json_answer(response.text)
        return response

    # -- HTTP ----------------------------------------------------------------

    def url(self, path: str, query: dict[str, str] | None = None) -> str:
        """The model's base URL with ``path`` inserted before its query string (and ``query`` added)."""
        parts = urlsplit(self.model._url(path))
        pairs = parse_qsl(parts.query, keep_blank_values=True) + list((query or {}).items())
        return urlunsplit(parts._replace(query=urlencode(pairs)))

    async def _call(
        self,
        method: str,
        path: str,
        what: str,
        *,
        query: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> bytes:
        try:
            async with self.model._client().request(
                method, self.url(path, query), **kwargs
            ) as resp:
                raw = await resp.read()
                status = resp.status
        except TimeoutError:
            raise BatchUnavailable(f"no answer within the time limit to {what}") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise BatchUnavailable(
                f"could not reach {public_url(self.model.base_url)} to {what} "
                f"({exc.__class__.__name__})"
            ) from None
        if status < 300:
            return raw
        raise self._failure(status, raw, method, path, what)

    def _failure(self, status: int, raw: bytes, method: str, path: str, what: str) -> Exception:
        creating = method == "POST" and path in ("/files", "/batches")
        return status_failure(
            status,
            _detail(raw, self.model),
            spec=self.model.spec,
            url=public_url(self.model.base_url),
            what=what,
            creating=creating,
        )

    async def _lines(self, path: str) -> AsyncIterator[bytes]:
        """The lines of a file's content, read in chunks (a file may hold 200 MB)."""
        try:
            async with self.model._client().get(self.url(path), timeout=TRANSFER_TIMEOUT) as resp:
                if resp.status == 404:
                    return  # deleted: its answers are gone
                if resp.status >= 300:
                    raise self._failure(
                        resp.status, await resp.read(), "GET", path, "read the batch results"
                    )
                tail = b""
                async for chunk in resp.content.iter_chunked(1 << 20):
                    lines = (tail + chunk).split(b"\n")
                    tail = lines.pop()
                    for line in lines:
                        if line.strip():
                            yield line
                if tail.strip():
                    yield tail
        except TimeoutError:
            raise BatchUnavailable(
                "no answer within the time limit while reading the batch results"
            ) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise BatchUnavailable(
                f"the connection dropped while reading the batch results ({exc.__class__.__name__})"
            ) from None


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        raise BatchUnavailable("the batch API answered with malformed JSON") from None


def _field(raw: bytes, name: str) -> Any:
    data = _json(raw)
    return data.get(name) if isinstance(data, dict) else None


def _detail(raw: bytes, model: OpenAICompatible) -> str:
    """ ": message" from an error body ({"error": {"message": ...}} or {"error": "..."}), or ""."""
    try:
        error = json.loads(raw).get("error")
        message = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        return ""
    return f": {model._scrub(str(message))[:200]}" if message else ""
