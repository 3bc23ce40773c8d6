"""--batch: a run's missing requests go through the provider's batch API, never paid for twice.

Every test talks to real local servers (genderprobe.testing.batch_servers) that
implement OpenAI's Files and Batch APIs and Anthropic's Message Batches API, and
count what they are asked: batches created, files uploaded, normal chat requests.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.engine.batch.job import BatchJob, provider_for
from genderprobe.engine.batch.ledger import Ledger
from genderprobe.engine.batch.openai_files import OpenAIBatches
from genderprobe.engine.batch.provider import Limits
from genderprobe.engine.runner import Runner
from genderprobe.engine.store import Store, request_key
from genderprobe.errors import FatalModelError, UserError
from genderprobe.interfaces.cli import main
from genderprobe.models import GenerationParams, ModelOptions, Request, get_model
from genderprobe.testing import OpenAITestServer
from genderprobe.testing.background import quiet_aiohttp_logs
from genderprobe.testing.batch_servers import (
    AnthropicBatchServer,
    OpenAIBatchServer,
    spawn_batch_server,
)

quiet_aiohttp_logs()

KEY = fake_key("batch-test-7c1d")
NEVER = 10**9  # polls_until_done for a batch that must not end before the test says so
POLL = 0.01


def requests(n: int) -> list[Request]:
    pairs = [("Adam", "Emma"), ("Emma", "Adam")]
    return [
        Request.user(
            f"Case {i}: who is right, (a) {pairs[i % 2][0]} or (b) {pairs[i % 2][1]}?",
            params=GenerationParams(temperature=0.0, max_tokens=5),
        )
        for i in range(n)
    ]


def openai_model(server, *, query: str = ""):
    return get_model(
        "openai:test", ModelOptions(base_url=server.base_url + query, api_key=KEY, timeout=10)
    )


def anthropic_model(server):
    return get_model(
        "anthropic:claude-test", ModelOptions(base_url=server.base_url, api_key=KEY, timeout=10)
    )


def batch_runner(model, store, **kw) -> Runner:
    settings = dict(
        batch=True,
        batch_poll_interval=POLL,
        backoff_base=0.01,
        backoff_max=0.05,
    )
    settings.update(kw)
    return Runner(model, store, **settings)


def answer(model, store, reqs, **kw) -> tuple[list, Runner]:
    runner = batch_runner(model, store, **kw)
    try:
        return runner(reqs), runner
    finally:
        runner.close()


def ledger(path: Path) -> list[dict]:
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        return [
            dict(r)
            for r in db.execute(
                "SELECT submission, batch_id, input_file_id, status, "
                "provider_status, n FROM batches ORDER BY created"
            )
        ]


def prompts_answered_once(server, n: int) -> bool:
    """Every prompt answered exactly once, by the batch or the normal path together."""
    together = server.batch_answered + server.answered
    return len(together) == n and set(together.values()) == {1}


def submit_without_polling(model, store, reqs) -> None:
    """Create the batch and stop, as a run killed right after the create call would."""
    runner = batch_runner(model, store)
    keys = [request_key(runner.model.identity, r) for r in reqs]
    job = BatchJob(
        runner, provider_for(runner.model), reqs, keys, range(len(reqs)), [None] * len(reqs)
    )

    async def submit() -> None:
        for chunk in job._chunks(list(job.wanted)):
            await job._submit(chunk)

    try:
        runner.event_loop().run(submit())
    finally:
        runner.close()


# -- OpenAI ------------------------------------------------------------------------------


def test_openai_batch_answers_everything_with_no_chat_request(tmp_path):
    reqs = requests(20)
    with OpenAIBatchServer(api_key=KEY, p_man=0.8, polls_until_done=3) as server:
        with Store(tmp_path / "s.sqlite3") as store:
            # An Azure-style query string in the base URL: paths go in front of it.
            answers, runner = answer(
                openai_model(server, query="?api-version=2024-10-21"), store, reqs + reqs[:2]
            )
        assert server.batches_created == 1 and server.files_uploaded == 1
        assert server.total_requests == 0  # no normal chat request
        assert sum(server.batch_answered.values()) == 20  # a repeated prompt is paid for once
        # The repeated prompts are asked once and their copies cost nothing (counted among the cached).
        assert runner.stats.sent == 20 and runner.stats.answered == 20 and runner.stats.errors == 0
        assert runner.stats.duplicates == 2 and runner.stats.cached == 2
        assert [r.text for r in answers[20:]] == [r.text for r in answers[:2]]
        assert all(r.prompt_tokens > 0 and r.completion_tokens > 0 for r in answers)
        [row] = ledger(tmp_path / "s.sqlite3")
        assert row["status"] == "done" and row["provider_status"] == "completed" and row["n"] == 20

        # The batch gives the very answers the normal path gives.
        server.reset_counts()
        with Store(tmp_path / "plain.sqlite3") as plain:
            normal = Runner(openai_model(server), plain)
            try:
                expected = normal(reqs)
            finally:
                normal.close()
        assert [r.text for r in answers[:20]] == [r.text for r in expected]


def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "genderprobe.toml"
    path.write_text("[run]\nbatch_poll_interval = 0.05\n")
    return path


def cli_args(model: str, base_url: str, tmp_path: Path, out: str) -> list[str]:
    return [
        "run",
        "relationship-levy",
        "--model",
        model,
        "--base-url",
        base_url,
        "--batch",
        "--sample-k",
        "10",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--config",
        str(config_file(tmp_path)),
        "--out",
        str(tmp_path / out),
        "--resamples",
        "100",
        "--quiet",
    ]


def run_cli(args: list[str], env: dict[str, str]) -> tuple[int, str, dict | None]:
    result = CliRunner().invoke(main, args, env=env)
    out = Path(args[args.index("--out") + 1]) / "results.json"
    return result.exit_code, result.output, json.loads(out.read_text()) if out.exists() else None


def test_cli_batch_run_then_a_second_run_sends_nothing_at_all(tmp_path):
    with OpenAIBatchServer(api_key=KEY) as server:
        code, output, doc = run_cli(
            [*cli_args("openai:test", server.base_url, tmp_path, "first"), "--price-in", "2", "--price-out", "8"],
            {"OPENAI_API_KEY": KEY},
        )
        assert code == 0, output
        run = doc["run"]
        assert run["sent"] == 20 and run["errors"] == 0 and run["cached"] == 0
        assert server.batches_created == 1 and server.total_requests == 0
        # Every answer came by batch, billed at half the price.
        assert run["batched"] == 20 and run["batch_prompt_tokens"] == run["prompt_tokens"] > 0
        full = (run["prompt_tokens"] * 2 + run["completion_tokens"] * 8) / 1e6
        assert run["cost_usd"] == pytest.approx(full / 2, abs=1e-6)
        assert sum(server.batch_answered.values()) == 20
        before = server.stats()

        code, output, again = run_cli(
            cli_args("openai:test", server.base_url, tmp_path, "second"), {"OPENAI_API_KEY": KEY}
        )
        assert code == 0, output
        assert again["run"]["cached"] == 20 and again["run"]["sent"] == 0
        # Not a file, not a batch, not a poll, not a chat request.
        assert server.stats() == before
        assert again["metrics"] == doc["metrics"]


def kill_once_submitted(
    cmd: list[str], env: dict[str, str], stats: Callable[[], dict], how=signal.SIGKILL
) -> int:
    """Start ``cmd``; once its batch is submitted and being polled, stop it with ``how``."""
    process = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while stats()["batch_polls"] < 2:
        if process.poll() is not None:
            raise AssertionError(f"the run ended before it was killed: {process.stderr.read()!r}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError("the batch was never polled")
        time.sleep(0.01)
    process.send_signal(how)
    try:
        return process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()


def cli_command(model: str, base_url: str, tmp_path: Path, out: str) -> list[str]:
    return [sys.executable, "-m", "genderprobe", *cli_args(model, base_url, tmp_path, out)]


def test_openai_run_killed_mid_poll_resumes_the_same_batch(tmp_path):
    """Server and run in their own processes: the run is SIGKILLed while polling, the rerun polls on."""
    env = {**os.environ, "OPENAI_API_KEY": KEY, "BATCH_SERVER_KEY": KEY}
    with spawn_batch_server(
        "openai", "--polls-until-done", str(NEVER), "--api-key-env", "BATCH_SERVER_KEY"
    ) as server:
        code = kill_once_submitted(
            cli_command("openai:test", server.base_url, tmp_path, "killed"), env, server.stats
        )
        assert code == -signal.SIGKILL
        [row] = ledger(tmp_path / "cache" / "responses.sqlite3")
        assert row["status"] == "live" and row["batch_id"] and row["input_file_id"]
        assert server.stats()["batches_created"] == 1

        server.control(polls_until_done=1)  # the provider finishes the batch meanwhile
        resumed = subprocess.run(
            cli_command("openai:test", server.base_url, tmp_path, "resumed"),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert resumed.returncode == 0, resumed.stderr
        stats = server.stats()
        # duplicate batch submissions after a kill: 0
        assert stats["batches_created"] == 1 and stats["files_uploaded"] == 1
        assert stats["total_requests"] == 0 and stats["batch_answered"] == 20
        doc = json.loads((tmp_path / "resumed" / "results.json").read_text())
        assert (
            doc["run"]["sent"] == 20
            and doc["run"]["errors"] == 0
            and doc["counts"]["attempts"] == 20
        )
        [after] = ledger(tmp_path / "cache" / "responses.sqlite3")
        assert after["batch_id"] == row["batch_id"] and after["status"] == "done"


def test_ctrl_c_while_polling_exits_130_and_the_rerun_resumes(tmp_path):
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    with OpenAIBatchServer(api_key=KEY, polls_until_done=NEVER) as server:
        code = kill_once_submitted(
            cli_command("openai:test", server.base_url, tmp_path, "stopped"),
            env,
            server.stats,
            how=signal.SIGINT,
        )
        assert code == 130
        [row] = ledger(tmp_path / "cache" / "responses.sqlite3")
        assert row["status"] == "live"
        server.polls_until_done = 1
        code, output, doc = run_cli(
            cli_args("openai:test", server.base_url, tmp_path, "again"), {"OPENAI_API_KEY": KEY}
        )
        assert code == 0, output
        assert (
            server.batches_created == 1 and server.total_requests == 0 and doc["run"]["sent"] == 20
        )


def test_run_killed_before_the_batch_id_was_stored_adopts_the_batch(tmp_path):
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    store_path = tmp_path / "cache" / "responses.sqlite3"
    with OpenAIBatchServer(api_key=KEY, polls_until_done=NEVER) as server:
        kill_once_submitted(
            cli_command("openai:test", server.base_url, tmp_path, "killed"), env, server.stats
        )
        [row] = ledger(store_path)
        # As if the run had died after the create call, before recording the id it returned.
        with sqlite3.connect(store_path) as db:
            db.execute("UPDATE batches SET batch_id = NULL, status = 'submitting'")
        server.polls_until_done = 1
        code, output, doc = run_cli(
            cli_args("openai:test", server.base_url, tmp_path, "adopted"), {"OPENAI_API_KEY": KEY}
        )
        assert code == 0, output
        assert server.batches_created == 1 and server.files_uploaded == 1  # zero duplicates
        assert server.total_requests == 0 and doc["run"]["sent"] == 20
        [after] = ledger(store_path)
        assert after["batch_id"] == row["batch_id"] and after["status"] == "done"


def test_uploaded_file_without_a_batch_is_used_instead_of_uploading_again(tmp_path):
    """The run died after recording the input file and before the create call reached the server."""
    reqs = requests(8)
    with (
        OpenAIBatchServer(api_key=KEY, polls_until_done=1) as server,
        Store(tmp_path / "s.sqlite3") as store,
    ):
        model = openai_model(server)
        provider = OpenAIBatches(model)
        keys = [request_key(model.identity, r) for r in reqs]
        items = [provider.encode(k, r)[0] for k, r in zip(keys, reqs)]

        async def upload() -> str | None:
            try:
                return await provider.upload(items)
            finally:
                await model.aclose()

        file_id = asyncio.run(upload())
        Ledger(store).add("openai", model.identity, keys, file_id)
        answers, _ = answer(model, store, reqs)
        assert all(a.ok for a in answers)
        assert (
            server.files_uploaded == 1
            and server.batches_created == 1
            and server.total_requests == 0
        )
        [row] = ledger(tmp_path / "s.sqlite3")
        assert row["input_file_id"] == file_id and row["status"] == "done"


def test_partly_failed_batch_sends_the_failures_the_normal_way(tmp_path):
    with (
        OpenAIBatchServer(api_key=KEY, fail_share=0.3, seed=3) as server,
        Store(tmp_path / "s.sqlite3") as store,
    ):
        answers, runner = answer(openai_model(server), store, requests(40))
        assert all(a.ok for a in answers) and runner.stats.answered == 40
        failed = server.total_requests
        assert 0 < failed < 40 and sum(server.batch_answered.values()) == 40 - failed
        assert prompts_answered_once(server, 40)
        assert server.batches_created == 1


@pytest.mark.parametrize(
    ("control", "provider_status"), [("expire", "expired"), ("fail_batches", "failed")]
)
def test_expired_or_failed_batch_falls_back_to_the_normal_path(tmp_path, control, provider_status):
    with (
        OpenAIBatchServer(api_key=KEY, **{control: True}) as server,
        Store(tmp_path / "s.sqlite3") as store,
    ):
        answers, _ = answer(openai_model(server), store, requests(12))
        assert all(a.ok for a in answers)
        assert sum(server.batch_answered.values()) == 0 and server.total_requests == 12
        assert prompts_answered_once(server, 12)
        [row] = ledger(tmp_path / "s.sqlite3")
        assert row["status"] == "ended" and row["provider_status"] == provider_status
        polls = server.batch_polls
        again, _ = answer(openai_model(server), store, requests(12))
        assert server.batch_polls == polls and server.batches_created == 1  # never polled again


def test_large_runs_are_split_within_the_batch_limits(tmp_path, monkeypatch):
    monkeypatch.setattr(OpenAIBatches, "limits", Limits(requests=4, bytes=10**6))
    with OpenAIBatchServer(api_key=KEY) as server, Store(tmp_path / "s.sqlite3") as store:
        answers, _ = answer(openai_model(server), store, requests(10))
        assert all(a.ok for a in answers)
        assert (
            server.batches_created == 3
            and server.files_uploaded == 3
            and server.total_requests == 0
        )
        assert [r["n"] for r in ledger(tmp_path / "s.sqlite3")] == [4, 4, 2]


def test_a_batch_shared_with_another_run_is_read_by_each_run_for_its_own_requests(tmp_path):
    reqs = requests(10)
    with (
        OpenAIBatchServer(api_key=KEY, polls_until_done=1) as server,
        Store(tmp_path / "s.sqlite3") as store,
    ):
        submit_without_polling(openai_model(server), store, reqs)  # run A, killed after submitting
        part, _ = answer(openai_model(server), store, reqs[:4])  # run B needs 4 of them
        assert all(a.ok for a in part)
        [row] = ledger(tmp_path / "s.sqlite3")
        # 6 answers paid for are still unread (B had no request to read them with): the batch stays open.
        assert row["status"] == "live" and row["provider_status"] == "completed"
        rest, runner = answer(openai_model(server), store, reqs)  # run C needs all 10
        assert all(a.ok for a in rest) and runner.stats.cached == 4 and runner.stats.sent == 6
        assert server.batches_created == 1 and server.total_requests == 0
        assert ledger(tmp_path / "s.sqlite3")[0]["status"] == "done"


def test_a_rejected_key_is_one_sentence_without_the_key(tmp_path):
    with OpenAIBatchServer(api_key=KEY) as server, Store(tmp_path / "s.sqlite3") as store:
        wrong = fake_key("wrong-key-91ab")
        model = get_model("openai:test", ModelOptions(base_url=server.base_url, api_key=wrong))
        with pytest.raises(FatalModelError, match=r"rejected the key .*--api-key-env\.$") as caught:
            answer(model, store, requests(3))
        assert wrong not in str(caught.value) and server.batches_created == 0


@pytest.mark.parametrize("server_class", [OpenAIBatchServer, AnthropicBatchServer])
def test_a_busy_batch_api_is_polled_again(tmp_path, server_class):
    with server_class(api_key=KEY) as server, Store(tmp_path / "s.sqlite3") as store:
        server.busy_polls = 3
        model = (
            openai_model(server) if server_class is OpenAIBatchServer else anthropic_model(server)
        )
        answers, _ = answer(model, store, requests(6))
        assert all(a.ok for a in answers) and server.busy_polls == 0
        assert server.batches_created == 1 and server.total_requests == 0


def test_constrained_and_scored_answers_read_as_the_normal_path_reads_them(tmp_path):
    base = requests(6)
    free = GenerationParams(temperature=0.0)  # room for the whole {"answer": ...} object
    reqs = [Request(r.messages, free, options=("(a)", "(b)"), constrain=True) for r in base[:3]]
    reqs += [
        Request(r.messages, r.params, options=("(a)", "(b)"), score_options=True) for r in base[3:]
    ]
    options = dict(api_key=KEY, extra={"constrain_with": "json_schema"})
    with OpenAIBatchServer(api_key=KEY) as server:
        with Store(tmp_path / "s.sqlite3") as store:
            model = get_model("openai:test", ModelOptions(base_url=server.base_url, **options))
            answers, _ = answer(model, store, reqs)
        assert server.total_requests == 0 and server.constrained["json_schema"] == 3
        with Store(tmp_path / "plain.sqlite3") as plain:
            normal = Runner(
                get_model("openai:test", ModelOptions(base_url=server.base_url, **options)), plain
            )
            try:
                expected = normal(reqs)
            finally:
                normal.close()
    assert [a.text for a in answers[:3]] == [e.text for e in expected[:3]]
    assert all(a.text in ("(a)", "(b)") for a in answers[:3])  # unwrapped from {"answer": ...}
    assert [a.option_logprobs for a in answers[3:]] == [e.option_logprobs for e in expected[3:]]
    assert all(a.option_logprobs is not None for a in answers[3:])


def test_a_server_without_a_batch_api_is_named_in_one_sentence(tmp_path):
    with OpenAITestServer(api_key=KEY) as server, Store(tmp_path / "s.sqlite3") as store:
        with pytest.raises(FatalModelError, match=r"has no batch API .*drop --batch\.$"):
            answer(openai_model(server), store, requests(3))
        assert server.total_requests == 0


# -- Anthropic ---------------------------------------------------------------------------


def test_anthropic_batch_answers_everything_with_no_message_request(tmp_path):
    reqs = requests(16)
    with (
        AnthropicBatchServer(api_key=KEY, p_man=0.8) as server,
        Store(tmp_path / "s.sqlite3") as store,
    ):
        # temperature travels in the SDK's extra_body: it must land in the params
        # (the server refuses unknown params such as extra_body, as the API does).
        answers, runner = answer(anthropic_model(server), store, reqs)
        assert all(a.ok and a.text in ("(a)", "(b)") for a in answers)
        assert server.batches_created == 1 and server.total_requests == 0
        assert sum(server.batch_answered.values()) == 16 and runner.stats.answered == 16
        [row] = ledger(tmp_path / "s.sqlite3")
        assert row["status"] == "done" and row["provider_status"] == "ended"
        with Store(tmp_path / "plain.sqlite3") as plain:
            normal = Runner(anthropic_model(server), plain)
            try:
                expected = normal(reqs)
            finally:
                normal.close()
        assert [a.text for a in answers] == [e.text for e in expected]


def test_anthropic_run_killed_mid_poll_resumes_the_same_batch(tmp_path):
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY}
    with AnthropicBatchServer(api_key=KEY, polls_until_done=NEVER) as server:
        cmd = cli_command("anthropic:claude-test", server.base_url, tmp_path, "killed")
        assert kill_once_submitted(cmd, env, server.stats) == -signal.SIGKILL
        [row] = ledger(tmp_path / "cache" / "responses.sqlite3")
        assert row["status"] == "live" and row["batch_id"].startswith("msgbatch_")
        server.polls_until_done = 1
        code, output, doc = run_cli(
            cli_args("anthropic:claude-test", server.base_url, tmp_path, "resumed"),
            {"ANTHROPIC_API_KEY": KEY},
        )
        assert code == 0, output
        assert server.batches_created == 1 and server.total_requests == 0  # zero duplicates
        assert doc["run"]["sent"] == 20 and doc["run"]["errors"] == 0
        [after] = ledger(tmp_path / "cache" / "responses.sqlite3")
        assert after["batch_id"] == row["batch_id"] and after["status"] == "done"


def test_anthropic_batch_whose_id_was_lost_is_found_by_size_and_time(tmp_path):
    reqs = requests(12)
    with (
        AnthropicBatchServer(api_key=KEY, polls_until_done=1) as server,
        Store(tmp_path / "s.sqlite3") as store,
    ):
        answer(
            anthropic_model(server), store, reqs[6:]
        )  # a finished batch of the same size, already known
        server.polls_until_done = NEVER
        with Store(tmp_path / "other.sqlite3") as other:
            submit_without_polling(
                anthropic_model(server), other, requests(7)
            )  # another size: not ours
        submit_without_polling(anthropic_model(server), store, reqs[:6])
        with sqlite3.connect(tmp_path / "s.sqlite3") as db:
            db.execute(
                "UPDATE batches SET batch_id = NULL, status = 'submitting' WHERE status = 'live'"
            )
        server.polls_until_done = 1
        created = server.batches_created
        answers, _ = answer(anthropic_model(server), store, reqs)
        assert all(a.ok for a in answers)
        assert server.batches_created == created == 3 and server.total_requests == 0
        rows = ledger(tmp_path / "s.sqlite3")
        assert [r["status"] for r in rows] == ["done", "done"] and rows[0]["batch_id"] != rows[1][
            "batch_id"
        ]


def test_anthropic_submission_that_never_reached_the_server_is_sent_again(tmp_path):
    reqs = requests(5)
    with (
        AnthropicBatchServer(api_key=KEY, polls_until_done=1) as server,
        Store(tmp_path / "s.sqlite3") as store,
    ):
        model = anthropic_model(server)
        Ledger(store).add(
            "anthropic", model.identity, [request_key(model.identity, r) for r in reqs], None
        )
        answers, _ = answer(model, store, reqs)
        assert all(a.ok for a in answers)
        assert server.batches_created == 1 and server.total_requests == 0
        first, second = ledger(tmp_path / "s.sqlite3")
        assert (first["status"], first["provider_status"]) == ("ended", "abandoned")
        assert second["status"] == "done"


def test_anthropic_partly_failed_batch_sends_the_failures_the_normal_way(tmp_path):
    with (
        AnthropicBatchServer(api_key=KEY, fail_share=0.3, seed=5) as server,
        Store(tmp_path / "s.sqlite3") as store,
    ):
        answers, runner = answer(anthropic_model(server), store, requests(30))
        assert all(a.ok for a in answers) and runner.stats.answered == 30
        failed = server.total_requests
        assert 0 < failed < 30 and sum(server.batch_answered.values()) == 30 - failed
        assert prompts_answered_once(server, 30)


def test_anthropic_expired_batch_falls_back(tmp_path):
    with (
        AnthropicBatchServer(api_key=KEY, expire=True) as server,
        Store(tmp_path / "s.sqlite3") as store,
    ):
        answers, _ = answer(anthropic_model(server), store, requests(8))
        assert all(a.ok for a in answers) and server.total_requests == 8
        assert prompts_answered_once(server, 8)


# -- models without a batch API -------------------------------------------------------------


def test_batch_refused_for_reference_models_in_one_sentence(tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "run",
            "relationship-levy",
            "--model",
            "reference:random",
            "--batch",
            "--sample-k",
            "5",
            "--quiet",
        ],
    )
    assert result.exit_code == 2
    message = result.output.strip()
    assert message == (
        "Error: --batch needs a provider batch API (openai: or anthropic:); reference:random "
        "answers on this machine, free of charge, so drop --batch."
    )
    assert "Traceback" not in result.output


def test_batch_refused_for_hf_models_in_one_sentence(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from genderprobe.testing.tiny_models import build_tiny_model

    path = build_tiny_model(tmp_path / "tiny")
    result = CliRunner().invoke(
        main,
        [
            "run",
            "relationship-levy",
            "--model",
            f"hf:{path}",
            "--batch",
            "--sample-k",
            "5",
            "--quiet",
        ],
    )
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: --batch needs a provider batch API")
    assert lines[0].endswith("so drop --batch.")


def test_batch_without_the_store_is_refused(tmp_path):
    with OpenAIBatchServer(api_key=KEY) as server:
        result = CliRunner().invoke(
            main,
            [
                "run",
                "relationship-levy",
                "--model",
                "openai:test",
                "--base-url",
                server.base_url,
                "--batch",
                "--no-cache",
                "--sample-k",
                "5",
                "--quiet",
            ],
            env={"OPENAI_API_KEY": KEY},
        )
        assert result.exit_code == 2 and "--no-cache" in result.output
        assert server.batches_created == 0 and server.total_requests == 0


def test_runner_refuses_batch_for_a_model_without_one():
    from genderprobe.engine.batch import require_batch_api

    with pytest.raises(UserError, match=r"^--batch needs a provider batch API"):
        require_batch_api(get_model("reference:random"))
