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

from genderprobe.engine.spill import COLUMNS, RESERVE_BYTES, RESERVE_NAME
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


def spill_files(*folders: Path) -> list[Path]:
    return [f for folder in folders for f in folder.rglob("genderprobe-spill-*.jsonl")]


def kept_prompts(cache: Path, *spill_places: Path) -> Counter[str]:
    """The prompts whose answers the store or a spill file (beside it or in another place) holds."""
    kept: Counter[str] = Counter()
    with sqlite3.connect(f"file:{cache / 'responses.sqlite3'}?mode=ro", uri=True) as db:
        requests = [json.loads(r) for (r,) in db.execute("SELECT request FROM responses")]
    for spill in spill_files(cache, *spill_places):
        lines = spill.read_text().splitlines()[1:]
        requests += [json.loads(dict(zip(COLUMNS, json.loads(line).values()))["request"]) for line in lines]
    for request in requests:
        kept[last_user_turn([tuple(m) for m in request["messages"]])] += 1
    return kept


def environment(tmp_path: Path, name: str) -> dict[str, str]:
    """A run's environment: the user's cache folder is the same for every run, $TMPDIR is the run's own."""
    tmp = tmp_path / f"tmp-{name}"
    tmp.mkdir(exist_ok=True)
    return {"OPENAI_API_KEY": KEY, "GENDERPROBE_CACHE_DIR": str(tmp_path / "user-cache"), "TMPDIR": str(tmp)}


def run_out_of_room(server, cache, out, log, env, *, file_size_limit=None):
    run = start_run(command(server, cache, out), env=env, log=log, file_size_limit=file_size_limit)
    run.join(120)
    said = log.read_text()
    assert run.exitcode == 1, said
    assert "Traceback" not in said and "not a readable" not in said
    error = [line for line in said.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and f"the disk holding {cache}" in error[0], said
    assert "which the next run takes in first" in error[0]
    return said


def check_nothing_lost_and_resume(server, cache, tmp_path, log):
    """Every answer sent is kept; a rerun with another --out and $TMPDIR asks only for what was never answered."""
    answered = Counter(server.answered)
    assert 0 < sum(answered.values()) < 2 * SAMPLE_K  # it stopped part way
    places = [tmp_path / "user-cache", tmp_path / "out", tmp_path / "tmp-first"]
    kept = kept_prompts(cache, *places)
    assert all(kept[prompt] >= n for prompt, n in answered.items())  # every answer sent is kept
    spilled = {json.loads(line)["key"] for f in spill_files(cache, *places) for line in f.read_text().splitlines()[1:]}
    assert spilled and not spill_files(tmp_path / "out", tmp_path / "tmp-first")  # only where every run looks
    server.reset_counts()
    run = start_run(command(server, cache, tmp_path / "other-out"), env=environment(tmp_path, "rerun"), log=log)
    run.join(120)
    assert run.exitcode == 0, log.read_text()
    assert server.total_requests == 2 * SAMPLE_K - sum(answered.values())
    assert not set(server.requests) & set(answered)  # no answer spilled (or stored) was asked again
    assert not spill_files(cache, *places)
    return spilled


def test_a_full_tmpfs_under_the_store_spills_beside_it_for_any_rerun(tmp_path):
    """The reserve beside the store takes the spill on a disk with no byte left."""
    with OpenAITestServer(api_key=KEY, latency=0.01) as server, small_disk(tmp_path / "disk", "1m") as cache:
        run_out_of_room(server, cache, tmp_path / "out", tmp_path / "run.log", environment(tmp_path, "first"))
        beside = spill_files(cache / "responses.sqlite3.spill")
        assert beside and spill_files(cache) == beside
        subprocess.run(["mount", "-o", "remount,size=16m", str(cache)], check=True)
        check_nothing_lost_and_resume(server, cache, tmp_path, tmp_path / "run.log")
        assert (cache / "responses.sqlite3.spill" / RESERVE_NAME).stat().st_size == RESERVE_BYTES  # made again


def test_a_tmpfs_too_small_for_the_reserve_spills_to_the_user_cache(tmp_path):
    with OpenAITestServer(api_key=KEY, latency=0.01) as server, small_disk(tmp_path / "disk", "192k") as cache:
        run_out_of_room(server, cache, tmp_path / "out", tmp_path / "run.log", environment(tmp_path, "first"))
        assert spill_files(tmp_path / "user-cache" / "spill") and not spill_files(cache)
        subprocess.run(["mount", "-o", "remount,size=16m", str(cache)], check=True)
        check_nothing_lost_and_resume(server, cache, tmp_path, tmp_path / "run.log")


def test_a_file_size_limit_under_the_store_costs_no_answer(tmp_path):
    cache = tmp_path / "cache"
    with OpenAITestServer(api_key=KEY, latency=0.01) as server:
        run_out_of_room(server, cache, tmp_path / "out", tmp_path / "run.log", environment(tmp_path, "first"),
                        file_size_limit=160_000)
        check_nothing_lost_and_resume(server, cache, tmp_path, tmp_path / "run.log")


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
