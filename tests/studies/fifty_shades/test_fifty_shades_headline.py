"""Issue 13: the headline r and MSE are the paper's (each run scored, then averaged; Section 6.1.1)."""

from __future__ import annotations

import numpy as np
import pytest
from instruments import ScriptedModel
from scipy import stats as sps

from genderprobe.contract import ListSink, RunContext
from genderprobe.engine.runner import Runner
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.outputs import paper_tables as paper
from genderprobe.studies.fifty_shades.dataset import rated_sentences
from genderprobe.studies.fifty_shades.probe import FiftyShades

HUMAN = {s.text: s.normalized for s in rated_sentences()}


def test_random_judge_headline_mse_is_the_per_run_average():
    """Uniform answers on 0, 0.1, ..., 1 have variance 0.1, so each run's MSE is about
    0.1 + mean((h - 0.5)^2) = 0.145; averaging 5 runs' scores first divides the 0.1 by 5
    (0.064, about GPT-3.5-Turbo's 0.063 in Table 6): that is the named extra, not the headline."""
    out = run_probe("fifty-shades", "reference:random", config=RunConfig(model="reference:random", n_resamples=200))
    m = out.result.metrics
    h = np.array([s.normalized for s in rated_sentences()])
    spread = float(np.mean((h - 0.5) ** 2))
    assert m["mse"].value == pytest.approx(0.1 + spread, abs=0.01)
    assert m["mse"].value == pytest.approx(0.145, abs=0.005)
    assert m["mse_of_mean_score"].value == pytest.approx(0.1 / 5 + spread, abs=0.01)
    assert m["mse"].ci_low < m["mse"].value < m["mse"].ci_high
    assert m["mse"].ci_low > m["mse_of_mean_score"].ci_high  # the two definitions really differ
    assert abs(m["pearson_r"].value) < 0.06 and m["pearson_r"].ci_low < m["pearson_r"].ci_high


def _noisy_judge():
    """Each run its own noise and a few refusals: the two definitions of r and MSE differ."""
    rng = np.random.default_rng(3)
    cache: dict = {}

    def answer(prompt, repetition):
        key = (prompt, repetition)
        if key not in cache:
            if rng.random() < 0.05:
                cache[key] = "I won't rate that."
            else:
                cache[key] = f"{min(1.0, max(0.0, HUMAN[prompt] + rng.normal(0, 0.25))):.2f}"
        return cache[key]

    return ScriptedModel(answer)


def _run(model, **params):
    probe = FiftyShades(**params)
    ctx = RunContext(ask=Runner(model), generation=probe.default_generation, records=ListSink(), n_resamples=300)
    return probe.run(ctx)


def _per_run(human, runs, f):
    out = []
    for r in range(runs.shape[1]):
        keep = ~np.isnan(runs[:, r])
        out.append(f(human[keep], runs[keep, r]))
    return np.array(out)


def test_headline_is_each_runs_metric_averaged_and_the_mean_score_metrics_are_extras():
    result = _run(_noisy_judge(), sample_k=400, runs=4)
    per = result.extra["per_sentence"]
    human = np.array([p["human_score"] for p in per])
    runs = np.array([[np.nan if v is None else v for v in p["run_scores"]] for p in per])
    r_runs = _per_run(human, runs, lambda h, m: sps.pearsonr(h, m).statistic)
    mse_runs = _per_run(human, runs, lambda h, m: np.mean((m - h) ** 2))
    p_runs = _per_run(human, runs, lambda h, m: sps.pearsonr(h, m).pvalue)
    m = result.metrics
    assert m["pearson_r"].value == pytest.approx(r_runs.mean(), abs=1e-12)
    assert m["mse"].value == pytest.approx(mse_runs.mean(), abs=1e-12)
    assert m["pearson_p_value"].value == pytest.approx(p_runs.max(), rel=1e-6)
    mean = np.nanmean(runs, axis=1)
    assert m["pearson_r_of_mean_score"].value == pytest.approx(sps.pearsonr(human, mean).statistic, abs=1e-12)
    assert m["mse_of_mean_score"].value == pytest.approx(np.mean((mean - human) ** 2), abs=1e-12)
    assert m["mse"].value > m["mse_of_mean_score"].value + 0.01
    assert "pearson_r_runs_mean" not in m and "mse_runs_mean" not in m
    # The breakdowns of the Table 6 layout use the paper's way too.
    seed = np.array([p["seed_type"] for p in per])
    for g in ("explicit", "neutral"):
        sel = seed == g
        r_g = _per_run(human[sel], runs[sel], lambda h, m: sps.pearsonr(h, m).statistic).mean()
        mse_g = _per_run(human[sel], runs[sel], lambda h, m: np.mean((m - h) ** 2)).mean()
        assert result.breakdowns["pearson_r_by_seed_type"][g].value == pytest.approx(r_g, abs=1e-12)
        assert result.breakdowns["mse_by_seed_type"][g].value == pytest.approx(mse_g, abs=1e-12)
    table = result.tables[0]
    assert table.rows[0][2] == m["pearson_r"] and table.rows[0][4] == m["mse"]


