"""DeMET's published tables packaged as data, the probes' headline declarations, and the run beside the paper."""

import re

import pytest

from genderprobe.contract import Headline
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.outputs.paper_tables import load_file, tables_for
from genderprobe.studies.demet.names_probe import DemetNames
from genderprobe.studies.demet.probe import Demet


def _table(path, table_id):
    return next(t for t in load_file(path) if t.id == table_id)


def _row(table, model):
    return next(r for r in table.rows if r[0] == model)


def _run(probe, model, **params):
    return run_probe(probe, model, config=RunConfig(model=model, use_cache=False, n_resamples=50), **params)


def test_tables_load_and_numbers_match_the_paper():
    assert [t.id for t in tables_for(Demet)] == ["table-3", "table-10", "table-6"]
    assert [t.id for t in tables_for(DemetNames)] == ["table-5"]
    t3 = _table("demet/paper_tables.json", "table-3")
    assert len(t3.rows) == 13
    assert _row(t3, "text-davinci-002")[4:] == [1.062, 0.897, 1.021, 1.269]
    assert _row(t3, "flan-t5-xxl") == ["flan-t5-xxl", "11.3B", None, "No", 0.315, 0.224, 0.169, 0.552]
    assert _row(t3, "falcon-40b-instruct")[-1] == 0.300  # printed "0.300:"
    t10 = _table("demet/paper_tables.json", "table-10")
    assert len(t10.rows) == 9
    assert _row(t10, "llama-3-70b-chat")[4:] == [0.895, 0.699, 0.901, 1.084]
    t6 = _table("demet/paper_tables.json", "table-6")
    assert _row(t6, "gpt-3.5-turbo")[1:] == [0.233, 0.256, 0.231, 0.213, 0.536, 0.246, 0.785, 0.577]
    assert t6.columns[1] == "T overall" and t6.columns[5] == "E overall"
    t5 = _table("demet/names_paper_tables.json", "table-5")
    assert _row(t5, "gpt-4o") == ["gpt-4o", 1.0, 1.0, 0.3]
    assert len(t5.rows) == 10


def test_overall_column_is_the_absolute_mean_of_the_pair_columns():
    # The reading of the lost headers: overall first, Eq. 2 being the mean of |pair bias|.
    for t in load_file("demet/paper_tables.json"):
        for start in [i for i, c in enumerate(t.columns) if c.endswith("overall")]:
            for r in t.rows:
                if r[0] == "llama-2-7b-chat" and t.id == "table-3":
                    continue  # its W-M is printed 0.76 (a digit lost)
                overall, *pairs = r[start:start + 4]
                assert overall == pytest.approx(sum(abs(p) for p in pairs) / 3, abs=0.0015), (t.id, r[0])


def _run_rows(doc):
    return {t["id"]: t["rows"][t["row_kinds"].index("run")] for t in doc["paper"]}


def _cells(doc, table_id):
    """The run row's cells of the mapped columns, each with the breakdown group it maps to."""
    table = next(t for t in doc["paper"] if t["id"] == table_id)
    run_row = _run_rows(doc)[table_id]
    return [(run_row[table["columns"].index(col)], ref) for col, ref in table["metrics"].items()]


@pytest.mark.parametrize(
    ("scenarios", "filled", "empty"),
    [("human", ["table-3", "table-6"], ["table-10"]), ("gpt4", ["table-10"], ["table-3", "table-6"]),
     ("all", ["table-3", "table-6", "table-10"], [])],
)
def test_run_row_fills_the_tables_of_its_scenario_set(scenarios, filled, empty):
    out = _run("demet", "reference:biased-female", scenarios=scenarios, per_type=2)
    doc = out.document
    for tid in filled:
        for cell, ref in _cells(doc, tid):
            # Each cell is the breakdown group its column maps to, never a copy kept as a metric.
            assert cell is not None and cell == doc["breakdowns"][ref["breakdown"]][ref["group"]], (tid, ref)
    for tid in empty:
        assert all(cell is None for cell, _ in _cells(doc, tid)), tid
    paper = {t["id"]: t for t in doc["paper"]}
    t3 = paper["table-3"]
    if "table-3" in filled:
        run_row = t3["rows"][0]
        # overall, bias(W,N), bias(N,M), bias(W,M) of a model that always sides with the woman
        assert [c["value"] for c in run_row[4:]] == pytest.approx([4 / 3, 2, 0, 2])
    if "table-6" in filled:
        t6 = paper["table-6"]["rows"][0]
        assert [c["value"] for c in t6[1:]] == pytest.approx([4 / 3, 2, 0, 2] * 2)


