"""Nothing is paid for that cannot be kept, and every run can be accounted for.

Against a real OpenAI-compatible server on 127.0.0.1: a store that cannot be
written stops the run before the first request; empty answers are their own
error kind, are not stored as answers and fail a run where most are empty;
exit codes separate "fix your command" (2) from "try again later" (1); the
results say where, by whom and at what cost the answers were given; a dry
run sends nothing; old answers expire with --cache-max-age; the judge has its
own endpoint.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.engine.store import Store
from genderprobe.errors import RunFailed, UserError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.models import ModelOptions
from genderprobe.testing.openai_server import OpenAITestServer

KEY = fake_key("test-pay-once-0123456789")
NOBODY = 65534


def config(server, cache_dir, **kwargs) -> RunConfig:
    return RunConfig(model="openai:test", model_options=ModelOptions(base_url=server.base_url, api_key=KEY),
                     cache_dir=cache_dir, n_resamples=50, **kwargs)


def cli(*args, env=None):
    return CliRunner().invoke(main, list(args), env={"OPENAI_API_KEY": KEY, **(env or {})})


def rl(server, cache_dir, *extra):
    return cli("run", "relationship-levy", "--model", "openai:test", "--base-url", server.base_url,
               "--cache-dir", str(cache_dir), "--sample-k", "5", "--quiet", *extra)


# -- a store that cannot keep answers -------------------------------------------------


def test_a_locked_store_is_found_before_any_request_is_sent(tmp_path):
    Store(tmp_path / "responses.sqlite3").close()
    holder = sqlite3.connect(tmp_path / "responses.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing, and not letting go
    try:
        with OpenAITestServer() as server:
            with pytest.raises(RunFailed, match="locked by another process"):
                run_probe("relationship-levy", "openai:test", config=config(server, tmp_path, store_timeout=0.2),
                          sample_k=20)
            assert server.total_requests == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize("folder_mode", [0o755, 0o555])
def test_a_read_only_store_serves_what_it_holds_and_refuses_before_any_request(tmp_path, folder_mode):
    """As a user without write permission on the store file (and its folder): root writes anything,
    so as root the run goes on in a child process that has dropped to the user nobody."""
    folder = Path(tempfile.mkdtemp(prefix="genderprobe-readonly-"))  # pytest's own folder is root's alone
    try:
        with OpenAITestServer() as server:
            rl(server, folder)  # 10 answers stored; it also imports everything the child needs
            folder.chmod(folder_mode)
            (folder / "responses.sqlite3").chmod(0o444)
            beside = sorted(folder.iterdir())
            sent = server.total_requests
            cached_code, cached = _as_unprivileged(lambda: rl(server, folder))  # every answer is in it
            code, output = _as_unprivileged(lambda: rl(server, folder, "--sample-k", "8"))  # 6 are not
            assert server.total_requests == sent
            assert sorted(folder.iterdir()) == beside  # no -wal or -shm left beside it
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)
    assert cached_code == 0, cached
    assert code == 2 and "Traceback" not in output, output
    error = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "cannot be written by this user" in error[0]
    assert "6 of the 16 answers this run needs are not in it" in error[0]


def _as_unprivileged(invoke):
    """(exit code, output) of ``invoke()``, run as nobody when this process is root."""
    if os.geteuid() != 0:
        result = invoke()
        return result.exit_code, result.output
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, run, report, and leave without running the parent's cleanup
        try:
            os.close(read)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            result = invoke()
            os.write(write, json.dumps([result.exit_code, result.output]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        reported = pipe.read()
    os.waitpid(pid, 0)
    return tuple(json.loads(reported))


# -- exit codes -----------------------------------------------------------------------


def test_exit_codes_separate_bad_input_from_a_failed_run(tmp_path):
    assert cli("run", "relationship-levy", "--model", "reference:random", "--sample-k", "0").exit_code == 2
    assert cli("run", "no-such-probe", "--model", "reference:random").exit_code == 2
    # Unreachable: try again later.
    result = cli("run", "relationship-levy", "--model", "openai:test", "--base-url", "http://127.0.0.1:9/v1",
                 "--cache-dir", str(tmp_path), "--sample-k", "5", "--quiet")
    assert result.exit_code == 1 and "Cannot reach" in result.output
    with OpenAITestServer() as server:
        server.faults.always("500")
        result = rl(server, tmp_path, "--max-retries", "0")
        assert result.exit_code == 1 and "--max-error-rate" in result.output
        server.faults.always("401")
        result = rl(server, tmp_path, "--max-retries", "0")
        assert result.exit_code == 2 and "rejected the key" in result.output
    assert "Exit codes:" in cli("run", "relationship-levy", "--help").output


# -- empty answers --------------------------------------------------------------------


def test_a_server_sending_no_text_fails_the_run_early_and_stores_no_answer(tmp_path):
    with OpenAITestServer() as server:
        server.faults.always("empty")
        result = rl(server, tmp_path, "--sample-k", "100")
        assert result.exit_code == 1
        assert "answers of openai:test were empty" in result.output
        # It stopped soon after the first 20 empty answers, not after all 200 requests.
        assert server.total_requests < 60
    with Store(tmp_path / "responses.sqlite3") as store:
        info = store.info()
    assert info["responses"] == 0 and info["error_kinds"] == {"empty": info["errors"]}


def test_a_few_empty_answers_are_counted_warned_and_asked_again(tmp_path):
    with OpenAITestServer() as server:
        server.faults.set_rates({"empty": 0.1}, seed=3)
        out = run_probe("relationship-levy", "openai:test", config=config(server, tmp_path), sample_k=50)
        run = out.document["run"]
        assert 0 < run["empty"] == run["error_kinds"]["empty"] <= run["errors"]
        assert any("were empty" in w for w in out.document["warnings"])
        assert sum(1 for r in out.records if r.get("error", "").startswith("empty")) == run["empty"]
        server.faults.set_rates({})
        again = run_probe("relationship-levy", "openai:test", config=config(server, tmp_path), sample_k=50)
        assert again.document["run"]["sent"] == run["empty"]  # only the empty ones are asked again
        assert again.document["run"]["empty"] == 0


# -- accounting -----------------------------------------------------------------------


def test_results_say_where_who_what_was_sent_and_what_it_cost(tmp_path):
    with OpenAITestServer() as server:
        out = run_probe("relationship-levy", "openai:test",
                        config=config(server, tmp_path, price_in=2.5, price_out=10.0), sample_k=10)
        url = server.base_url
    doc = out.document
    run = doc["run"]
    assert doc["endpoint"] == run["endpoint"] == url
    assert KEY not in json.dumps(doc)
    assert run["served_models"] == {"test": 20}
    assert run["generation_sent"] == {"temperature": 0.0, "max_tokens": 300}  # the probe sends its decoding explicitly
    assert run["prompt_tokens"] > 0 and run["completion_tokens"] > 0
    expected = (run["prompt_tokens"] * 2.5 + run["completion_tokens"] * 10.0) / 1e6
    assert run["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert run["prices_per_million"] == {"in": 2.5, "out": 10.0}


def test_cache_export_holds_the_request_behind_each_answer(tmp_path):
    with OpenAITestServer() as server:
        run_probe("relationship-levy", "openai:test", config=config(server, tmp_path), sample_k=3)
    result = cli("cache", "export", str(tmp_path / "export.jsonl"), "--cache-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "export.jsonl").read_text().splitlines()]
    assert len(rows) == 6
    for row in rows:
        request = row["request"]
        assert request["messages"][-1][0] == "user" and "married" in request["messages"][-1][1]
        assert request["params"] == {"temperature": 0.0, "max_tokens": 300} and request["repetition"] == 0


def test_old_answers_are_asked_again_with_cache_max_age(tmp_path):
    with OpenAITestServer() as server:
        rl(server, tmp_path)
        assert server.total_requests == 10
        assert rl(server, tmp_path, "--cache-max-age", "1h").exit_code == 0
        assert server.total_requests == 10  # an hour old at most: kept
        with sqlite3.connect(tmp_path / "responses.sqlite3") as db:
            db.execute("UPDATE responses SET created = created - 7200")
        assert rl(server, tmp_path, "--cache-max-age", "1h").exit_code == 0
        assert server.total_requests == 20  # two hours old: asked again
        assert rl(server, tmp_path, "--cache-max-age", "soon").exit_code == 2


def test_a_dry_run_sends_nothing_writes_nothing_and_counts_what_is_stored(tmp_path):
    with OpenAITestServer() as server:
        rl(server, tmp_path, "--sample-k", "3")
        sent = server.total_requests
        out = tmp_path / "out"
        result = rl(server, tmp_path, "--sample-k", "5", "--dry-run", "--price-in", "1", "--price-out", "2",
                    "--out", str(out), "--json")
        assert result.exit_code == 0, result.output
        assert server.total_requests == sent
    assert not (out / "results.json").exists() and not (out / "records.jsonl").exists()
    estimate = json.loads(result.output)["dry_run"]["model"]
    assert (estimate["requests"], estimate["cached"], estimate["to_send"]) == (10, 6, 4)
    assert estimate["completion_tokens"] == 4 * 300
    cost = (estimate["prompt_tokens"] * 1 + estimate["completion_tokens"] * 2) / 1e6
    assert estimate["cost_usd_at_most"] == pytest.approx(cost, abs=1e-6)


# -- the judge's own endpoint ----------------------------------------------------------


def test_the_judge_has_its_own_endpoint_key_and_line_in_the_summary(tmp_path):
    judge_key = fake_key("judge-key-0123456789")
    with OpenAITestServer(api_key=KEY) as tested, OpenAITestServer(api_key=judge_key) as judge:
        result = cli("run", "relationship-levy", "--model", "openai:test", "--base-url", tested.base_url,
                     "--reader-judge", "openai:judge", "--judge-base-url", judge.base_url,
                     "--judge-api-key-env", "JUDGE_KEY", "--cache-dir", str(tmp_path), "--sample-k", "4",
                     "--out", str(tmp_path / "out"), env={"JUDGE_KEY": judge_key})
        assert result.exit_code == 0, result.output
        assert tested.total_requests == 8 and judge.total_requests > 0
        judge_url, judge_sent = judge.base_url, judge.total_requests
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["run"]["reader_judge"]["endpoint"] == judge_url
    assert doc["run"]["reader_judge"]["sent"] == judge_sent
    assert "Reader-judge requests:" in result.output
    assert judge_key not in result.output and judge_key not in json.dumps(doc)


def test_the_judge_endpoint_and_prices_come_from_the_config_file(tmp_path):
    judge_key = fake_key("judge-key-abcdef0123")
    with OpenAITestServer(api_key=KEY) as tested, OpenAITestServer(api_key=judge_key) as judge:
        cfg = tmp_path / "gp.toml"
        cfg.write_text(f'[judge]\nbase_url = "{judge.base_url}"\napi_key_env = "JUDGE_KEY"\nprice_in = 1.0\n')
        result = cli("run", "relationship-levy", "--model", "openai:test", "--base-url", tested.base_url,
                     "--reader-judge", "openai:judge", "--config", str(cfg), "--cache-dir", str(tmp_path),
                     "--sample-k", "4", "--quiet", "--json", env={"JUDGE_KEY": judge_key})
        assert result.exit_code == 0, result.output
        assert judge.total_requests > 0
    judge_run = json.loads(result.output)["run"]["reader_judge"]
    assert judge_run["cost_usd"] == pytest.approx(judge_run["prompt_tokens"] / 1e6)


# -- genderprobe check ----------------------------------------------------------------


def test_check_sends_one_request_and_writes_the_store_once(tmp_path):
    with OpenAITestServer() as server:
        result = cli("check", "--model", "openai:test", "--base-url", server.base_url, "--cache-dir", str(tmp_path))
        assert result.exit_code == 0, result.output
        assert server.total_requests == 1
        assert "writable" in result.output and f"at {server.base_url}" in result.output
    with OpenAITestServer() as server:
        server.faults.always("401")
        result = cli("check", "--model", "openai:test", "--base-url", server.base_url, "--cache-dir", str(tmp_path))
        assert result.exit_code == 2 and "rejected the key" in result.output
        assert server.total_requests == 1


def test_check_refuses_a_store_locked_by_another_process(tmp_path):
    Store(tmp_path / "responses.sqlite3").close()
    holder = sqlite3.connect(tmp_path / "responses.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(UserError):
            with Store(tmp_path / "responses.sqlite3", timeout=0.1) as store:
                store.check_writable()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
