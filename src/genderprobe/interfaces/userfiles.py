"""Reading files a user names on the command line, with one clear sentence on failure."""

from __future__ import annotations

from pathlib import Path

from genderprobe.errors import UserError


def read_user_text(path: str | Path, what: str = "file") -> str:
    """The UTF-8 text of ``path``; ``what`` names it in the error ("seeds file").

    A byte-order mark (spreadsheets write one into CSV files) is dropped, so it
    does not become part of the first column name or the first line.
    """
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"The {what} {path} does not exist.") from None
    except IsADirectoryError:
        raise UserError(f"The {what} {path} is a folder, not a file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"Cannot read the {what} {path} as UTF-8 text ({exc.__class__.__name__}).") from None
