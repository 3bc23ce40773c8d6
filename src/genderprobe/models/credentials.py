"""The credentials a run sends, and their removal from every text a server sends back.

A careless server repeats the request in its error text, and a model may be
coaxed into repeating it in an answer: the API key, the configured headers, the
base URL's query values and its ``user:password@`` (which goes out as
``Authorization: Basic`` and its base64 form). Each is replaced by
:data:`MARKER` wherever it appears, in the forms a server may echo it:
as given, percent-decoded, and for the URL's user and password, the base64 of
``user:password``. The runner applies this once, where answers and errors
enter the run (genderprobe.engine.runner), so the store, the records, the
results, the reports and standard error never see a credential.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit

from genderprobe.errors import ModelError
from genderprobe.models.base import Response

# What stands where a credential was, in answers and error texts alike.
MARKER = "[redacted]"
# Shorter values are not scrubbed: replacing "ab" everywhere would garble answers, and
# such a value guards nothing.
MIN_LENGTH = 4
# Query fields genderprobe sends itself that carry no secret (Azure's API version, a date).
_PUBLIC_QUERY_FIELDS = frozenset({"api-version"})
# Header values that carry a credential after an auth scheme: the bare token is scrubbed too.
_AUTH_SCHEMES = ("bearer ", "basic ", "token ")


def url_credentials(url: str) -> list[str]:
    """The secrets in a base URL: user, password, their Basic-auth base64, and the query values."""
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return []
    found: list[str] = []
    if user is not None:
        plain_user, plain_password = unquote(user), unquote(password or "")
        found += [user, plain_user, password or "", plain_password]
        # aiohttp sends them as Authorization: Basic base64(user:password).
        found.append(base64.b64encode(f"{plain_user}:{plain_password}".encode()).decode())
    for raw in parts.query.split("&") if parts.query else ():
        name, _, value = raw.partition("=")
        if unquote(name) not in _PUBLIC_QUERY_FIELDS:
            found.append(value)  # as sent; a server echoing its parsed query shows the decoded form
    found += [value for name, value in parse_qsl(parts.query) if name not in _PUBLIC_QUERY_FIELDS]
    return [f for f in found if f]


def header_credentials(headers: dict[str, str]) -> list[str]:
    """The values of configured headers, and the token after an auth scheme ("Bearer abc" -> "abc")."""
    found = list(headers.values())
    found += [v.split(" ", 1)[1].strip() for v in headers.values() if v.lower().startswith(_AUTH_SCHEMES)]
    return found


class Scrubber:
    """Replaces each of a run's credentials with :data:`MARKER` in a text. Falsy when there are none."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        # Longest first: a key that contains another is replaced whole.
        self.secrets = sorted({s for s in secrets if s and len(s) >= MIN_LENGTH}, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:  # a scan without a copy, for the common case of nothing to replace
                text = text.replace(secret, MARKER)
        return text

    def response(self, r: Response) -> None:
        """Scrub an answer in place: its text, its reasoning and its error message."""
        if self.secrets:
            r.text = r.text and self(r.text)
            r.reasoning = r.reasoning and self(r.reasoning)
            r.error_message = r.error_message and self(r.error_message)

    def error(self, exc: ModelError) -> ModelError:
        """Scrub a backend's error in place (its kind, status and Retry-After kept)."""
        if self.secrets and exc.args:
            exc.args = (self(str(exc)),)
        return exc
