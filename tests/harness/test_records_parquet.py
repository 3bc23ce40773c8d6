import json

import pytest
from click.testing import CliRunner

from genderprobe.interfaces.cli import main
from genderprobe.outputs.records_parquet import jsonl_to_parquet

pq = pytest.importorskip("pyarrow.parquet")


def test_parquet_records_hold_the_same_rows_as_the_jsonl(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", "reference:random", "--sample-k", "40",
                                       "--repetitions", "2", "--out", str(out), "--parquet", "--quiet"])
    assert result.exit_code == 0, result.output
    jsonl = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    table = pq.read_table(out / "records.parquet")
    assert table.num_rows == len(jsonl) == 160
    assert table.to_pylist() == jsonl
    assert str(table.schema.field("item").type) == "int64"
    assert sorted(p.name for p in out.iterdir()) == ["records.jsonl", "records.parquet", "results.json"]


def test_mixed_and_nested_values_and_fields_seen_late(tmp_path):
    rows = [
        {"item": 0, "score": 1, "answer": "(a)"},
        {"item": 1, "score": 0.5, "answer": None, "option_logprobs": [-0.1, -2.3]},
        {"item": 2, "score": None, "answer": "(b)", "error": "timeout: no answer", "extra": {"k": 1}},
        {"item": 3, "flag": True, "mixed": "text"},
        {"item": 4, "mixed": 7},
    ]
    src = tmp_path / "r.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    n = jsonl_to_parquet(src, tmp_path / "r.parquet", batch_rows=2)  # several batches, one schema
    got = pq.read_table(tmp_path / "r.parquet").to_pylist()
    assert n == 5
    assert [r["score"] for r in got] == [1.0, 0.5, None, None, None]
    assert got[1]["option_logprobs"] == "[-0.1, -2.3]"
    assert got[2]["error"] == "timeout: no answer" and got[0]["error"] is None
    assert got[2]["extra"] == '{"k": 1}'
    assert [r["mixed"] for r in got] == [None, None, None, "text", "7"]
    assert got[3]["flag"] is True


def test_parquet_needs_an_output_folder():
    result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", "reference:random", "--sample-k", "5",
                                       "--parquet"])
    assert result.exit_code == 2
    assert "--parquet" in result.output and "--out" in result.output
