import os

import pytest


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker per core, at most four (each builds its own test models and servers)."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own response store; nothing touches ~/.cache."""
    monkeypatch.setenv("GENDERPROBE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch):
    """Output is read as a pipe sees it (pytest-xdist's workers set COLUMNS; a test that wants a width sets it)."""
    monkeypatch.delenv("COLUMNS", raising=False)
