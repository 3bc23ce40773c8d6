"""Command-line arguments that are not UTF-8 text.

Python reads such an argument as a string holding lone surrogates, which
fail much later, deep in the store or an HTTP library. They are refused up
front, in one sentence that shows the argument.
"""

from __future__ import annotations

from collections.abc import Iterable

from genderprobe.errors import UserError


def refuse_non_utf8(args: Iterable[str]) -> None:
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise UserError(
                f"The argument '{shown}' is not UTF-8 text; genderprobe reads its arguments as UTF-8, "
                f"so convert it (iconv) or put a long text in a UTF-8 file."
            ) from None
