"""The genmo probe end to end: calibration, ablations, records, bad input."""

import json
from collections.abc import Sequence

import numpy as np
import pytest
from click.testing import CliRunner

from genderprobe.contract import ListSink, RunContext
from genderprobe.engine.runner import Runner
from genderprobe.errors import UserError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.models.base import Request, Response, SyncBatchModel
from genderprobe.studies.genmo.ablation import PARAPHRASED_TEMPLATES
from genderprobe.studies.genmo.probe import Genmo


def _run(model: str, **params):
    config = RunConfig(model=model, n_resamples=200, use_cache=False)
    return run_probe("genmo", model, config=config, **params)


def _values(out, *names):
    return tuple(out.result.metrics[n].value for n in names)


def test_unbiased_reference_has_no_mismatch():
    out = _run("reference:unbiased", template="both")
    assert _values(out, "pm", "pmr", "noncot_pm", "noncot_pmr") == (0.0, 0.0, 0.0, 0.0)
    assert out.result.counts["pairs_detected"] == 907  # pair 562 (identical stories) left out
    # the persona spreads its shared stance over all four answers
    assert {r["stance"] for r in out.records} == {"moral", "immoral", "both", "cant_say"}


def test_biased_female_reference():
    out = _run("reference:biased-female")
    assert _values(out, "pm", "pmr", "fbr", "mbr") == (907.0, 1.0, 1.0, 0.0)
    assert all(out.result.metrics[f"pmr_{e}"].value == 1.0 for e in ("work", "relationship", "family", "other"))
    assert out.result.metrics["fbr_sign_test_p"].value < 1e-100


def test_biased_reference_mirrors_it():
    out = _run("reference:biased", template="noncot")
    assert _values(out, "noncot_pm", "noncot_pmr", "noncot_fbr", "noncot_mbr") == (907.0, 1.0, 0.0, 1.0)


def test_random_reference_is_balanced():
    out = _run("reference:random")
    pmr, fbr = _values(out, "pmr", "fbr")
    assert 0.55 < pmr < 0.70  # 1 - 3/8 for independent uniform stances
    assert 0.40 < fbr < 0.60
    assert out.result.metrics["fbr"].ci_low < 0.5 < out.result.metrics["fbr"].ci_high


def test_defaults_follow_the_paper():
    out = _run("reference:unbiased", sample_k=5)
    gen = out.document["parameters"]["generation"]
    assert gen["temperature"] == 0.0 and gen["max_tokens"] == 500 and isinstance(gen["seed"], int)
    assert out.document["parameters"]["probe"]["template"] == "cot"
    assert all("STANCE: ${YOUR_STANCE} EXPLANATION: ${REASON}" in r["prompt"] for r in out.records)


def test_both_templates_side_by_side():
    out = _run("reference:biased", template="both", sample_k=40)
    titles = [t.title for t in out.result.tables]
    assert any("Table 3" in t for t in titles) and any("Tables 2 and 8" in t for t in titles)
    paper = next(t for t in out.result.tables if "Tables 2 and 8" in t.title)
    assert [row[0] for row in paper.rows] == ["Non-CoT", "CoT"]
    assert {r["template"] for r in out.records} == {"noncot", "cot"}
    assert len(out.records) == 40 * 2 * 2


def _cell(v):
    return v if isinstance(v, (int, str)) else v.value


def test_tables_have_the_papers_layout():
    out = _run("reference:biased-female", template="both", sample_k=60, ablation="names,both", ablation_k=5,
               temperatures=(0, 1))
    tables = {t.title.split(" (")[0]: t for t in out.result.tables}
    t2 = tables["GenMO RQ1-RQ3"]
    assert t2.columns == ["template", "PM", "PMR", "FBR", "MBR", "Work", "Relationship", "Family", "Other"]
    assert [[_cell(c) for c in row] for row in t2.rows] == [["Non-CoT", 60, 1, 1, 0, 1, 1, 1, 1],
                                                              ["CoT", 60, 1, 1, 0, 1, 1, 1, 1]]
    t3 = tables["Non-CoT vs CoT"]
    assert t3.columns == ["", "Non-CoT", "CoT"] and [_cell(c) for c in t3.rows[0]] == ["PM", 60, 60]
    t4 = tables["Robustness"]
    assert t4.columns == ["Variation", "Male story", "Female story"]
    assert [[_cell(c) for c in row] for row in t4.rows] == [["Change of names", 1, 1],
                                                              ["Change of names + Paraphrasing prompt", 1, 1]]
    t5 = tables["Effect of temperature"]
    assert [[_cell(c) for c in row][:3] for row in t5.rows[:2]] == [["0", 60, 1], ["1", 60, 1]]
    assert t5.rows[2][0] == "mean of the other temperatures (1 run)" and t5.rows[2][1] == 60


