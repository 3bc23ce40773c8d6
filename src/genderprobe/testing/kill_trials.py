"""What kill -9 trials on --batch and local weights measure, shared by the tests and the benchmark.

A provider batch is paid for once created, whether or not a run reads it: what a
chain of killed and resumed runs paid is every request of every batch the
server created plus those sent the normal way. Local weights pay in compute:
what a kill costs is the answers the backend had finished that the store does
not hold, read from a log the run appends to (:func:`log_finished_parts`)
each time a part of its list is finished and before that part is committed.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

FINISHED_LOG = "GENDERPROBE_FINISHED_LOG"  # where log_finished_parts writes, in the run's environment
COMPARED = ("metrics", "marks", "breakdowns", "tables", "counts")


def batch_run(server: Any, cache: Path, out: Path, sample_k: int, work: Path) -> list[str]:
    """A --batch run of relationship-levy that polls every 50 ms."""
    config = work / "batch-poll.toml"
    config.write_text("[run]\nbatch_poll_interval = 0.05\n")
    return ["run", "relationship-levy", "--model", "openai:batch-test", "--base-url", server.base_url, "--batch",
            "--sample-k", str(sample_k), "--resamples", "20", "--cache-dir", str(cache), "--config", str(config),
            "--out", str(out), "--quiet"]


def batch_paid(server: Any) -> int:
    """Requests paid for: those of every batch the server created and those sent the normal way."""
    return sum(len(batch.requests) for batch in list(server.batches.values())) + server.total_requests


def hf_run(model_dir: Path, cache: Path, out: Path, sample_k: int) -> list[str]:
    """A relationship-levy run on local weights in small batches (8 prompts), four tokens an answer."""
    spec = f"hf:{model_dir}?threads=1&max_batch_size=8"
    return ["run", "relationship-levy", "--model", spec, "--max-tokens", "4", "--sample-k", str(sample_k),
            "--resamples", "20", "--cache-dir", str(cache), "--out", str(out), "--quiet"]


def log_finished_parts() -> None:
    """In a run's process: append the size of each part of answers the backend finishes to $GENDERPROBE_FINISHED_LOG,
    before the runner commits it (a start_run ``setup``)."""
    from genderprobe.engine.runner import Runner

    path, take = os.environ[FINISHED_LOG], Runner._take

    def logged(self, answered, *args, **kwargs):
        if answered:
            with open(path, "a") as log:
                log.write(f"{len(answered)}\n")
        return take(self, answered, *args, **kwargs)

    Runner._take = logged  # type: ignore[method-assign]


def finished(log: Path) -> int:
    return sum(int(n) for n in log.read_text().split()) if log.exists() else 0


def stored(cache: Path) -> int:
    """Answers and errors the store holds (an error is kept too, and asked again by the next run)."""
    path = cache / "responses.sqlite3"
    if not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        try:
            return sum(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in ("responses", "errors"))
        except sqlite3.OperationalError:  # made, its tables not yet
            return 0


def finished_not_stored(log: Path, cache: Path) -> int:
    return finished(log) - stored(cache)


def ray_worker_pids() -> list[int]:
    """Live Ray worker processes holding a genderprobe backend, found as an operator would."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"ray::BackendWorker"):
                pids.append(int(entry.name))
    return pids


def same_results(out: Path, whole: Path) -> bool:
    """The results of a resumed chain of runs (in ``out``) equal those of an uninterrupted run (in ``whole``)."""
    return same_documents(*(json.loads((folder / "results.json").read_text()) for folder in (out, whole)))


def same_documents(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    return all(json.dumps(ours[part], sort_keys=True) == json.dumps(theirs[part], sort_keys=True)
               for part in COMPARED)
