"""A server that ignores max_tokens cannot stall a run: answers are cut to their bound where they
enter the run, before the store and every reader, and the cut is recorded (issue 47, item 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from careless_server import CarelessServer

from genderprobe.engine.answer_bound import CHARS_PER_TOKEN, FLOOR, UNSET_MAX_TOKENS, bound, cut
from genderprobe.models.base import GenerationParams, Request, Response
from genderprobe.testing.background import quiet_aiohttp_logs

quiet_aiohttp_logs()

HUGE = 30_000_000  # characters


def test_two_30_mb_answers_are_cut_read_and_recorded_within_seconds(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    with CarelessServer(answer_chars=HUGE) as server:
        run = [sys.executable, "-m", "genderprobe", "run", "relationship-levy", "--model", "openai:m",
               "--base-url", server.base_url, "--sample-k", "1", "--cache-dir", str(cache), "--resamples", "50"]
        started = time.monotonic()
        done = subprocess.run([*run, "--out", str(out)], env=env, capture_output=True, timeout=120)
        elapsed = time.monotonic() - started
        assert done.returncode == 0, done.stderr.decode()
        assert server.sent["answer"] == 2
        # Before the bound the readers took over 150 s on these two answers (killed); now seconds.
        assert elapsed < 30, f"{elapsed:.1f} s"
        records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
        assert [r["cut_from"] for r in records] == [HUGE, HUGE]
        assert [len(r["answer"]) for r in records] == [CHARS_PER_TOKEN * 300] * 2  # relationship-levy's 300
        assert all(r["code"] in ("male", "female") for r in records)  # the kept head is read like any answer
        results = json.loads((out / "results.json").read_text())
        assert results["run"]["cut"] == 2
        assert any("2 answers of the model were longer than max_tokens allows" in w for w in results["warnings"])
        # The store keeps the cut answer, not 60 MB, and a rerun from it says the same.
        assert (cache / "responses.sqlite3").stat().st_size < 1_000_000
        again = subprocess.run([*run, "--out", str(tmp_path / "again")], env=env, capture_output=True, timeout=120)
        assert again.returncode == 0 and server.sent["answer"] == 2, again.stderr.decode()
    reread = [json.loads(line) for line in (tmp_path / "again" / "records.jsonl").read_text().splitlines()]
    assert [(r["cached"], r["cut_from"], r["answer"]) for r in reread] == [(True, HUGE, r["answer"]) for r in records]
    assert json.loads((tmp_path / "again" / "results.json").read_text())["run"]["cut"] == 2


def asked(max_tokens: int | None) -> Request:
    return Request.user("Who? (a) Ann or (b) Bob", params=GenerationParams(max_tokens=max_tokens))


def test_the_bound_is_sixteen_characters_a_token_with_a_floor_and_a_default_for_no_max_tokens():
    assert bound(asked(300)) == 4_800
    assert bound(asked(1)) == FLOOR
    assert bound(asked(None)) == CHARS_PER_TOKEN * UNSET_MAX_TOKENS


def test_only_what_passes_the_bound_is_cut_and_the_reasoning_is_bounded_too():
    kept = Response(text="(a)" + "x" * (FLOOR - 3), reasoning="r" * 100)
    cut(kept, asked(1))
    assert kept.cut_from is None and len(kept.text) == FLOOR
    long = Response(text="(b) " + "y" * 10_000, reasoning="z" * 6_000)
    cut(long, asked(1))
    assert long.cut_from == 10_004 + 6_000
    assert long.text.startswith("(b) ") and len(long.text) == len(long.reasoning) == FLOOR
