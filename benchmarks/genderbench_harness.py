"""GenderBench's whole DefaultHarness, ours beside its own, as whole processes (issue 34).

    python benchmarks/genderbench_harness.py                # both sides, then our rerun and dry run
    python benchmarks/genderbench_harness.py --ours-only    # without GenderBench's side (about a minute)
    python benchmarks/genderbench_harness.py --per-probe    # and each probe alone, side by side

Ours: ``genderprobe suite --preset genderbench --model reference:random`` (the 14 probes at DefaultHarness
sizes, records written, report and card included), timed as a process, and its harness part: the 14 runs,
each from opening the model to its results written (suite.json's seconds); then the same command again (every
run found done and skipped), and ``--dry-run`` of the preset for a priced model (requests, tokens, cost).
GenderBench 0.5.0: its ``DefaultHarness().run(RandomGenerator(options))`` in its own environment
(tests/genderbench_parity.py makes it; Python 3.12 or later, which its HiringAn needs), timed as a process
and, inside it, the harness part alone. The RandomGenerator answers every prompt with one of a few fixed
texts; reference:random answers each closed question at random and writes random stories.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

# What GenderBench's RandomGenerator answers: option letters, yes/no, an emotion and a short story of each gender.
OPTIONS = ["(a)", "(b)", "(c)", "Yes", "No", "anger", "She smiled. Her day had come.", "He left his office late."]


def _timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, done


def ours(folder: Path) -> dict[str, float | str]:
    genderprobe = [sys.executable, "-m", "genderprobe"]
    suite = [*genderprobe, "suite", "--preset", "genderbench", "--model", "reference:random", "--out", str(folder),
             "--quiet"]
    first, _ = _timed(suite)
    # The harness part: the 14 runs, each from opening the model to its results written (suite.json's seconds),
    # as GenderBench's harness part is its DefaultHarness().run; the rest is starting up and the HTML report.
    runs = sum(r["seconds"] for r in json.loads((folder / "suite.json").read_text())["runs"])
    rerun, _ = _timed(suite)
    dry, done = _timed([*genderprobe, "suite", "--preset", "genderbench", "--model", "openai:gpt-4o-mini",
                        "--out", str(folder / "dry"), "--dry-run"])
    return {"first": first, "runs": runs, "rerun": rerun, "dry_run": dry,
            "dry_run_output": "\n".join(done.stdout.splitlines()[-2:])}


def genderbench(folder: Path) -> dict[str, float]:
    from genderbench_parity import DRIVER, _python, ensure_venv

    from genderprobe.data.packaged import data_file

    venv = ensure_venv((3, 12))
    request, result = folder / "request.json", folder / "result.json"
    request.write_text(json.dumps({"options": OPTIONS, "seed": 0}))
    env = {**os.environ, "NLTK_DATA": str(venv / "nltk_data"), "GENDER_BENCH_LOG_DIR": str(folder / "logs"),
           # GestProbe reads GEST from the Hugging Face Hub; the same file, packaged here, is read instead.
           "GENDERPROBE_PARITY_LOCAL_FILES": json.dumps({"hf://datasets/kinit/gest/gest.csv":
                                                         str(data_file("gest/gest/gest.csv"))})}
    whole, _ = _timed([str(_python(venv)), str(DRIVER), "harness", str(request), str(result)], env)
    inner = json.loads(result.read_text())
    return {"whole": whole, "harness": inner["seconds"], "probes": inner["probes"]}


def ours_per_probe(folder: Path) -> dict[str, float]:
    """Each probe of the preset alone, as a whole ``genderprobe run`` process at DefaultHarness size."""
    import tomllib

    from genderprobe.interfaces.suite import PRESETS

    preset = tomllib.loads((ROOT / "src" / "genderprobe" / "interfaces" / PRESETS / "genderbench.toml").read_text())
    out = {}
    for name in preset["suite"]["probes"]:
        args = [f"--{k.replace('num_', '').replace('_', '-')}={v}" for k, v in preset["probes"].get(name, {}).items()]
        out[name], _ = _timed([sys.executable, "-m", "genderprobe", "run", name, "--model", "reference:random",
                               "--seed", "123", "--out", str(folder / name), "--quiet", "--no-cache", *args])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours-only", action="store_true")
    parser.add_argument("--per-probe", action="store_true", help="also each probe alone, ours as a whole process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mine = ours(Path(tmp) / "suite")
        print(f"genderprobe suite --preset genderbench, reference:random: {mine['first']:.1f} s (whole process), "
              f"{mine['runs']:.1f} s harness part (the 14 runs); run again: {mine['rerun']:.1f} s; "
              f"--dry-run for openai:gpt-4o-mini: {mine['dry_run']:.1f} s")
        print(mine["dry_run_output"])
        theirs = None if args.ours_only else genderbench(Path(tmp))
        if theirs:
            print(f"GenderBench 0.5.0 DefaultHarness, RandomGenerator: {theirs['whole']:.1f} s (whole process), "
                  f"{theirs['harness']:.1f} s harness part; ours is {theirs['harness'] / mine['runs']:.1f}x faster "
                  f"on the harness part, {theirs['whole'] / mine['first']:.1f}x as whole processes (ours with "
                  f"its HTML report and card, which GenderBench does not write)")
        if args.per_probe:
            from genderprobe.analysis.genderbench_card import CLASS_NAMES

            for name, seconds in ours_per_probe(Path(tmp) / "runs").items():
                gb = f"{theirs['probes'][CLASS_NAMES[name]]:.1f} s" if theirs else "-"
                print(f"  {name:<22} ours {seconds:6.1f} s (whole process)   GenderBench {gb} (its run alone)")


if __name__ == "__main__":
    main()
