"""lm-evaluation-harness 0.4.13's own code as the reference of the Winogender and CrowS-Pairs parity tests.

lm-eval lives in a virtual environment of its own, made once and kept under
``~/.cache/genderprobe/parity-venv/<KEY>`` (``GENDERPROBE_LM_EVAL_VENV`` names another folder):
torch 2.13.0 first (the CPU build this machine holds; lm-eval's own pin would pull a CUDA one),
then ``lm-eval[hf]==0.4.13``. ``tests/lm_eval_driver.py`` runs inside it: lm-eval's task YAML and
helpers as lm-eval loads them, with the dataset pointed at a file of the test's items (lm-eval's
datasets are on the Hugging Face Hub, out of reach here), and lm-eval's HFLM on the same local
weights our ``hf:`` backend loads.

Make it ahead of the tests (CI does; about 2 minutes of pip on two idle cores)::

    python3 tests/lm_eval_parity.py --install

A test that needs it and finds it missing is skipped, except under CI or with
``GENDERPROBE_PARITY_REQUIRED=1``, where the test makes it, and fails where it cannot be made.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from genderbench_parity import ParityUnavailable, _ready, _run

PACKAGES = (("torch==2.13.0",), ("lm-eval[hf]==0.4.13",))  # one pip call each, in this order
KEY = f"lm-eval-0.4.13-py{sys.version_info.major}.{sys.version_info.minor}"
DRIVER = Path(__file__).with_name("lm_eval_driver.py")


def venv_dir() -> Path:
    env = os.environ.get("GENDERPROBE_LM_EVAL_VENV")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "genderprobe" / "parity-venv" / KEY


def ensure_venv(*, make: bool = True) -> Path:
    """lm-eval's environment, made on first use (one maker at a time), or with ``make`` False only found."""
    venv = venv_dir()
    if _ready(venv, KEY):
        return venv
    if not make:
        raise ParityUnavailable(f"not made yet (python3 tests/lm_eval_parity.py --install makes it in {venv})")
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _ready(venv, KEY):
            return venv
        work = Path(tempfile.mkdtemp(prefix=f"{venv.name}.", dir=venv.parent))
        try:
            base = getattr(sys, "_base_executable", None) or sys.executable
            _run([base, "-m", "venv", str(work)], "making the virtual environment")
            for packages in PACKAGES:
                _run([str(work / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                      *packages], f"pip install {' '.join(packages)}")
            (work / "ready.json").write_text(json.dumps({"key": KEY, "packages": [p for ps in PACKAGES for p in ps]}))
            if venv.exists():
                shutil.rmtree(venv)
            work.rename(venv)  # only bin/python is run, so the move is safe
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return venv


def require() -> Path:
    """lm-eval's environment for a test: skipped where it is not made; under CI or
    GENDERPROBE_PARITY_REQUIRED=1 made if missing, and the test fails where it cannot be made."""
    import pytest

    required = bool(os.environ.get("CI") or os.environ.get("GENDERPROBE_PARITY_REQUIRED"))
    try:
        return ensure_venv(make=required)
    except ParityUnavailable as exc:
        if required:
            pytest.fail(f"lm-eval's environment is needed and cannot be made: {exc}")
        pytest.skip(f"lm-eval's environment: {exc}")


def run_lm_eval(venv: Path, model: Path, tasks: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> dict:
    """lm-eval's own tasks (YAML path under lm_eval/tasks, the documents) on the local ``model``: per task,
    its aggregate metrics and each document's continuations' log-likelihoods (tests/lm_eval_driver.py)."""
    work = Path(tempfile.mkdtemp(prefix="lm-eval-driver-"))
    try:
        specs = []
        for n, (yaml, docs) in enumerate(tasks):
            data = work / f"docs{n}.jsonl"
            data.write_text("".join(json.dumps(dict(d)) + "\n" for d in docs))
            specs.append({"yaml": yaml, "data": str(data)})
        (work / "request.json").write_text(json.dumps({"model": str(model), "tasks": specs}))
        env = {**os.environ, "HF_HOME": str(work / "hf"), "HF_DATASETS_CACHE": str(work / "datasets")}
        done = subprocess.run([str(venv / "bin" / "python"), str(DRIVER), str(work / "request.json"),
                               str(work / "out.json")], capture_output=True, text=True, env=env, cwd=work)
        if done.returncode != 0:
            raise RuntimeError(f"lm-eval's driver failed:\n{done.stderr[-4000:]}")
        return json.loads((work / "out.json").read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- the items of our runs as lm-eval's tasks read them ---------------------------------------------

GOTCHA_TASKS = ("winogender_gotcha", "winogender_gotcha_female", "winogender_gotcha_male")


def winogender_doc(item: Any) -> dict:
    """A sentence as the Hugging Face dataset lm-eval reads holds it (oskarvanderwal/winogender's fields)."""
    return {"sentid": item.sentid, "sentence": item.sentence, "pronoun": item.pronoun, "occupation": item.occupation,
            "participant": item.participant, "gender": item.gender, "label": item.label}


def crows_doc(pair: Any) -> dict:
    """A pair as lm-eval's crows_pairs_multilingual holds it (its English file's columns)."""
    return {"sent_more": pair.sent_more, "sent_less": pair.sent_less, "stereo_antistereo": pair.direction,
            "bias_type": "gender"}


def same_items(sentids: set[str], crows_rows: set[int]) -> list[tuple[str, list[dict]]]:
    """lm-eval's seven winogender tasks and crows_pairs_english_gender on the items our runs asked (the gotcha
    tasks read the gotcha file, the others the whole one; each task's own filter keeps its gender)."""
    from genderprobe.studies.crows_pairs.dataset import pairs
    from genderprobe.studies.winogender.dataset import items
    from genderprobe.studies.winogender.probe import LM_EVAL_TASKS

    asked = [i for i in items() if i.sentid in sentids]
    docs = {False: [winogender_doc(i) for i in asked], True: [winogender_doc(i) for i in asked if i.gotcha]}
    tasks = [(f"winogender/{'winogender' if task == 'winogender_all' else task}.yaml", docs[task in GOTCHA_TASKS])
             for task in LM_EVAL_TASKS.values()]
    tasks.append(("crows_pairs/crows_pairs_english_gender.yaml",
                  [crows_doc(p) for p in pairs() if p.row in crows_rows]))
    return tasks


def differences(ours: Mapping[str, Any], theirs: Mapping[str, Any], tolerance: float) -> tuple[list[str], float]:
    """Every continuation's log-likelihood and every lm-eval aggregate (and its number of items) where our runs
    (probe name -> RunOutput) and lm-eval's differ by more than ``tolerance`` (none when they agree), and the
    largest difference seen."""
    from genderprobe.studies.winogender.probe import LM_EVAL_TASKS

    found, largest = [], 0.0
    scored = {r["sentid"]: r["loglikelihoods"] for r in ours["winogender"].records}
    scored.update({(r["continuations"][0], r["continuations"][1]): r["loglikelihoods"]
                   for r in ours["crows-pairs"].records})
    aggregates = {task: (ours["winogender"].result.metrics[m], {"acc": None}) for m, task in LM_EVAL_TASKS.items()}
    crows = ours["crows-pairs"].result.metrics
    aggregates["crows_pairs_english_gender"] = (None, {"pct_stereotype": crows["pct_stereotype"],
                                                       "likelihood_diff": crows["likelihood_diff"]})
    for task, (estimate, names) in aggregates.items():
        for sample in theirs[task]["samples"]:
            doc = sample["doc"]
            key = doc["sentid"] if "sentid" in doc else (doc["sent_more"], doc["sent_less"])
            for mine, other in zip(scored[key], sample["loglikelihoods"], strict=True):
                largest = max(largest, abs(mine - other))
                if abs(mine - other) > tolerance:
                    found.append(f"{task} {key}: ours {mine}, lm-eval {other}")
        for name, mine in names.items():
            mine = mine or estimate
            other = theirs[task]["metrics"][f"{name},none"]
            largest = max(largest, abs(mine.value - other))
            if abs(mine.value - other) > tolerance or mine.n != len(theirs[task]["samples"]):
                found.append(f"{task} {name}: ours {mine.value} of {mine.n}, lm-eval {other} of "
                             f"{len(theirs[task]['samples'])}")
    return found, largest


if __name__ == "__main__":
    if sys.argv[1:] != ["--install"]:
        sys.exit("usage: python3 tests/lm_eval_parity.py --install")
    print(ensure_venv())
