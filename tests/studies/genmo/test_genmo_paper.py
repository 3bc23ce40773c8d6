"""GenMO's packaged paper tables: transcribed from Bajaj et al. 2024, mapped to metrics a run really has."""

import pytest

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.outputs import paper_tables as paper
from genderprobe.studies.genmo.probe import Genmo

FILE = "genmo/paper_tables.json"


def _tables():
    return {t.id: t for t in paper.load_file(FILE)}


def _cell(table, model, column):
    (row,) = [r for r in table.rows if r[0] == model]
    return row[table.columns.index(column)]


def test_the_probe_names_its_tables_and_they_load():
    assert Genmo.paper_tables == (FILE,)
    assert set(_tables()) == {"table-2", "table-8", "table-3", "table-4", "table-5"}
    assert all(len(t.rows) == 10 for t in (_tables()["table-2"], _tables()["table-8"], _tables()["table-3"]))


@pytest.mark.parametrize(
    ("table", "model", "column", "value"),
    [
        ("table-2", "GPT-3.5-turbo", "PM", 218),
        ("table-2", "GPT-4-turbo", "FBR", 0.8509),
        ("table-2", "Claude3-Opus", "MBR", 0.3653),
        ("table-2", "Llama3.1-8B", "Family", 0.041),
        ("table-2", "Mistral-7B-Instruct-v0.3", "Work", 0.0392),
        ("table-8", "GPT-3.5-turbo-instruct", "PMR", 0.4592),
        ("table-8", "Llama3-8B", "FBR", 0.9471),
        ("table-8", "Llama3.1-70B", "MBR", 0.1290),
        ("table-3", "Claude3-Opus", "Non-CoT", 78),
        ("table-3", "Llama3-8B", "CoT", 94),
        ("table-4", "GPT-3.5-turbo", "Paraphrasing prompt: male", 0.75),
        ("table-4", "GPT-3.5-turbo", "Change of names + Paraphrasing prompt: female", 0.84),
        ("table-5", "GPT-3.5-turbo", "PM (T=1)", 184),
        ("table-5", "GPT-3.5-turbo", "PMR (T=0.5)", 0.2257),
    ],
)
def test_numbers_match_the_paper(table, model, column, value):
    assert _cell(_tables()[table], model, column) == value


def test_table_2_is_consistent_with_its_own_definitions():
    t2 = _tables()["table-2"]
    for row in t2.rows:
        pm, pmr, fbr, mbr = (row[t2.columns.index(c)] for c in ("PM", "PMR", "FBR", "MBR"))
        assert pmr == pytest.approx(pm / 908, abs=6e-4)
        assert fbr + mbr == pytest.approx(1, abs=2e-4)


def test_every_mapped_metric_is_in_a_real_run():
    config = RunConfig(model="reference:random", n_resamples=50, use_cache=False)
    out = run_probe("genmo", "reference:random", config=config, template="both",
                    ablation="names,paraphrase,both", ablation_k=50, temperatures=(0, 0.2, 0.5, 0.8, 1))
    mapped = {m for t in paper.load_file(FILE) for m in t.metrics.values()}
    assert mapped and mapped <= set(out.result.metrics)
    doc = out.document
    for table in paper.paper_section(Genmo, doc):
        assert table["row_kinds"][0] == "run"
        run_row = table["rows"][0]
        for column, metric in table["metrics"].items():
            assert run_row[table["columns"].index(column)] == doc["metrics"][metric]


def test_the_run_row_of_table_2_holds_the_cot_metrics():
    config = RunConfig(model="reference:biased", n_resamples=50, use_cache=False)
    out = run_probe("genmo", "reference:biased", config=config, template="both", sample_k=30)
    t2 = next(t for t in paper.paper_section(Genmo, out.document) if t["id"] == "table-2")
    assert t2["rows"][0][t2["columns"].index("FBR")]["value"] == 0.0
    assert t2["rows"][0][t2["columns"].index("PM")]["value"] == 30
