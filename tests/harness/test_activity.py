"""Never silent for long: a step without requests shows a status once it takes seconds, and a fast one none."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from genderprobe import steps
from genderprobe.outputs.activity import shown

SRC = str(Path(__file__).resolve().parents[2] / "src")


class Recorded:
    """A display that keeps what it is given."""

    redraws = False

    def __init__(self):
        self.lines: list[str] = []
        self.hidden = 0

    def show(self, text: str) -> None:
        self.lines.append(text)

    def hide(self) -> None:
        self.hidden += 1

    done = show


def test_a_status_line_counts_and_estimates_what_is_left():
    outer, inner = steps.Step("planning demet"), steps.Step("simulating runs of 20", total=1000, unit="runs")
    outer.started -= 12
    inner.started -= 4
    inner.done = 400
    assert steps.status_line([outer, inner], time.monotonic()) == \
        "planning demet · simulating runs of 20… 400 of 1,000 runs, 12 s, ETA 6 s"


def test_a_slow_step_is_shown_every_few_seconds_and_ends_with_its_time():
    display = Recorded()
    with shown(display, after=0.3, every=0.3):
        with steps.step("quick"):
            time.sleep(0.05)
        with steps.step("computing bootstrap intervals", total=10, unit="resamples") as s:
            for _ in range(10):
                time.sleep(0.12)
                s.advance()
    assert not any(line.startswith("quick") for line in display.lines)
    counted = [line for line in display.lines if "of 10 resamples" in line]
    assert len(counted) >= 2 and counted[0].startswith("computing bootstrap intervals… ")
    assert display.lines[-1].startswith("computing bootstrap intervals: done in ")


def test_a_step_that_fails_is_not_said_done():
    display = Recorded()
    with pytest.raises(RuntimeError), shown(display, after=0.1, every=0.1), steps.step("bootstrapping"):
        time.sleep(0.5)
        raise RuntimeError("stopped")
    assert display.lines and not any("done" in line for line in display.lines)
    assert steps.on_end is None and steps.shown_steps() == []


def test_while_a_runner_asks_only_the_steps_inside_the_asking_are_shown():
    display = Recorded()
    with shown(display, after=0.2, every=0.2), steps.step("preparing the prompts") as working:
        ask = steps.QuietWhileAsking(lambda requests: time.sleep(0.6) or requests, working, "computing metrics")
        ask([1])
        assert display.lines == []  # the request progress had the floor
        with steps.asking(), steps.step("generating 8 answers on local weights", total=64, unit="token steps"):
            time.sleep(0.5)
        assert working.what == "computing metrics"
    assert any(line.startswith("generating 8 answers on local weights… 0 of 64 token steps") for line in display.lines)
    assert not any("preparing" in line or line.startswith("computing") for line in display.lines)


def test_without_a_display_steps_print_nothing_and_cost_next_to_nothing():
    started = time.perf_counter()
    for _ in range(10_000):
        with steps.step("tiny"):
            steps.advance()
    assert (time.perf_counter() - started) / 10_000 < 50e-6  # per step, on a loaded machine
    assert steps.shown_steps() == []


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "GENDERPROBE_CACHE_DIR": str(cwd / "cache")}
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "genderprobe", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)


def test_plan_shows_its_simulations_on_a_piped_standard_error(tmp_path):
    """A plan of seconds (300 simulated runs per size tried, four sizes) prints plain status lines with its
    count of simulated runs, and its plan on standard output as before; a plan asked as JSON prints no status."""
    done = _cli("plan", "demet", "--detect", "0.1", "--simulations", "300", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    status = done.stderr.splitlines()
    assert any(line.startswith("planning demet · simulating runs of ") and " of 300 runs, " in line
               for line in status), done.stderr
    assert status[-1].startswith("planning demet: done in ") and "simulated power" in done.stdout
    quiet = _cli("plan", "relationship-levy", "--detect", "0.2", "--simulations", "200", "--json", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout.startswith("{")


def test_a_fast_run_prints_no_status(tmp_path):
    done = _cli("run", "relationship-levy", "--model", "reference:random", "--sample-k", "20", "--out",
                str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stderr and done.stderr.startswith("requests 40/40"), done.stderr


def test_a_notebook_shows_a_slow_step_in_place(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed: pip install -e '.[dev]'")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed: pip install -e '.[dev]'")
    cells = [
        "import os, sys, time\n"
        f"sys.path.insert(0, {SRC!r})\n"
        f"os.environ['GENDERPROBE_CACHE_DIR'] = {str(tmp_path)!r}\n"
        "from genderprobe import run_probe, steps",
        # A generate= function whose model loads for 3 s before it answers: a step of its own.
        "def slow_b(prompts):\n"
        "    with steps.step('loading my model', total=3, unit='parts') as s:\n"
        "        for _ in range(3):\n"
        "            time.sleep(1)\n"
        "            s.advance()\n"
        "    return ['(b)' for _ in prompts]\n"
        "out = run_probe('relationship-levy', generate=slow_b, sample_k=10)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    lines = [o.get("data", {}).get("text/plain", "") for o in notebook.cells[1].outputs]
    assert any(line.startswith("loading my model: done in 3 s") for line in lines), lines
    assert any(line.startswith("requests 20/20 (100%)") for line in lines), lines


def test_a_piped_progress_line_goes_on_while_no_answer_arrives():
    """A server that answers nothing for minutes: the log still gets a line every few seconds, and none
    once the progress stops."""
    import io
    import time

    from rich.console import Console

    from genderprobe.outputs.terminal import Progress

    out = io.StringIO()
    progress = Progress(Console(file=out, width=200), every=0.2)
    progress.expect(10)
    time.sleep(0.9)
    waiting = out.getvalue().splitlines()
    assert len(waiting) >= 2 and all(line.startswith("requests 0/10") for line in waiting)
    progress.stop()
    stopped = len(out.getvalue().splitlines())
    time.sleep(0.5)
    assert len(out.getvalue().splitlines()) == stopped
