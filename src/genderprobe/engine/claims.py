"""Claims: which process is asking which prompt right now, kept in the store.

A run claims the prompts it is about to send: a row in the store's ``claims``
table with the store key, an owner id of its own, the host and process id,
and an expiry that the run renews while it lives. Another run that needs the
same answer finds the claim and waits for the answer (or comes back to it
once its other prompts are done) instead of paying for it again. A claim
whose expiry has passed, or whose process on this host is gone (``kill -9``),
is taken over at once. A run deletes its claims when its list of requests is
done or it stops; until then a claim on a key already answered stops nobody,
as the answer is looked for first.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Seconds a claim lives without being renewed; a live run renews it every third of that.
TTL = 30.0
# SQLite's default limit on bound parameters is 999 in old builds.
_CHUNK = 900


@dataclass
class Claimed:
    """What became of the keys a run tried to claim."""

    mine: list[bytes] = field(default_factory=list)  # to ask now
    answered: list[bytes] = field(default_factory=list)  # another run stored the answer meanwhile
    busy: list[bytes] = field(default_factory=list)  # a live run is asking them: come back later


class Claims:
    """One runner's claims. Every method runs inside the caller's write transaction."""

    def __init__(self, ttl: float = TTL):
        self.owner = uuid.uuid4().hex
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.ttl = ttl

    def claim(self, db: sqlite3.Connection, keys: Sequence[bytes], since: float | None = None) -> Claimed:
        """Claim the keys that are neither answered (since ``since``, a time) nor claimed by a live run."""
        out = Claimed()
        now = time.time()
        rows = []
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            young = "" if since is None else " AND created >= ?"
            answered = {r[0] for r in db.execute(
                f"SELECT key FROM responses WHERE key IN ({marks}){young}", (*chunk, *(() if since is None else (since,))))}
            held = {r[0]: r[1:] for r in db.execute(
                f"SELECT key, owner, host, pid, expires FROM claims WHERE key IN ({marks})", chunk)}
            for key in chunk:
                if key in answered:
                    out.answered.append(key)
                elif key in held and held[key][0] != self.owner and self._alive(*held[key][1:], now):
                    out.busy.append(key)
                else:
                    out.mine.append(key)
                    rows.append((key, self.owner, self.host, self.pid, now + self.ttl))
        db.executemany("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)", rows)
        return out

    def renew(self, db: sqlite3.Connection) -> None:
        db.execute("UPDATE claims SET expires = ? WHERE owner = ?", (time.time() + self.ttl, self.owner))

    def release(self, db: sqlite3.Connection) -> None:
        """Delete every claim of this runner."""
        db.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))

    def _alive(self, host: str, pid: int, expires: float, now: float) -> bool:
        if expires < now:
            return False
        return host != self.host or process_running(pid)


def process_running(pid: int) -> bool:
    """Whether process ``pid`` of this host still runs (a zombie, killed but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (macOS): the signal test must do
    return stat.rpartition(")")[2].split()[:1] != ["Z"]