def test_records_hold_what_the_issue_asks():
    out = _run("reference:biased-female", sample_k=3)
    assert len(out.records) == 6
    r = out.records[0]
    assert {"pair", "gender", "environment", "story", "answer", "stance", "prompt"} <= set(r)
    assert r["gender"] == "male" and r["stance"] == "immoral" and r["prompt"].startswith(r["story"])


def test_sample_k_is_a_seeded_subset():
    probe = Genmo(sample_k=50)
    a = [p.index for p in probe.selected_pairs(seed=0)]
    assert len(set(a)) == 50 and a == sorted(a)
    assert a == [p.index for p in Genmo(sample_k=50).selected_pairs(seed=0)]
    assert a != [p.index for p in probe.selected_pairs(seed=1)]
    assert set(p.index for p in Genmo(sample_k=30).selected_pairs(seed=0)) <= set(a)
    assert len(Genmo().selected_pairs(seed=5)) == 907
    assert len(Genmo(include_identical_pairs=True).selected_pairs(seed=5)) == 908


def test_robustness_ablation_calibration():
    out = _run("reference:unbiased", ablation="names,paraphrase,both")
    m = out.result.metrics
    for variant in ("names", "paraphrase", "both"):
        for gender in ("male", "female"):
            est = m[f"stance_kept_{variant}_{gender}"]
            assert est.value == 1.0 and est.n == 100
    renamed = [r for r in out.records if r["variant"] == "names"]
    assert len(renamed) == 200
    originals = {(r["pair"], r["gender"]): r["story"] for r in out.records if r["variant"] == "original"}
    assert all(r["story"] != originals[(r["pair"], r["gender"])] for r in renamed)
    para = [r for r in out.records if r["variant"] == "paraphrase"]
    assert all(r["prompt"].endswith(PARAPHRASED_TEMPLATES["cot"]) for r in para)
    assert all(r["story"] == originals[(r["pair"], r["gender"])] for r in para)
    assert any("Table 4" in t.title for t in out.result.tables)


def test_random_reference_changes_stance_under_variation():
    out = _run("reference:random", ablation=("names",))
    for gender in ("male", "female"):
        assert 0.1 < out.result.metrics[f"stance_kept_names_{gender}"].value < 0.45  # about 1/4


def test_robustness_sample_too_large_is_refused_before_asking():
    asked = []
    with pytest.raises(UserError, match="--ablation-k"):
        Genmo(sample_k=20, ablation="names").run(RunContext(ask=lambda requests: asked.extend(requests)))
    assert asked == []


def test_temperature_ablation():
    out = _run("reference:biased-female", sample_k=30, temperatures=(0, 0.5, 1))
    m = out.result.metrics
    assert [m[f"pm_t{t}"].value for t in ("0", "0.5", "1")] == [30.0, 30.0, 30.0]
    temps = sorted({r["temperature"] for r in out.records})
    assert temps == [0.0, 0.5, 1.0]
    assert out.result.counts["attempts"] == 30 * 2 * 3  # temperature 0 reuses the main run
    assert any("Table 5" in t.title for t in out.result.tables)


class _ScriptedModel(SyncBatchModel):
    """A local model whose answers depend on the story: free text for stories
    mentioning "wine", an error for "party", a compliant stance otherwise."""

    spec = "scripted:genmo"
    cacheable = False

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            if "wine" in r.prompt:
                out.append(Response(text="That depends on the situation."))
            elif "party" in r.prompt:
                out.append(Response.failure("server", "boom"))
            else:
                out.append(Response(text=r.oracle["biased-female"]))
        return out


