"""A store filled before the one-folder-per-study layout still answers every run.

tests/store_before_layout/ holds a response store filled by make.py at the
commit before the move, and what each run reported then. Replayed now, every
run must find every answer (zero requests reach the model) and report the same
metrics, counts, losses and data-file versions: the move changed no cache key,
no prompt and no result.

Issue 30 changed some results on purpose, and runs.json holds the new values
for them only: Fifty Shades' pearson_r and mse (and their breakdowns) and the
pronouns' disparate impacts count the answers they rest on in ``n``; the
dialogue's rates have Wilson intervals; its counts gained ``stopped_early``.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parent / "store_before_layout"
sys.path.insert(0, str(FIXTURE))

from runs import RUNS, replay  # noqa: E402

SAVED = json.loads((FIXTURE / "runs.json").read_text(encoding="utf-8"))
# Options added since the fixture was made: at their defaults they must be off (None).
ADDED_SINCE = {"reader_judge", "reader_judge_sample", "words_k", "scenario_order", "null_baseline"}
# Metrics added since, beside the paper's (which must be unchanged): any value.
METRICS_ADDED_SINCE = {"diff_abs_success_rate_folded", "diff_success_rate_cluster", "mixed_gender_bias_folded"}


def _same(now, then, where: str = "") -> None:
    """Equal, with floats equal to 1e-9 relative (bootstrap sums may round apart across numpy builds)."""
    if isinstance(then, float) or isinstance(now, float):
        if isinstance(then, float) and math.isnan(then):
            assert isinstance(now, float) and math.isnan(now), where
        else:
            assert now == pytest.approx(then, rel=1e-9, abs=1e-12), where
    elif isinstance(then, dict):
        assert isinstance(now, dict), where
        added = set(now) - set(then)
        if where.endswith(".metrics"):
            added -= METRICS_ADDED_SINCE
        assert added <= ADDED_SINCE and all(now[k] is None for k in added), f"{where}: new keys {added}"
        kept = set(now) - added - (METRICS_ADDED_SINCE if where.endswith(".metrics") else set())
        assert kept == set(then), f"{where}: keys {set(now) ^ set(then)}"
        for k in then:
            _same(now[k], then[k], f"{where}.{k}")
    elif isinstance(then, list):
        assert isinstance(now, list) and len(now) == len(then), where
        for i, (a, b) in enumerate(zip(now, then)):
            _same(a, b, f"{where}[{i}]")
    else:
        assert now == then, where


def test_the_fixture_covers_every_run():
    assert [s["run"] for s in SAVED] == json.loads(json.dumps(RUNS))


@pytest.mark.parametrize("index", range(len(RUNS)), ids=[f"{r['probe']}-{i}" for i, r in enumerate(RUNS)])
def test_a_run_against_the_old_store_sends_nothing_and_reports_the_same(tmp_path, index):
    shutil.copy(FIXTURE / "responses.sqlite3", tmp_path / "responses.sqlite3")
    then = dict(SAVED[index]["result"])
    now = replay(RUNS[index], tmp_path, answering=False)
    sent_then, run = then.pop("run")["sent"], now.pop("run")
    assert run["sent"] == 0 and run["errors"] == 0
    assert run["cached"] == run["requests"] == sent_then
    # A probe's own warnings (its results' extra.warnings) have joined the run's warnings since.
    own = now.pop("own_warnings")
    now["warnings"] = [w for w in now["warnings"] if w not in own or w in then["warnings"]]
    _same(now, then, RUNS[index]["probe"])
