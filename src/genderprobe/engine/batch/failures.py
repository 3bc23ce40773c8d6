"""How a batch API's HTTP status becomes a batch job's failure, the same for every provider."""

from __future__ import annotations

from genderprobe.engine.batch.provider import BatchRejected, BatchUnavailable
from genderprobe.errors import FatalModelError

# Worth trying again later: timeouts, conflicts, throttling; and every 5xx (529: Anthropic's overload).
RETRYABLE_4XX = frozenset({408, 409, 425, 429})


def status_failure(
    status: int, detail: str, *, spec: str, url: str, what: str, creating: bool
) -> Exception:
    """The exception for an HTTP error ``status`` met while trying to ``what``.

    detail: the server's message, already scrubbed of secrets, as ": message" or "".
    creating: the request would create a file or batch (a 404 then means no batch API there).
    """
    if status in (401, 403):
        return FatalModelError(
            f"The batch API rejected the key for {spec} (HTTP {status}{detail}) when trying to {what}; "
            f"check the API key or --api-key-env."
        )
    if status >= 500 or status in RETRYABLE_4XX:
        return BatchUnavailable(f"could not {what} (HTTP {status}{detail})")
    if status == 404 and creating:
        return FatalModelError(
            f"The server at {url} has no batch API (HTTP 404{detail}); drop --batch."
        )
    return BatchRejected(f"the batch API refused to {what} (HTTP {status}{detail})")