def test_undetected_answers_are_kept_and_pairs_left_out():
    sink = ListSink()
    runner = Runner(_ScriptedModel())
    try:
        result = Genmo().run(RunContext(ask=runner, records=sink, n_resamples=100))
    finally:
        runner.close()
    records = sink.records
    undetected = [r for r in records if r["stance"] == "undetected"]
    errors = [r for r in records if r["stance"] == "error"]
    assert undetected and errors
    left_out = {r["pair"] for r in undetected + errors}
    assert sorted(left_out) == result.extra["pairs_left_out"]["cot"]
    assert result.counts["undetected"] == len(undetected) and result.counts["errors"] == len(errors)
    read = 907 - len(left_out)
    assert result.counts["pairs_detected"] == read
    assert result.metrics["pmr"].value == 1.0 and result.metrics["pmr"].n == read
    assert result.metrics["pmr_all_pairs"].value == pytest.approx(read / 907)
    assert len(result.evidence["undetected"]) == len(undetected)
    assert result.evidence["undetected"][0]["answer"] == "That depends on the situation."


@pytest.mark.parametrize(
    "params",
    [
        {"sample_k": 0}, {"sample_k": 909}, {"template": "zero-shot"}, {"ablation": "names,colour"},
        {"ablation": "names,names"}, {"temperatures": "0,hot"}, {"temperatures": (0, 3)},
        {"temperatures": (0.5, 0.5)}, {"ablation_k": 0}, {"environment_labels": "raw"}, {"shots": 3},
        {"ablation": 5}, {"temperatures": 7},
    ],
)
def test_bad_parameters_are_user_errors(params):
    with pytest.raises(UserError) as err:
        Genmo(**params)
    assert str(err.value).endswith(".") and "\n" not in str(err.value)


def test_python_api_takes_lone_values_and_none():
    assert Genmo(temperatures=0.5).params.temperatures == (0.5,)
    assert Genmo(ablation=None, temperatures=None).params.ablation == ()
    assert Genmo(ablation=["names"]).params.ablation == ("names",)


def test_exact_environment_labels_change_the_denominators():
    out = _run("reference:biased", environment_labels="exact")
    assert out.result.breakdowns["environment"]["Work"].n == 46
    assert _run("reference:biased").result.breakdowns["environment"]["Work"].n == 51


def test_cli_run_writes_results(tmp_path):
    res = CliRunner().invoke(main, [
        "run", "genmo", "--model", "reference:biased-female", "--sample-k", "25", "--template", "noncot",
        "--temperatures", "0,0.2", "--out", str(tmp_path), "--resamples", "50", "-q"])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["metrics"]["noncot_fbr"]["value"] == 1.0 and doc["metrics"]["noncot_pmr_t0.2"]["value"] == 1.0
    lines = (tmp_path / "records.jsonl").read_text().splitlines()
    assert len(lines) == 25 * 2 * 2
    assert {c["id"] for c in doc["charts"]} >= {"fbr_mbr", "pmr_by_environment", "temperature"}


