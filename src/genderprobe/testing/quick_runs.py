"""Command-line runs in real processes that start in milliseconds, for kill -9 trials.

A fork server (``multiprocessing``'s forkserver) imports genderprobe and reads
the probes' data once; each run is forked from it and runs ``genderprobe`` with
the arguments given, so a test can start, kill and restart dozens of runs in
seconds. Each run is a process of its own: ``kill -9`` ends it exactly as it
ends a user's run.

    run = start_run(["run", "demet", "--model", ...], env={"OPENAI_API_KEY": key}, log=tmp / "run.log")
    os.kill(run.pid, signal.SIGKILL); run.join()
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import resource
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_CONTEXT: Any = None
# Imported (and so warmed) in the fork server before any run is forked.
PRELOAD = "genderprobe.testing.quick_runs_preload"


def start_run(args: Sequence[str], *, env: Mapping[str, str], log: Path, file_size_limit: int | None = None,
              setup: str | None = None) -> Any:
    """Start ``genderprobe ARGS`` in a forked process; its standard output and error go to ``log``.

    file_size_limit: the most bytes any file the run writes may hold (RLIMIT_FSIZE): a write
        past it fails with EFBIG, as a write to a full disk fails with ENOSPC.
    setup: "module:function" called in the run's process before the command (a trial's own counting).
    """
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload([PRELOAD])
    process = _CONTEXT.Process(target=_main, args=(list(args), dict(env), str(log), file_size_limit, setup),
                               daemon=True)
    process.start()
    return process


def _main(args: list[str], env: dict[str, str], log: str, file_size_limit: int | None, setup: str | None) -> None:
    os.environ.update(env)
    # Ctrl-C as a user's terminal delivers it: a test process started in the background by a
    # non-interactive shell may hand SIGINT down ignored, and the run would then never see it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    if file_size_limit is not None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))
    if setup is not None:
        module, _, function = setup.partition(":")
        getattr(importlib.import_module(module), function)()
    from genderprobe.interfaces.cli import main

    try:
        main(args, prog_name="genderprobe")
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
