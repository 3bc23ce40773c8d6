"""kill -9, two processes and a full disk on the paths issue 47 had not attacked: --batch and local weights.

--batch runs against a real local server with OpenAI's Files and Batch APIs: a
run killed at a random moment (upload, create, polling, reading) and resumed
pays for no request twice; two runs started together on one store create one
batch; a full disk under the store (a file-size limit on the run) stops the
run with one sentence naming the disk, at the ledger and at the answers, and
the next run pays for nothing again. Local weights (a tiny random-weight
model): the answers of each finished batch are in the store before the next
is computed, so a kill loses only the batch under way (before, it lost every
answer of the run's list finished so far). The Ray executor's kill trials are in
test_ray.py (one Ray instance per module); the figures over more trials are
measured by benchmarks/bench_kill_untried.py (docs/run-engine.md).
"""

from __future__ import annotations

import os
import random
import signal
import time

import pytest
from instruments import fake_key

from genderprobe.testing.background import quiet_aiohttp_logs
from genderprobe.testing.batch_servers import OpenAIBatchServer
from genderprobe.testing.kill_trials import (
    FINISHED_LOG,
    batch_paid,
    batch_run,
    finished_not_stored,
    hf_run,
    same_results,
    stored,
)
from genderprobe.testing.quick_runs import start_run

quiet_aiohttp_logs()

KEY = fake_key("kill-untried-key-5e2a")
ENV = {"OPENAI_API_KEY": KEY}
SAMPLE_K = 50  # 100 prompts


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The results of an uninterrupted --batch run."""
    work = tmp_path_factory.mktemp("whole")
    with OpenAIBatchServer(api_key=KEY) as server:
        run = start_run(batch_run(server, work / "cache", work / "out", SAMPLE_K, work), env=ENV, log=work / "log")
        run.join(120)
        assert run.exitcode == 0, (work / "log").read_text()
        assert batch_paid(server) == 2 * SAMPLE_K
    return work / "out"


def finish(args, log) -> None:
    run = start_run(args, env=ENV, log=log)
    run.join(120)
    assert run.exitcode == 0, log.read_text()


def test_batch_runs_killed_at_random_moments_pay_for_nothing_twice(tmp_path, whole):
    rng = random.Random(47)
    for trial in range(3):
        with OpenAIBatchServer(api_key=KEY, polls_until_done=4) as server:
            out, log = tmp_path / f"out{trial}", tmp_path / "log"
            args = batch_run(server, tmp_path / f"cache{trial}", out, SAMPLE_K, tmp_path)
            run = start_run(args, env=ENV, log=log)
            time.sleep(rng.uniform(0.05, 0.8))
            if run.is_alive():
                os.kill(run.pid, signal.SIGKILL)
            run.join()
            finish(args, log)
            assert batch_paid(server) == 2 * SAMPLE_K and server.batches_created == 1
            assert same_results(out, whole)


def test_two_batch_runs_together_on_one_store_create_one_batch(tmp_path, whole):
    with OpenAIBatchServer(api_key=KEY, polls_until_done=4) as server:
        runs = [start_run(batch_run(server, tmp_path / "cache", tmp_path / f"out{i}", SAMPLE_K, tmp_path),
                          env=ENV, log=tmp_path / "log") for i in range(2)]
        for run in runs:
            run.join(120)
        assert [run.exitcode for run in runs] == [0, 0], (tmp_path / "log").read_text()
        assert batch_paid(server) == 2 * SAMPLE_K and server.batches_created == 1
    assert same_results(tmp_path / "out0", whole) and same_results(tmp_path / "out1", whole)


@pytest.mark.parametrize(("limit", "said"), [(60_000, "Cannot write the batch ledger"),
                                             (135_000, "which the next run takes in first")])
def test_a_full_disk_under_a_batch_run_is_one_sentence_and_costs_nothing(tmp_path, whole, limit, said):
    """A file-size limit (RLIMIT_FSIZE) on the run: its writes past it fail as on a full disk."""
    log = tmp_path / "log"
    with OpenAIBatchServer(api_key=KEY, polls_until_done=2) as server:
        args = batch_run(server, tmp_path / "cache", tmp_path / "out", SAMPLE_K, tmp_path)
        run = start_run(args, env=ENV, log=log, file_size_limit=limit)
        run.join(120)
        text = log.read_text()
        errors = [line for line in text.splitlines() if line.startswith("Error:")]
        assert run.exitcode == 1 and "Traceback" not in text, text
        assert len(errors) == 1 and said in errors[0] and f"the disk holding {tmp_path / 'cache'}" in errors[0]
        finish(batch_run(server, tmp_path / "cache", tmp_path / "again", SAMPLE_K, tmp_path), log)
        assert batch_paid(server) == 2 * SAMPLE_K and server.batches_created == 1
    assert same_results(tmp_path / "again", whole)


# -- local weights ---------------------------------------------------------------------

HF_SAMPLE_K = 40  # 80 prompts, 10 batches of 8


def test_local_weights_killed_mid_run_lose_at_most_the_batch_under_way(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from click.testing import CliRunner

    from genderprobe.interfaces.cli import main
    from genderprobe.testing.tiny_models import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny")
    cache, out, parts, log = tmp_path / "cache", tmp_path / "out", tmp_path / "parts", tmp_path / "log"
    args, env = hf_run(model, cache, out, HF_SAMPLE_K), {FINISHED_LOG: str(parts)}
    setup = "genderprobe.testing.kill_trials:log_finished_parts"
    mid_run = 0
    for target in (8, 40):  # answers stored before the kill; then a random moment of the batches that follow
        run = start_run(args, env=env, log=log, setup=setup)
        while stored(cache) < target:
            assert run.is_alive(), log.read_text()
            time.sleep(0.002)
        time.sleep(random.Random(target).uniform(0, 0.05))
        os.kill(run.pid, signal.SIGKILL)
        run.join()
        # Never more than the batch whose commit was under way (before: every answer finished so far).
        assert 0 <= finished_not_stored(parts, cache) <= 8
        mid_run += stored(cache) < 2 * HF_SAMPLE_K
    assert mid_run
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    whole = CliRunner().invoke(main, hf_run(model, tmp_path / "whole-cache", tmp_path / "whole", HF_SAMPLE_K))
    assert whole.exit_code == 0, whole.output
    assert same_results(out, tmp_path / "whole")
