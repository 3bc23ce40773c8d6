"""A full disk never costs an answer, and is not blamed on the store.

A run whose store filled its disk used to stop with exit 2 and "not a
readable genderprobe store ... move it aside" while the store was sound,
losing the answers of its last half second (955 in one trial); a full disk
under --out ended in a traceback. Now the answers go to a spill file, the run
stops with exit 1 and one sentence naming the disk, and the next run takes the
spill file in first and asks only for what was never answered.

The disk is a real small one: a 192 KiB tmpfs mounted here when the tests run
as root and may mount (CI). Otherwise, and always as a second case, the run
gets a file-size limit (RLIMIT_FSIZE) in its own process: every write past it
fails with EFBIG from the kernel, as a write to a full disk fails with ENOSPC.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
from instruments import fake_key

from genderprobe.engine.spill import COLUMNS
from genderprobe.models.base import last_user_turn
from genderprobe.testing import OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs
from genderprobe.testing.quick_runs import start_run

quiet_aiohttp_logs()

KEY = fake_key("full-disk-key-3c1e")
SAMPLE_K = 150  # 300 prompts


@contextmanager
def small_disk(folder: Path, size: str):
    """A tmpfs of ``size`` at ``folder``, or a skip where this process may not mount one."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.strip() or mounted.returncode})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def command(server, cache, out, *extra) -> list[str]:
    return ["run", "relationship-levy", "--model", "openai:disk-test", "--base-url", server.base_url,
            "--sample-k", str(SAMPLE_K), "--concurrency", "8", "--resamples", "20", "--cache-dir", str(cache),
            "--out", str(out), "--quiet", *extra]


def kept_prompts(cache: Path, out: Path) -> Counter[str]:
    """The prompts whose answers the store or a spill file (beside it or in --out) holds."""
    kept: Counter[str] = Counter()
    with sqlite3.connect(f"file:{cache / 'responses.sqlite3'}?mode=ro", uri=True) as db:
        requests = [json.loads(r) for (r,) in db.execute("SELECT request FROM responses")]
    for folder in (cache, out):
        for spill in folder.glob("genderprobe-spill-*.jsonl"):
            lines = spill.read_text().splitlines()[1:]
            requests += [json.loads(dict(zip(COLUMNS, json.loads(line).values()))["request"]) for line in lines]
    for request in requests:
        kept[last_user_turn([tuple(m) for m in request["messages"]])] += 1
    return kept


def run_out_of_room(server, cache, out, log, *, file_size_limit=None):
    run = start_run(command(server, cache, out), env={"OPENAI_API_KEY": KEY}, log=log,
                    file_size_limit=file_size_limit)
    run.join(120)
    said = log.read_text()
    assert run.exitcode == 1, said
    assert "Traceback" not in said and "not a readable" not in said
    error = [line for line in said.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and f"the disk holding {cache}" in error[0], said
    assert "which the next run takes in first" in error[0]
    return said


def check_nothing_lost_and_resume(server, cache, out, log):
    answered = Counter(server.answered)
    assert 0 < sum(answered.values()) < 2 * SAMPLE_K  # it stopped part way
    kept = kept_prompts(cache, out)
    assert all(kept[prompt] >= n for prompt, n in answered.items())  # every answer sent is kept
    # Room again: the rerun takes the spill in first and asks only for what was never answered.
    server.reset_counts()
    run = start_run(command(server, cache, out), env={"OPENAI_API_KEY": KEY}, log=log)
    run.join(120)
    assert run.exitcode == 0, log.read_text()
    assert server.total_requests == 2 * SAMPLE_K - sum(answered.values())
    assert not list(cache.glob("genderprobe-spill-*")) and not list(out.glob("genderprobe-spill-*"))


def test_a_full_tmpfs_under_the_store_costs_no_answer(tmp_path):
    with OpenAITestServer(api_key=KEY, latency=0.01) as server, small_disk(tmp_path / "disk", "192k") as cache:
        out = tmp_path / "out"
        run_out_of_room(server, cache, out, tmp_path / "run.log")
        subprocess.run(["mount", "-o", "remount,size=16m", str(cache)], check=True)
        check_nothing_lost_and_resume(server, cache, out, tmp_path / "run.log")


def test_a_file_size_limit_under_the_store_costs_no_answer(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    with OpenAITestServer(api_key=KEY, latency=0.01) as server:
        run_out_of_room(server, cache, out, tmp_path / "run.log", file_size_limit=160_000)
        check_nothing_lost_and_resume(server, cache, out, tmp_path / "run.log")


def test_a_full_disk_under_out_is_one_sentence_and_keeps_the_answers(tmp_path):
    with OpenAITestServer(api_key=KEY, latency=0.0) as server, small_disk(tmp_path / "disk", "64k") as out:
        cache, log = tmp_path / "cache", tmp_path / "run.log"
        run = start_run(command(server, cache, out, "--sample-k", "300"), env={"OPENAI_API_KEY": KEY}, log=log)
        run.join(120)
        said = log.read_text()
        assert run.exitcode == 1, said
        assert "Traceback" not in said and f"the disk holding {out}" in said and "kept in the store" in said
        answered = sum(server.answered.values())
        server.reset_counts()
        subprocess.run(["mount", "-o", "remount,size=16m", str(out)], check=True)
        run = start_run(command(server, cache, out, "--sample-k", "300"), env={"OPENAI_API_KEY": KEY}, log=log)
        run.join(120)
        assert run.exitcode == 0, log.read_text()
        assert server.total_requests == 600 - answered