def test_a_run_prints_no_copies_of_its_scores_per_set():
    metrics = _run("demet", "reference:biased-female", per_type=2).document["metrics"]
    assert not [m for m in metrics if m.startswith(("human_", "gpt4_"))]
    # Eq. 2, its signed mean and its folded interval, 3 pair biases, 9 s(A-B), same-group
    # mean, 2 rates, then the undetected and refusal rates of the nine pairings.
    assert len(metrics) == 18 + 2 * 9


def test_a_run_of_one_set_fills_its_table_with_the_runs_own_scores():
    doc = _run("demet", "reference:biased", scenarios="gpt4", per_type=2).document
    t10 = [cell for cell, _ in _cells(doc, "table-10")]
    assert t10 == [doc["metrics"][m] for m in ("mixed_gender_bias", "bias_w_n", "bias_n_m", "bias_w_m")]


def _scenario_marks(source):
    """A piece of each scenario's text that no scenario of the other set has."""
    from genderprobe.studies.demet.dataset import scenarios

    return [max(re.split(r"NAME[12]", s.text), key=len).strip() for s in scenarios(source)]


def test_an_all_run_fills_each_table_from_its_own_set_not_the_pooled_scores():
    from instruments import ScriptedModel

    from genderprobe.contract import RunContext
    from genderprobe.data.name_lists import levy_names
    from genderprobe.engine.runner import Runner
    from genderprobe.outputs.paper_tables import paper_section

    gpt4 = _scenario_marks("gpt4")
    women = set(levy_names()["women"])

    def answer(prompt, _):
        # No bias on the human-written scenarios (always NAME1); always the woman on the GPT-4 ones.
        if not any(mark in prompt for mark in gpt4):
            return "1"
        name1 = re.search(r"\n1\. (.+)\n2\. ", prompt).group(1)
        return "1" if name1 in women else "2"

    result = Demet(scenarios="all", per_type=2).run(RunContext(ask=Runner(ScriptedModel(answer)), n_resamples=50))
    doc = {
        "model": "test:scripted",
        "metrics": {m: e.to_json() for m, e in result.metrics.items()},
        "breakdowns": {d: {g: e.to_json() for g, e in gs.items()} for d, gs in result.breakdowns.items()},
    }
    doc["paper"] = paper_section(Demet, doc)
    rows = _run_rows(doc)
    t3 = [c["value"] for c in rows["table-3"][4:]]
    t10 = [c["value"] for c in rows["table-10"][4:]]
    t6 = [c["value"] for c in rows["table-6"][1:]]
    assert t3 == pytest.approx([0, 0, 0, 0]) and t6 == pytest.approx([0] * 8)
    assert t10 == pytest.approx([4 / 3, 2, 0, 2])
    pooled = doc["metrics"]["mixed_gender_bias"]["value"]
    assert 0 < pooled < 4 / 3 and pooled not in (t3[0], t10[0])
    for tid in ("table-3", "table-10", "table-6"):
        for cell, ref in _cells(doc, tid):
            assert cell == doc["breakdowns"][ref["breakdown"]][ref["group"]]


def test_names_run_row_beside_table_5():
    # reference:first-option answers "male", the first option, to every name: F 0, M 1, N 1.
    doc = _run("demet-names", "reference:first-option").document
    t5 = doc["paper"][0]
    assert t5["row_kinds"][0] == "run"
    assert [c["value"] for c in t5["rows"][0][1:]] == [0.0, 1.0, 1.0]


def test_headlines_are_declared():
    assert [h.metric for h in Demet.headline] == ["mixed_gender_bias", "bias_w_m", "bias_w_n", "bias_n_m"]
    assert Demet.headline[0].better == "lower"  # the mean of absolute values: 0 is no bias
    assert {h.better for h in Demet.headline[1:]} == {"zero"}
    assert Demet.view_parameters == ()
    assert [h.metric for h in DemetNames.headline] == ["women_classified_female", "men_classified_male"]
    assert all(isinstance(h, Headline) and h.better == "higher" for h in DemetNames.headline)
    doc = _run("demet", "reference:unbiased", per_type=2).document
    assert [h["metric"] for h in doc["headline"]["metrics"]] == [h.metric for h in Demet.headline]
    for h in doc["headline"]["metrics"]:
        assert h["metric"] in doc["metrics"]
