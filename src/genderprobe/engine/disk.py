"""A full disk: telling it apart from other failures, and naming it in one sentence.

A full disk (or a file-size limit, or a quota) is not the user's mistake and
not a broken store: the run stops with exit code 1, keeping every answer, and
the sentence names the disk and how much room is left on it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from genderprobe.errors import RunFailed

FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def is_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in FULL


def disk_sentence(path: Path, exc: BaseException) -> str:
    """E.g. "the disk holding /x refused a write (No space left on device; 0 bytes free)"."""
    folder = path if path.is_dir() else path.parent
    try:
        stat = os.statvfs(folder)
        room = f"{stat.f_bavail * stat.f_frsize:,} bytes free"
    except OSError:
        room = "free space unknown"
    what = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"the disk holding {folder} refused a write ({what}; {room})"


def out_disk_error(path: Path, exc: BaseException) -> RunFailed:
    """The run's output (--out) cannot be written for want of room."""
    return RunFailed(
        f"Cannot write {path}: {disk_sentence(Path(path), exc)}; every answer received is kept in the store: "
        f"free some space or choose another --out, and run again (it sends nothing already answered)."
    )
