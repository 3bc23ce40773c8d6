"""Small edges an attack on the answer store found, each one sentence now.

A store that is a symlink to /dev/null was blamed on a full disk ("free some space", 70 GB
free); an immutable store left empty -wal/-shm files beside it; --out /dev/full said "File
exists"; the exit-code help spoke of "too many failed or empty answers" where a run with 19%
empty answers exits 0 (the bound is more than half, and the help now says so).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.interfaces.cli import main
from genderprobe.testing import OpenAITestServer

KEY = fake_key("store-edges-key-51b0")


def run(server, cache, out, *extra):
    args = ["run", "relationship-levy", "--model", "openai:edges", "--base-url", server.base_url, "--sample-k",
            "5", "--resamples", "20", "--cache-dir", str(cache), "--out", str(out), "--quiet", *extra]
    return CliRunner().invoke(main, args, env={"OPENAI_API_KEY": KEY})


def one_error(result) -> str:
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def test_a_store_that_leads_to_a_device_is_named_as_such(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "responses.sqlite3").symlink_to("/dev/null")
    with OpenAITestServer(api_key=KEY) as server:
        result = run(server, cache, tmp_path / "out")
        assert result.exit_code == 2
        error = one_error(result)
        assert "leads to /dev/null, a device or other special file" in error and "free some space" not in error
        assert server.total_requests == 0


def test_an_immutable_store_leaves_nothing_beside_it(tmp_path):
    cache = tmp_path / "cache"
    with OpenAITestServer(api_key=KEY) as server:
        assert run(server, cache, tmp_path / "out").exit_code == 0
        store = cache / "responses.sqlite3"
        before = sorted(p.name for p in cache.iterdir())
        made = subprocess.run(["chattr", "+i", str(store)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"cannot make a file immutable here ({made.stderr.strip()})")
        try:
            server.reset_counts()
            result = run(server, cache, tmp_path / "out", "--sample-k", "6")
            assert result.exit_code == 2 and "cannot be written by this user (the file is read-only)" in one_error(result)
            assert run(server, cache, tmp_path / "out").exit_code == 0  # every answer is in it: read from there
            assert sorted(p.name for p in cache.iterdir()) == before  # no -wal, no -shm
            assert server.total_requests == 0
        finally:
            subprocess.run(["chattr", "-i", str(store)], check=True)


@pytest.mark.parametrize("out", ["/dev/full", "/dev/null"])
def test_an_out_that_is_a_device_is_one_sentence(tmp_path, out):
    """click refuses a regular file as --out itself; a device passed its check and mkdir said "File exists"."""
    with OpenAITestServer(api_key=KEY) as server:
        result = run(server, tmp_path / "cache", out)
        assert result.exit_code == 2
        assert one_error(result) == f"Error: --out {out} is not a folder; choose a folder (it is made if missing)."
        assert server.total_requests == 0


def test_the_exit_code_help_says_where_empty_answers_fail_a_run(tmp_path):
    assert "more than half the answers empty" in CliRunner().invoke(main, ["run", "--help"]).output
    with OpenAITestServer(api_key=KEY, faults={"empty": 0.2}, seed=4) as server:
        result = run(server, tmp_path / "cache", tmp_path / "out", "--sample-k", "20")
        assert result.exit_code == 0, result.output  # some empty answers: reported, asked again next run
        server.faults.set_rates({"empty": 0.7}, seed=4)
        result = run(server, tmp_path / "cache2", tmp_path / "out", "--sample-k", "20")
        assert result.exit_code == 1 and "answers of openai:edges were empty" in one_error(result)


HOT_JOURNAL = """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA cache_size=1")  # pages go to the file before the commit, their old copies to the journal
db.execute("BEGIN IMMEDIATE")
db.execute("CREATE TABLE filler (x)")
db.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,)] * 200)
os._exit(0)  # as kill -9 mid-write: the journal stays, hot
"""


def test_a_store_whose_first_run_was_killed_mid_write_is_recovered_not_refused(tmp_path):
    """A kill -9 while a new store was being made left a hot journal; the read-only look every
    later run takes first could not roll it back and refused the store 'for writing' for good."""
    cache = tmp_path / "cache"
    cache.mkdir()
    subprocess.run([sys.executable, "-c", HOT_JOURNAL, str(cache / "responses.sqlite3")], check=True)
    assert (cache / "responses.sqlite3-journal").stat().st_size > 0
    with OpenAITestServer(api_key=KEY) as server:
        result = run(server, cache, tmp_path / "out")
        assert result.exit_code == 0, result.output
        assert server.total_requests == 10
    assert not (cache / "responses.sqlite3-journal").exists()