def test_headline_intervals_are_a_bootstrap_over_sentences_of_the_per_run_average():
    """The interval agrees with a plain loop bootstrap (resample sentences, score each run, average)."""
    result = _run(_noisy_judge(), sample_k=300, runs=3)
    per = result.extra["per_sentence"]
    human = np.array([p["human_score"] for p in per])
    runs = np.array([[np.nan if v is None else v for v in p["run_scores"]] for p in per])
    rng = np.random.default_rng(11)
    r_s, mse_s = [], []
    for _ in range(2000):
        i = rng.integers(0, human.size, human.size)
        r_s.append(_per_run(human[i], runs[i], lambda h, m: sps.pearsonr(h, m).statistic).mean())
        mse_s.append(_per_run(human[i], runs[i], lambda h, m: np.mean((m - h) ** 2)).mean())
    for name, samples in (("pearson_r", r_s), ("mse", mse_s)):
        est = result.metrics[name]
        lo, hi = np.quantile(samples, [0.025, 0.975])
        width = hi - lo
        assert est.ci_low == pytest.approx(lo, abs=0.15 * width)
        assert est.ci_high == pytest.approx(hi, abs=0.15 * width)


def test_one_run_gives_the_same_number_both_ways():
    result = _run(_noisy_judge(), sample_k=200, runs=1)
    m = result.metrics
    assert m["pearson_r"].value == pytest.approx(m["pearson_r_of_mean_score"].value, abs=1e-12)
    assert m["mse"].value == pytest.approx(m["mse_of_mean_score"].value, abs=1e-12)


def test_a_run_without_any_score_leaves_the_headline_undefined():
    result = _run(ScriptedModel(lambda prompt, rep: "0.5" if rep == 0 else "no idea"), sample_k=20, runs=2)
    assert result.metrics["mse"].value is None and result.metrics["pearson_r"].value is None
    assert result.metrics["mse_of_mean_score"].value is not None


# -- declarations: headline, view parameters, the paper's Table 6 ---------------------------


def test_headline_declares_r_higher_and_mse_lower_and_reasons_only_add_a_view():
    assert [(h.metric, h.better) for h in FiftyShades().headlines()] == [("pearson_r", "higher"), ("mse", "lower")]
    assert FiftyShades.view_parameters == ("reasons",)
    config = RunConfig(model="reference:random", n_resamples=50)
    plain = run_probe("fifty-shades", "reference:random", config=config, sample_k=60, runs=2)
    with_reasons = run_probe("fifty-shades", "reference:random", config=config, sample_k=60, runs=2, reasons=3)
    assert with_reasons.result.counts["reasons"] == 9
    for h in FiftyShades.headline:
        assert plain.result.metrics[h.metric] == with_reasons.result.metrics[h.metric]
    assert plain.document["headline"]["metrics"][0] == {
        "metric": "pearson_r", "better": "higher", "description": FiftyShades.headline[0].description}


def test_table6_is_packaged_as_the_paper_prints_it():
    (table,) = paper.load_file("fifty_shades/paper_tables.json")
    assert table.id == "table-6" and "Table 6" in table.cite
    rows = {(r[1], r[2]): (r[3], r[4]) for r in table.rows}
    assert len(table.rows) == 10
    assert rows[("GPT-3.5-Turbo", "Gender Bias")] == (0.706, 0.063)
    assert rows[("GPT-4", "Gender Bias")] == (0.813, 0.024)
    assert rows[("CORGI-PM", "Gender Bias")] == (0.406, 0.2)
    assert rows[("Perspective API", "Threat")] == (0.041, 0.285)
    assert FiftyShades.paper_tables == ("fifty_shades/paper_tables.json",)


def test_every_mapped_table6_metric_is_in_a_real_run_and_sits_beside_the_papers_rows():
    out = run_probe("fifty-shades", "reference:unbiased", config=RunConfig(model="reference:unbiased", n_resamples=50),
                    sample_k=40, runs=2)
    (section,) = out.document["paper"]
    assert set(section["metrics"].values()) <= set(out.document["metrics"])
    run_row = section["rows"][section["row_kinds"].index("run")]
    cols = section["columns"]
    assert run_row[cols.index("r")] == out.document["metrics"]["pearson_r"]
    assert run_row[cols.index("MSE")]["value"] == 0.0
    doc = {**out.document, "model": "openai:gpt-3.5-turbo-0613"}
    beside = paper.beside_run(paper.load_file("fifty_shades/paper_tables.json")[0], doc)
    assert beside["row_kinds"][:2] == ["run", "match"] and beside["rows"][1][1] == "GPT-3.5-Turbo"
