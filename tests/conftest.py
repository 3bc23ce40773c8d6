import os
import signal

import pytest

# The tests interrupt the runs they start with Ctrl-C (SIGINT) and expect what a user's terminal gives;
# a suite started in the background by a non-interactive shell inherits SIGINT ignored, and hands that
# down to every run it starts.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker per core, at most four (each builds its own test models and servers)."""
    return max(1, min(4, _cores()))


# Workers share the cores: each one's OpenMP pools (torch, and the vLLM servers it starts) get their
# share, set before torch is imported. With a pool of all cores in every worker, their spinning
# threads took the real-model tier from 335 s to 576 s on two cores (356 s with this).
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, _cores() // _WORKERS)))


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own response store; nothing touches ~/.cache."""
    monkeypatch.setenv("GENDERPROBE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch):
    """Output is read as a pipe sees it (pytest-xdist's workers set COLUMNS; a test that wants a width sets it)."""
    monkeypatch.delenv("COLUMNS", raising=False)
