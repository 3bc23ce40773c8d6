"""inspect_evals 0.26.0's own code as the reference of the StereoSet and BBQ parity tests (issue 49).

inspect_evals pins its own inspect_ai and the Hugging Face stack, so it lives in a virtual
environment of its own, made once and kept under
``~/.cache/genderprobe/parity-venv/inspect-evals-0.26.0-pyX.Y`` (``GENDERPROBE_INSPECT_EVALS_VENV`` names
another folder); nothing of it touches genderprobe's environment. The test hands it the contexts and
the answers of a run and reads back what inspect_evals' own task, solvers, scorers and metrics make
of them (``tests/inspect_evals_driver.py`` and ``tests/inspect_evals_bbq_driver.py`` run inside it).

Make it ahead of the tests (CI does)::

    python3 tests/inspect_evals_parity.py --install

A test that needs it and finds it missing is skipped, except under CI or with
``GENDERPROBE_PARITY_REQUIRED=1``, where the test makes it and fails where it cannot be made.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

PACKAGE = "inspect-evals==0.26.0"
KEY = f"inspect-evals-0.26.0-py{sys.version_info.major}.{sys.version_info.minor}"
DRIVER = Path(__file__).with_name("inspect_evals_driver.py")
BBQ_DRIVER = Path(__file__).with_name("inspect_evals_bbq_driver.py")


class Unavailable(RuntimeError):
    """inspect_evals' environment cannot be made here; the message says why."""


def venv_dir() -> Path:
    env = os.environ.get("GENDERPROBE_INSPECT_EVALS_VENV")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "genderprobe" / "parity-venv" / KEY


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _ready(venv: Path) -> bool:
    try:
        return json.loads((venv / "ready.json").read_text())["key"] == KEY and _python(venv).exists()
    except (OSError, ValueError, KeyError):
        return False


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-12:])
        raise Unavailable(f"{what} failed (exit {done.returncode}):\n{tail}")


def ensure_venv(*, make: bool = True) -> Path:
    """The environment, made on first use (one maker at a time), or with ``make`` False only found."""
    venv = venv_dir()
    if _ready(venv):
        return venv
    if not make:
        raise Unavailable(f"not made yet (python3 tests/inspect_evals_parity.py --install makes it in {venv})")
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _ready(venv):
            return venv
        # Made beside its place and moved there whole, so a half-made one is never used.
        work = Path(tempfile.mkdtemp(prefix=f"{venv.name}.", dir=venv.parent))
        try:
            base = getattr(sys, "_base_executable", None) or sys.executable
            _run([base, "-m", "venv", str(work)], "making the virtual environment")
            _run([str(_python(work)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", PACKAGE],
                 f"pip install {PACKAGE}")
            (work / "ready.json").write_text(json.dumps({"key": KEY, "packages": [PACKAGE]}))
            if venv.exists():
                shutil.rmtree(venv)
            work.rename(venv)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return venv


def require() -> Path:
    """The environment for a test: skipped where it is not made; under CI or GENDERPROBE_PARITY_REQUIRED=1
    made if missing, and the test fails where it cannot be made."""
    import pytest

    required = bool(os.environ.get("CI") or os.environ.get("GENDERPROBE_PARITY_REQUIRED"))
    try:
        return ensure_venv(make=required)
    except Unavailable as exc:
        if required:
            pytest.fail(f"inspect_evals' environment is needed and cannot be made: {exc}")
        pytest.skip(f"inspect_evals' environment: {exc}")


def _drive(venv: Path, driver: Path, job: Any) -> Any:
    """``driver`` run in inspect_evals' environment on ``job`` (JSON in, JSON out)."""
    done = subprocess.run([str(_python(venv)), str(driver)], input=json.dumps(job),
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"inspect_evals' driver failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout)


def score_stereoset(venv: Path, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """inspect_evals' StereoSet task on each run's records (see tests/inspect_evals_driver.py): its messages,
    scores and metrics. One process for all runs: starting inspect_evals costs seconds."""
    return _drive(venv, DRIVER, runs)


def score_bbq(venv: Path, data: Path, answers: dict[str, str]) -> dict[str, Any]:
    """inspect_evals' bbq task (Gender_identity, loaded from ``data``) on the answers by sample id (see
    tests/inspect_evals_bbq_driver.py): the ids it loaded, each answered sample's messages, marked letter and
    score, and its scorer's metrics."""
    return _drive(venv, BBQ_DRIVER, {"data": str(data), "answers": answers})


if __name__ == "__main__":
    if sys.argv[1:] != ["--install"]:
        sys.exit("usage: python3 tests/inspect_evals_parity.py --install")
    try:
        print(ensure_venv())
    except (Unavailable, OSError) as exc:
        sys.exit(f"inspect_evals' environment cannot be made: {exc}")
