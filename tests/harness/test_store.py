"""The response store: keys, round trips, errors, and refusing what it cannot read."""

from __future__ import annotations

import math
import sqlite3

import pytest

from genderprobe.engine.store import SCHEMA_VERSION, Store, request_key
from genderprobe.errors import UserError
from genderprobe.models import GenerationParams, Request, Response


def req(prompt: str = "Who is right, (a) Adam or (b) Emma?", **kw) -> Request:
    return Request.user(prompt, options=("(a)", "(b)"), **kw)


def test_key_depends_on_everything_that_determines_the_answer():
    base = request_key("openai:m@u", req())
    assert base == request_key("openai:m@u", req())
    variants = [
        request_key("openai:other@u", req()),
        request_key("openai:m@u", req("another prompt")),
        request_key("openai:m@u", req(system="Be brief.")),
        request_key("openai:m@u", req(params=GenerationParams(temperature=0.7))),
        request_key("openai:m@u", req(params=GenerationParams(seed=1))),
        request_key("openai:m@u", req(repetition=1)),
        request_key("openai:m@u", req(score_options=True)),
    ]
    assert len({base, *variants}) == len(variants) + 1
    # The calibration oracle is not part of what the model sees.
    assert request_key("m", Request.user("p", oracle={"biased": "(a)"})) == request_key("m", Request.user("p"))


def test_answers_round_trip_and_errors_are_not_answers(tmp_path):
    k1, k2, k3 = (request_key("m", req(f"p{i}")) for i in range(3))
    with Store(tmp_path / "s.sqlite3") as store:
        store.put_many("m", [
            (k1, Response(text="(a)", prompt_tokens=12, completion_tokens=1)),
            (k2, Response(text="(b)", option_logprobs=(-0.1, -math.inf))),
            (k3, Response.failure("timeout", "no answer within 60 s")),
        ])
    with Store(tmp_path / "s.sqlite3") as store:
        got = store.get_many([k1, k2, k3])
        assert set(got) == {k1, k2}
        assert got[k1].text == "(a)" and got[k1].prompt_tokens == 12 and got[k1].cached
        assert got[k2].option_logprobs == (-0.1, -math.inf)
        info = store.info()
        assert info["responses"] == 2 and info["errors"] == 1 and info["error_kinds"] == {"timeout": 1}
        # A later answer for the failed key is an answer; the error stays as history.
        store.put_many("m", [(k3, Response(text="(a)"))])
        assert set(store.get_many([k3])) == {k3}


def test_get_many_handles_more_keys_than_sqlite_binds(tmp_path):
    keys = [request_key("m", req(f"p{i}")) for i in range(2500)]
    with Store(tmp_path / "s.sqlite3") as store:
        store.put_many("m", [(k, Response(text=str(i))) for i, k in enumerate(keys)])
        got = store.get_many(keys)
    assert len(got) == 2500 and got[keys[2100]].text == "2100"


def test_clear_and_export_by_model(tmp_path):
    import io
    import json

    with Store(tmp_path / "s.sqlite3") as store:
        store.put_many("openai:a@http://x/v1", [(request_key("a", req()), Response(text="A"))])
        store.put_many("openai:ab@http://x/v1", [(request_key("ab", req()), Response(text="AB"))])
        out = io.StringIO()
        assert store.export_jsonl(out, "openai:a") == 1
        assert json.loads(out.getvalue())["text"] == "A"
        assert store.clear("openai:a") == (1, 0)  # "openai:ab" is another model
        assert store.info()["responses"] == 1
        assert store.clear() == (1, 0)


def test_newer_schema_is_refused_not_replaced(tmp_path):
    path = tmp_path / "s.sqlite3"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    before = path.read_bytes()
    with pytest.raises(UserError, match="newer genderprobe"):
        Store(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"this is not a database, it is a shopping list\n" * 100, "not a readable genderprobe store"),
        (b"SQLite format 3\x00" + b"\xff" * 4000, "not a readable genderprobe store"),
    ],
)
def test_corrupt_file_is_reported_in_one_sentence_and_kept(tmp_path, content, message):
    path = tmp_path / "s.sqlite3"
    path.write_bytes(content)
    with pytest.raises(UserError, match=message) as info:
        Store(path)
    assert "\n" not in str(info.value)
    assert path.read_bytes() == content


def test_foreign_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "s.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(UserError, match="not a genderprobe response store"):
        Store(path)


