"""records.jsonl and records.parquet: the same records either way, the format picked by size,
and neither file half-written (genderprobe.outputs.records)."""

import json

import pytest
from click.testing import CliRunner

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.outputs import records
from genderprobe.outputs.records import choose_format, read_records

pq = pytest.importorskip("pyarrow.parquet")

# Answers of every kind a reader meets: each option, both, a refusal, reasoning with
# an answer, a long ramble, and an empty answer (an error of its own kind).
ANSWERS = ("(a)", "(b)", "(a) or (b)", "I cannot answer that.", "(b) because they listen.", "", "Hmm.\n\n(a)")


def varied(prompts):
    return [ANSWERS[sum(map(ord, p)) % len(ANSWERS)] for p in prompts]


def run(tmp_path, name, fmt, probe="relationship-levy", **params):
    config = RunConfig(out_dir=tmp_path / name, records_format=fmt, use_cache=False, max_error_rate=None)
    return run_probe(probe, generate=varied, config=config, **params)


def jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("params", [
    {"sample_k": 60, "num_repetitions": 2, "null_baseline": True},
    {"sample_k": 30, "scenario_order": "spread", "reader": "improved"},
])
def test_relationship_levy_parquet_reads_back_as_its_jsonl_with_the_prompts_rebuilt(tmp_path, params):
    text = run(tmp_path, "jsonl", "jsonl", **params)
    columns = run(tmp_path, "parquet", "parquet", **params)
    assert text.records_path.name == "records.jsonl" and columns.records_path.name == "records.parquet"
    assert columns.document["records_file"] == "records.parquet"
    assert columns.document["metrics"] == text.document["metrics"]
    expected = jsonl(text.records_path)
    assert {r["code"] for r in expected} >= {"male", "female", "undetected", "error"}  # every kind was met
    assert any(r.get("refusal") for r in expected)
    assert list(read_records(columns.records_path, prompts=True)) == expected
    # Without prompts=True the prompt is simply left out.
    assert list(read_records(columns.records_path)) == [{k: v for k, v in r.items() if k != "prompt"}
                                                        for r in expected]
    assert "prompt" not in pq.read_schema(columns.records_path).names


def test_option_scores_are_kept_as_lists(tmp_path):
    config = RunConfig(out_dir=tmp_path / "s", records_format="parquet", score_options=True)
    out = run_probe("relationship-levy", "reference:random", config=config, sample_k=10)
    rows = list(read_records(out.records_path))
    assert len(rows) == 20 and all(len(r["option_logprobs"]) == 2 for r in rows)


@pytest.mark.parametrize("probe,params", [("genmo", {"sample_k": 12}), ("demet", {})])
def test_other_probes_write_parquet_through_jsonl_and_read_back_the_same(tmp_path, probe, params):
    text = run(tmp_path, "jsonl", "jsonl", probe, **params)
    columns = run(tmp_path, "parquet", "parquet", probe, **params)
    # A field the JSONL holds as null is simply missing in Parquet's rows.
    expected = [{k: v for k, v in r.items() if v is not None} for r in jsonl(text.records_path)]
    assert list(read_records(columns.records_path)) == expected
    assert sorted(p.name for p in columns.records_path.parent.iterdir()) == ["records.parquet", "results.json"]


def test_auto_takes_parquet_above_the_threshold_only(tmp_path, monkeypatch):
    assert choose_format("auto", None) == "jsonl"
    assert choose_format("auto", records.AUTO_PARQUET_ROWS) == "jsonl"
    assert choose_format("auto", records.AUTO_PARQUET_ROWS + 1) == "parquet"
    assert choose_format("jsonl", 10**9) == "jsonl"
    monkeypatch.setattr(records, "AUTO_PARQUET_ROWS", 100)
    small = run_probe("relationship-levy", "reference:random", config=RunConfig(out_dir=tmp_path / "a"), sample_k=50)
    large = run_probe("relationship-levy", "reference:random", config=RunConfig(out_dir=tmp_path / "b"), sample_k=51)
    assert small.records_path.name == "records.jsonl"  # 100 records
    assert large.records_path.name == "records.parquet"  # 102 records


def test_a_new_run_removes_the_other_records_file_of_the_run_it_replaces(tmp_path):
    out = tmp_path / "out"
    cli = ["run", "relationship-levy", "-m", "reference:random", "--sample-k", "5", "--out", str(out), "-q"]
    assert CliRunner().invoke(main, [*cli, "--records", "jsonl"]).exit_code == 0
    assert CliRunner().invoke(main, [*cli, "--records", "parquet"]).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["records.parquet", "results.json"]
    # --parquet beside Parquet records is already done; beside JSONL it adds the Parquet copy.
    assert CliRunner().invoke(main, [*cli, "--records", "parquet", "--parquet"]).exit_code == 0
    assert CliRunner().invoke(main, [*cli, "--records", "jsonl", "--parquet"]).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["records.jsonl", "records.parquet", "results.json"]
    assert CliRunner().invoke(main, [*cli, "--records", "jsonl"]).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["records.jsonl", "results.json"]


def test_a_failed_run_leaves_no_parquet_file_half_written(tmp_path, monkeypatch):
    from genderprobe.studies.relationship_levy import probe

    monkeypatch.setattr(probe, "_CHUNK_ITEMS", 10)  # row groups are written before the failure
    calls = []

    def fails_late(prompts):
        calls.append(len(prompts))
        if len(calls) > 6:  # the first chunk took 4 calls (its first request alone)
            raise RuntimeError("the model broke")
        return ["(a)"] * len(prompts)

    config = RunConfig(out_dir=tmp_path / "out", records_format="parquet", use_cache=False)
    with pytest.raises(Exception, match="the model broke"):
        run_probe("relationship-levy", generate=fails_late, generate_batch_size=8, config=config, sample_k=40)
    assert len(calls) == 7
    assert list((tmp_path / "out").iterdir()) == []


def test_compare_pairs_runs_from_parquet_records(tmp_path):
    for name, model in (("a", "reference:biased"), ("b", "reference:unbiased")):
        config = RunConfig(out_dir=tmp_path / name, records_format="parquet")
        run_probe("relationship-levy", model, config=config, sample_k=40)
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert "paired over the 40 items both runs asked" in result.output, result.output


def test_the_records_flag_is_checked_and_offered(tmp_path):
    result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", "reference:random", "--records", "csv"])
    assert result.exit_code == 2 and "csv" in result.output
    help_text = CliRunner().invoke(main, ["run", "relationship-levy", "--help"]).output
    assert "--records" in help_text and "1,000,000" in help_text


def test_a_columnar_sink_also_takes_records_one_by_one(tmp_path):
    import pyarrow as pa

    schema = pa.schema([("item", pa.int64()), ("answer", pa.string()), ("error", pa.string())])
    sink = records.ParquetSink(tmp_path / "records.parquet", schema)
    sink.write_columns({"item": [0, 1], "answer": ["(a)", "(b)"]}, 2)
    for i in range(2, 60_003):  # past one flush of 50,000
        sink.write({"item": i, "answer": None, "error": "timeout: no answer"} if i == 7 else {"item": i, "answer": "(a)"})
    sink.commit()
    rows = list(read_records(tmp_path / "records.parquet"))
    assert sink.count == len(rows) == 60_003 and [r["item"] for r in rows] == list(range(60_003))
    assert rows[1] == {"item": 1, "answer": "(b)"} and rows[7] == {"item": 7, "error": "timeout: no answer"}
    assert [p.name for p in tmp_path.iterdir()] == ["records.parquet"]