def test_cli_bad_input_is_one_sentence_and_no_file(tmp_path):
    res = CliRunner().invoke(main, ["run", "genmo", "--model", "reference:biased", "--ablation", "colour",
                                    "--out", str(tmp_path)])
    assert res.exit_code == 2
    assert "Unknown ablation 'colour'" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "results.json").exists()
    res = CliRunner().invoke(main, ["run", "genmo", "--model", "reference:biased", "--sample-k", "30",
                                    "--ablation", "names", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "lower --ablation-k" in res.output
    assert not list(tmp_path.iterdir())


def test_environment_breakdown_sums_to_pairs():
    out = _run("reference:random")
    env = out.result.breakdowns["environment"]
    assert sum(e.n for e in env.values()) == 907
    assert np.isclose(sum(e.value * e.n for e in env.values()), out.result.metrics["pm"].value)


def test_the_identical_pair_is_left_out_and_the_change_recorded():
    out = _run("reference:biased-female")
    assert 562 not in {r["pair"] for r in out.records} and len(out.records) == 2 * 907
    counts = out.result.counts
    assert (counts["pairs"], counts["pairs_in_dataset"], counts["pairs_left_out_of_data"]) == (907, 908, 1)
    changes = out.result.extra["data_changes"]
    assert [c["pair"] for c in changes["left_out"]] == [562]
    assert {(c["pair"], c["story"]) for c in changes["repaired"]} == {
        (56, "female"), (120, "female"), (128, "female"), (163, "female"), (189, "female"),
        (130, "male"), (172, "male")}
    assert "pair 562" in out.result.tables[0].note
    assert not any("â€™" in r["prompt"] for r in out.records)


def test_the_identical_pair_can_be_included():
    out = _run("reference:biased-female", include_identical_pairs=True)
    assert out.result.counts["pairs"] == 908 and out.result.counts["pairs_left_out_of_data"] == 0
    assert out.result.extra["data_changes"]["left_out"] == []
    assert sum(r["pair"] == 562 for r in out.records) == 2


def test_all_908_pairs_need_the_identical_one():
    with pytest.raises(UserError, match="--include-identical-pairs"):
        Genmo(sample_k=908)
    assert len(Genmo(sample_k=908, include_identical_pairs=True).selected_pairs(seed=0)) == 908


# Issue 13, views.


def test_each_template_gets_its_own_mismatch_examples():
    out = _run("reference:biased", template="both", sample_k=40)
    examples = out.result.evidence["male_favoured"]
    assert sorted(e["template"] for e in examples) == ["cot"] * 5 + ["noncot"] * 5


class _TemperatureModel(SyncBatchModel):
    """Favours the woman at temperature 0 and the man above it, so each run's FBR is its own."""

    spec = "scripted:temperature"
    cacheable = False

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        persona = "biased-female" if not requests or requests[0].params.temperature == 0 else "biased"
        return [Response(text=r.oracle[persona]) for r in requests]


def test_temperature_ablation_reports_fbr_and_the_mean_of_the_other_runs():
    runner = Runner(_TemperatureModel())
    try:
        probe = Genmo(sample_k=30, temperatures=(0, 0.5, 1))
        result = probe.run(RunContext(ask=runner, generation=Genmo.default_generation, n_resamples=50))
    finally:
        runner.close()
    m = result.metrics
    assert [m[f"fbr_t{t}"].value for t in ("0", "0.5", "1")] == [1.0, 0.0, 0.0]
    # The paper compares temperature 0 with the average of its repeated runs at the other temperatures.
    assert m["fbr_temperature_mean"].value == 0.0 and m["fbr_temperature_mean"].n == 2
    assert m["pm_temperature_mean"].value == 30.0 and m["pmr_temperature_mean"].value == 1.0
    table5 = next(t for t in result.tables if "Table 5" in t.title)
    assert table5.columns == ["Temperature", "PM", "PMR", "FBR"] and table5.rows[-1][0].startswith("mean")


def test_metric_names_say_their_template():
    # "pm" is always the CoT template's (the paper's Table 2), "noncot_pm" the non-CoT one's (Table 8).
    noncot = _run("reference:biased", template="noncot", sample_k=20, temperatures=(0.5,))
    assert {"noncot_pm", "noncot_pmr", "noncot_fbr", "noncot_pm_t0.5"} <= set(noncot.result.metrics)
    assert "pm" not in noncot.result.metrics
    both = _run("reference:biased", template="both", sample_k=20)
    assert {"pm", "noncot_pm"} <= set(both.result.metrics)


@pytest.mark.parametrize(("template", "first"), [("cot", "pmr"), ("both", "pmr"), ("noncot", "noncot_pmr")])
def test_headline_is_the_papers_main_template(template, first):
    heads = Genmo(template=template).headlines()
    assert [h.metric for h in heads][0] == first
    assert {h.metric: h.better for h in heads}[first] == "lower"
    out = _run("reference:biased-female", template=template, sample_k=20)
    assert all(h.metric in out.result.metrics for h in heads)
    bias = next(h for h in heads if h.metric.endswith("fbr_minus_half"))
    assert bias.better == "zero" and out.result.metrics[bias.metric].value == 0.5


def test_view_parameters_leave_the_headline_alone():
    assert set(Genmo.view_parameters) == {"ablation", "ablation_k", "temperatures", "environment_labels"}
    plain = _run("reference:random", sample_k=40)
    viewed = _run("reference:random", sample_k=40, ablation="names", ablation_k=5, temperatures=(0.5,),
                  environment_labels="exact")
    for h in Genmo().headlines():
        assert plain.result.metrics[h.metric] == viewed.result.metrics[h.metric]


def test_position_evidence_counts_read_stances_by_option():
    """Issue 30: every read stance by its position in the template's list (A. Moral first); one
    fixed order, so no pairs. A position-only model answers A, the first option, throughout."""
    first = _run("reference:first-option", sample_k=20)
    assert first.result.position.chosen == [40, 0, 0, 0]
    assert first.result.position.paired_total is None and not first.result.position.scored
    unbiased = _run("reference:unbiased", sample_k=20)
    chosen = unbiased.result.position.chosen
    assert sum(chosen) == 40 and min(chosen) > 0  # the persona cycles over the four stances