def test_locked_store_is_reported(tmp_path):
    path = tmp_path / "s.sqlite3"
    Store(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with Store(path, timeout=0.1) as store:
            with pytest.raises(UserError, match="locked by another process"):
                store.put_many("m", [(request_key("m", req()), Response(text="(a)"))])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # An exclusive lock in rollback-journal mode blocks even opening.
    legacy = tmp_path / "legacy.sqlite3"
    holder = sqlite3.connect(legacy, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(UserError, match="locked by another process"):
            Store(legacy, timeout=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_missing_store_is_not_created_when_asked_not_to(tmp_path):
    with pytest.raises(UserError, match="no response store"):
        Store(tmp_path / "absent.sqlite3", create=False)
    assert not (tmp_path / "absent.sqlite3").exists()
    with pytest.raises(UserError, match="is a folder"):
        Store(tmp_path)


# -- look before writing: a file that is not a sound store keeps its bytes ----------------


def _filled_store(path, n=200):
    requests = [req(f"p{i} " + "x" * 300) for i in range(n)]
    with Store(path) as store:
        store.put_many("m", [(request_key("m", r), Response(text="(a)")) for r in requests],
                       {request_key("m", r): r for r in requests})
    return requests


def _run_on(folder):
    from genderprobe.interfaces.api import RunConfig, run_probe
    from genderprobe.models.function import FunctionModel  # noqa: F401  (a cacheable model needs no server)

    config = RunConfig(cache_dir=folder, n_resamples=20)
    return run_probe("relationship-levy", generate=lambda prompts: ["(a)"] * len(prompts), model="function:a",
                     config=config, sample_k=5)


def test_a_store_damaged_in_its_middle_is_refused_before_any_write(tmp_path):
    """A store with garbage in a middle page had pages 1-2 rewritten (the run's write check)
    before the damage was found; now it is checked read-only first and keeps its bytes."""
    path = tmp_path / "responses.sqlite3"
    _filled_store(path)
    data = bytearray(path.read_bytes())
    data[5 * 4096 : 5 * 4096 + 2000] = b"\xde\xad\xbe\xef" * 500
    path.write_bytes(bytes(data))
    with pytest.raises(UserError, match="is damaged") as info:
        _run_on(tmp_path)
    assert "\n" not in str(info.value) and "left as it is" in str(info.value)
    assert path.read_bytes() == bytes(data)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["responses.sqlite3"]


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_another_applications_sqlite_file_is_refused_and_keeps_its_bytes(tmp_path, journal):
    """It was switched to WAL mode (its header rewritten) before being refused."""
    path = tmp_path / "responses.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA journal_mode={journal}")
    db.execute("CREATE TABLE meta (key TEXT, value TEXT)")  # a name a store uses too
    db.execute("CREATE TABLE invoices (id INTEGER, total REAL)")
    db.executemany("INSERT INTO invoices VALUES (?, ?)", [(i, i * 1.5) for i in range(500)])
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(UserError, match="not a genderprobe response store"):
        _run_on(tmp_path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["responses.sqlite3"]


def test_a_sound_store_is_opened_as_before(tmp_path):
    path = tmp_path / "responses.sqlite3"
    requests = _filled_store(path, n=3)
    with Store(path) as store:
        assert len(store.get_many([request_key("m", r) for r in requests])) == 3


def _open_new_store(path: str, start: float) -> str:
    """Open the store at ``path`` once ``start`` (a wall-clock time) has come: what went wrong, or ""."""
    import time as _time

    from genderprobe.errors import UserError as _UserError

    _time.sleep(max(0.0, start - _time.time()))
    try:
        Store(path, timeout=10).close()
    except _UserError as exc:
        return str(exc)
    return ""


def test_runs_opening_a_new_store_at_the_same_moment_all_open_it(tmp_path):
    """Two runs started together on a fresh store raced: one saw the tables without their schema
    version ("unknown schema version") or was refused at once while the other switched it to WAL."""
    import concurrent.futures
    import multiprocessing
    import time as _time

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(6, mp_context=context) as pool:
        list(pool.map(abs, range(6)))  # the workers are up before the race starts
        for trial in range(24):
            path = str(tmp_path / f"store{trial}.sqlite3")
            start = _time.time() + 0.12
            # Staggered by a millisecond or two: a later run meets an earlier one halfway through.
            starts = [start + i * 0.0007 * (trial % 5) for i in range(6)]
            said = list(pool.map(_open_new_store, [path] * 6, starts))
            assert said == [""] * 6, said
