"""``genderprobe cache info|clear|export``."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner

from genderprobe.engine.store import Store, request_key
from genderprobe.interfaces.cli import main
from genderprobe.models import Request, Response


def invoke(*args: str, **kw):
    return CliRunner().invoke(main, list(args), **kw)


def fill(cache, model: str = "openai:gpt-x@https://api.example/v1", n: int = 3) -> None:
    with Store(cache / "responses.sqlite3") as store:
        store.put_many(model, [
            (request_key(model, Request.user(f"p{i}")), Response(text=f"answer {i}", prompt_tokens=10, completion_tokens=2))
            for i in range(n)
        ])
        store.put_many(model, [(request_key(model, Request.user("bad")), Response.failure("timeout", "no answer within 1 s"))])


def test_info_on_a_missing_store_says_so_without_creating_it(tmp_path):
    result = invoke("cache", "info", "--cache-dir", str(tmp_path / "c"))
    assert result.exit_code == 0
    assert "No response store" in result.output
    assert not (tmp_path / "c").exists()


def test_info_lists_models_tokens_and_errors(tmp_path):
    fill(tmp_path)
    result = invoke("cache", "info", "--cache-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "Answers: 3" in result.output and "Errors recorded: 1 (timeout 1)" in result.output
    assert "openai:gpt-x@https://api.example/v1" in result.output
    data = json.loads(invoke("cache", "info", "--cache-dir", str(tmp_path), "--json").output)
    assert data["models"][0]["prompt_tokens"] == 30


def test_info_uses_the_environment_and_the_config_file(tmp_path, monkeypatch):
    monkeypatch.setenv("GENDERPROBE_CACHE_DIR", str(tmp_path / "env"))
    fill(tmp_path / "env", n=2)
    assert "Answers: 2" in invoke("cache", "info").output
    fill(tmp_path / "conf", n=5)
    (tmp_path / "c.toml").write_text(f'[run]\ncache_dir = "{tmp_path / "conf"}"\n')
    assert "Answers: 5" in invoke("cache", "info", "--config", str(tmp_path / "c.toml")).output


def test_clear_one_model_or_all_with_confirmation(tmp_path):
    fill(tmp_path, "openai:a@http://h/v1")
    fill(tmp_path, "openai:b@http://h/v1", n=2)
    refused = invoke("cache", "clear", "--cache-dir", str(tmp_path))
    assert refused.exit_code == 2 and "--yes" in refused.output
    result = invoke("cache", "clear", "--cache-dir", str(tmp_path), "--model", "openai:a", "--yes")
    assert result.exit_code == 0 and "Deleted 3 answers and 1 error records" in result.output
    none = invoke("cache", "clear", "--cache-dir", str(tmp_path), "--model", "openai:zzz", "--yes")
    assert "holds nothing for openai:zzz" in none.output
    assert "Answers: 2" in invoke("cache", "info", "--cache-dir", str(tmp_path)).output
    assert "Deleted 2 answers" in invoke("cache", "clear", "--cache-dir", str(tmp_path), "-y").output


def test_export_writes_json_lines(tmp_path):
    fill(tmp_path)
    out = tmp_path / "exp" / "answers.jsonl"
    result = invoke("cache", "export", str(out), "--cache-dir", str(tmp_path))
    assert result.exit_code == 0 and "Exported 3 answers" in result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["text"] for r in rows) == ["answer 0", "answer 1", "answer 2"]
    assert all(len(r["key"]) == 64 for r in rows)
    stdout = invoke("cache", "export", "-", "--cache-dir", str(tmp_path))
    assert stdout.exit_code == 0 and stdout.output.count('"text"') == 3


def test_unreadable_stores_give_one_sentence_and_exit_2(tmp_path):
    (tmp_path / "responses.sqlite3").write_bytes(b"not a database at all\n" * 200)
    for args in (("info",), ("export", str(tmp_path / "o.jsonl")), ("clear", "--yes")):
        result = invoke("cache", *args, "--cache-dir", str(tmp_path))
        assert result.exit_code == 2, result.output
        assert "not a readable genderprobe store" in result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "o.jsonl").exists()
    missing = invoke("cache", "export", str(tmp_path / "o.jsonl"), "--cache-dir", str(tmp_path / "none"))
    assert missing.exit_code == 2 and "no response store" in missing.output


def test_export_gets_the_usual_permissions_and_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    fill(tmp_path)
    out = tmp_path / "exp" / "answers.jsonl"
    assert invoke("cache", "export", str(out), "--cache-dir", str(tmp_path)).exit_code == 0
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask

    def disk_full(self, f, model=None):
        f.write("{partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Store, "export_jsonl", disk_full)
    failed = invoke("cache", "export", str(tmp_path / "exp" / "again.jsonl"), "--cache-dir", str(tmp_path))
    assert failed.exit_code == 2, failed.output
    assert "No space left on device" in failed.output and "Traceback" not in failed.output
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == ["answers.jsonl"]
