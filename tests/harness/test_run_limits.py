"""Bounds on a run's work, arguments that are not UTF-8, and warnings under --quiet.

``--repetitions 1000000000`` was accepted (3.5 GB of memory in 30 s) and its
``--dry-run`` still ran after 120 s; a non-UTF-8 ``--system-prompt`` ended in a
traceback; ``--quiet`` dropped the end-of-run warnings with the summary.
"""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from genderprobe.errors import UserError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main


def cli(*args):
    return CliRunner().invoke(main, list(args))


def test_a_run_above_the_request_limit_stops_before_building_a_prompt():
    started = time.monotonic()
    result = cli("run", "relationship-levy", "--model", "reference:random", "--repetitions", "1000000000",
                 "--quiet")
    assert time.monotonic() - started < 10
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert "6,000,000,000,000 requests" in result.output and "--max-requests" in result.output


def test_a_dry_run_counts_without_building_the_prompts():
    started = time.monotonic()
    result = cli("run", "relationship-levy", "--model", "reference:random", "--repetitions", "1000000000",
                 "--dry-run")
    assert time.monotonic() - started < 10
    assert result.exit_code == 0, result.output
    assert "6,000,000,000,000 requests, above the limit of 40,000,000" in result.output


def test_the_limit_is_the_users_to_raise():
    base = ("run", "relationship-levy", "--model", "reference:random", "--sample-k", "60", "--quiet", "--no-cache")
    assert cli(*base, "--max-requests", "100").exit_code == 2  # 120 requests
    assert cli(*base, "--max-requests", "120").exit_code == 0
    assert cli(*base, "--max-requests", "0").exit_code == 2


def test_a_probe_that_cannot_count_ahead_is_held_to_the_limit_before_sending():
    """genmo's rounds depend on its answers: the runner stops the first list above the limit."""
    result = cli("run", "genmo", "--model", "reference:random", "--sample-k", "60", "--max-requests", "100",
                 "--quiet")
    assert result.exit_code == 2
    assert "more than 100 requests" in result.output and "Traceback" not in result.output


def test_an_argument_that_is_not_utf8_is_one_sentence():
    # Python reads a non-UTF-8 argument as a string with lone surrogates (surrogateescape).
    result = cli("run", "relationship-levy", "--model", "reference:random", "--sample-k", "5",
                 "--system-prompt", "Be brief\udcff", "--quiet")
    assert result.exit_code == 2
    assert result.output.startswith("Error: The argument 'Be brief\\xff' is not UTF-8 text")
    assert result.output.count("\n") == 1


def test_a_prompt_that_is_not_unicode_is_one_sentence_in_python_too(tmp_path):
    with pytest.raises(UserError, match="not valid Unicode"):
        run_probe("relationship-levy", generate=lambda prompts: ["(a)"] * len(prompts), model="function:a",
                  config=RunConfig(cache_dir=tmp_path, system_prompt="Be brief\udcff"), sample_k=5)


def test_quiet_keeps_the_warnings_at_the_end():
    result = cli("run", "relationship-levy", "--model", "reference:random", "--sample-k", "5", "--quiet",
                 "--no-cache")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Warning: sample_k 5 covers 1 of 8 topics")
    assert "Metrics" not in result.output and "Counts:" not in result.output  # the summary stays quiet
    # ... but not what limits the numbers: five items are too few for an interval.
    assert "Validity: FAIL sample: diff_success_rate rests on 5 answers" in result.output


def test_a_dry_run_of_a_probe_that_cannot_count_ahead_stops_at_the_limit_too():
    result = cli("run", "genmo", "--model", "reference:random", "--sample-k", "60", "--max-requests", "100",
                 "--dry-run")
    assert result.exit_code == 2
    assert "more than 100 requests" in result.output and "Traceback" not in result.output
