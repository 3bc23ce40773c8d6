"""vLLM's engine inside the test's own process, for tests whose point is not vLLM's processes.

By default vLLM starts its engine core and, on a CPU, its executor as two more processes, each
importing vLLM and torch again: most of an engine's start-up on a small machine. The default
path still runs in tests/harness/test_vllm.py (the command line), test_ray.py (the workers' engines)
and test_real_model.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def engine_in_this_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Engines started inside the block run in this process."""
    import vllm.envs

    # An engine freezes vLLM's settings in its process: they are read anew before and after.
    vllm.envs.disable_envs_cache()
    with monkeypatch.context() as env:
        env.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        try:
            yield
        finally:
            vllm.envs.disable_envs_cache()
