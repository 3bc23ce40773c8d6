"""vLLM's engine in the test's own process, for tiny-model tests whose point is not vLLM's processes.

By default vLLM starts its engine core and, on a CPU, its executor as two more processes, each
importing vLLM and torch again: most of a tiny model's engine start-up on a small machine. Not for
real models: in this process, without the executor's threads bound to cores, SmolLM2's answers took
longer than the start-up saved (tests/harness/test_real_model.py's engine: 121 s of CPU in vLLM's
processes, 150 s in one). The default path still runs in test_vllm.py (the command line),
test_ray.py (the workers' engines) and test_real_model.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def engine_in_this_process() -> Iterator[None]:
    """Engines started inside the block run in this process."""
    import torch
    import vllm.envs

    # An engine freezes vLLM's settings in its process: they are read anew before and after.
    vllm.envs.disable_envs_cache()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        # vLLM's CPU worker turns torch.set_num_threads into a warning (its threads are bound to cores
        # in a process of its own): later tests in this process set their threads again.
        env.setattr(torch, "set_num_threads", torch.set_num_threads)
        try:
            yield
        finally:
            vllm.envs.disable_envs_cache()
