"""GenderBench runs of BusinessVocabulary's parity tests, all in one process.

The shared driver's worker (tests/genderbench_parity.py) cannot send BusinessVocabularyProbe's
evaluations, dicts of numpy arrays, as JSON; so these runs go through ``genderbench_counts_driver.py
runs`` instead, every registered run (:func:`register`, when a parity module is collected) in one
process, since starting GenderBench's environment and importing it costs seconds. Imported as
``studies.business_vocabulary.genderbench_batch``.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from genderbench_parity import GenderBenchRun, ensure_venv

DRIVER = Path(__file__).with_name("genderbench_counts_driver.py")
_REGISTERED: dict[str, Callable[[], dict[str, Any]]] = {}
_DONE: dict[str, GenderBenchRun] = {}
_INVENTORIES: list[dict] = []


def register(key: str, request: Callable[[], dict[str, Any]]) -> None:
    """A run, by a key unique across modules; ``request`` builds the shared driver's ``run`` request."""
    _REGISTERED[key] = request


def _run_all() -> None:
    keys = [k for k in _REGISTERED if k not in _DONE]
    venv = ensure_venv()
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "request.json", Path(tmp) / "result.json"
        src.write_text(json.dumps({"runs": [_REGISTERED[k]() for k in keys]}))
        env = {**os.environ, "NLTK_DATA": str(venv / "nltk_data"), "GENDER_BENCH_LOG_DIR": str(Path(tmp) / "logs")}
        done = subprocess.run([str(venv / "bin" / "python"), str(DRIVER), "runs", str(src), str(out)],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"GenderBench's driver failed:\n{done.stderr[-4000:]}")
        result = json.loads(out.read_text())
    for key, run in zip(keys, result["runs"]):
        _DONE[key] = GenderBenchRun(run["attempts"], run["evaluations"], run["metrics"],
                                    {k: tuple(v) for k, v in run["intervals"].items()}, run["marks"])
    _INVENTORIES[:] = [result["inventories"]]


def genderbench(key: str) -> GenderBenchRun:
    """GenderBench's run registered as ``key``."""
    if key not in _DONE:
        _run_all()
    return _DONE[key]


def word_lists() -> dict:
    """The word lists GenderBench's BusinessVocabularyProbe builds."""
    if not _INVENTORIES:
        _run_all()
    return _INVENTORIES[0]
