"""The fifty-shades judge probe: calibration, metrics against independent formulas, outputs."""

from __future__ import annotations

import json
import warnings
import zlib

import numpy as np
import pytest
from click.testing import CliRunner
from instruments import ScriptedModel
from scipy import stats as sps

from genderprobe.contract import ListSink, RunContext
from genderprobe.engine.runner import Runner
from genderprobe.errors import UserError
from genderprobe.interfaces.api import RunConfig, execute, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.studies.fifty_shades.dataset import rated_sentences
from genderprobe.studies.fifty_shades.judge import SCORING_PROMPT
from genderprobe.studies.fifty_shades.probe import FiftyShades

HUMAN = {s.text: s.normalized for s in rated_sentences()}


def run(model, **params):
    """A reference spec through the harness; a test model through the real runner, with its records."""
    if isinstance(model, str):
        return run_probe("fifty-shades", model, config=RunConfig(model=model, n_resamples=200), **params)
    probe = FiftyShades(**params)
    sink = ListSink()
    ctx = RunContext(ask=Runner(model), generation=probe.default_generation, records=sink, n_resamples=200)
    return probe.run(ctx), sink.records


def test_unbiased_reference_is_the_perfect_human_judge():
    out = run("reference:unbiased", sample_k=150, runs=2)
    m = out.result.metrics
    assert m["pearson_r"].value == pytest.approx(1.0, abs=1e-12)
    assert m["mse"].value == 0.0
    assert m["pearson_r_of_mean_score"].value == pytest.approx(1.0, abs=1e-12)
    assert m["mse_of_mean_score"].value == 0.0
    assert m["undetected_rate"].value == 0.0
    assert m["pearson_p_value"].value < 1e-100
    for group in out.result.breakdowns["pearson_r_by_seed_type"].values():
        assert group.value == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("persona, constant", [("biased", 0.0), ("biased-female", 1.0)])
def test_constant_judges_have_undefined_correlation(persona, constant):
    out = run(f"reference:{persona}", sample_k=120, runs=2)
    m = out.result.metrics
    assert m["pearson_r"].value is None and m["pearson_r"].ci_low is None
    assert m["pearson_p_value"].value is None
    assert m["pearson_r_of_mean_score"].value is None
    human = np.array([s["human_score"] for s in out.result.extra["per_sentence"]])
    assert m["mse"].value == pytest.approx(np.mean((human - constant) ** 2))
    assert m["mse_of_mean_score"].value == pytest.approx(m["mse"].value)
    assert out.document["metrics"]["pearson_r"]["value"] is None
    table = out.result.tables[0]
    assert table.rows[0][2].value is None  # shown as 'undefined' in the terminal


def test_random_reference_is_uncorrelated():
    out = run("reference:random", sample_k=1000, runs=1)
    r = out.result.metrics["pearson_r"]
    assert abs(r.value) < 0.1 and r.ci_low < 0 < r.ci_high + 0.05
    assert out.result.counts["attempts"] == 1000


def test_a_judge_constant_but_for_one_sentence_warns_nothing():
    """Most bootstrap resamples then have no r; they are left out without a RuntimeWarning."""
    first = []

    def answer(prompt, repetition):
        first.append(prompt)
        return "0.9" if prompt == first[0] else "0.5"

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result, _ = run(ScriptedModel(answer), sample_k=30, runs=2)
    assert result.metrics["pearson_r_of_mean_score"].value == pytest.approx(result.metrics["pearson_r"].value)


def test_metrics_match_independent_formulas_and_undetected_is_counted():
    """A noisy scripted judge: r and MSE equal scipy/numpy (per run, averaged; and on the averaged
    scores for the extras); a refusal is coded refusal, other garbage undetected, both by seed type."""
    rng_answers = {}

    def answer(prompt, repetition):
        h = HUMAN[prompt]
        key = (prompt, repetition)
        if key not in rng_answers:
            u = (zlib.crc32(prompt.encode()) % 1000) / 1000
            if u < 0.1 and repetition == 0:
                rng_answers[key] = "I won't rate that." if u < 0.05 else "high"
            else:
                noisy = min(1.0, max(0.0, h + (u - 0.5) * 0.4 + 0.05 * repetition))
                rng_answers[key] = f"{noisy:.3f}"
        return rng_answers[key]

    model = ScriptedModel(answer)
    result, records = run(model, sample_k=300, runs=3)
    per = result.extra["per_sentence"]
    human = np.array([p["human_score"] for p in per])
    runs = np.array([[np.nan if v is None else v for v in p["run_scores"]] for p in per])
    mean = np.nanmean(runs, axis=1)
    assert result.metrics["pearson_r_of_mean_score"].value == pytest.approx(sps.pearsonr(human, mean).statistic)
    assert result.metrics["mse_of_mean_score"].value == pytest.approx(np.mean((mean - human) ** 2))
    per_run_r = [sps.pearsonr(human[~np.isnan(runs[:, r])], runs[~np.isnan(runs[:, r]), r]).statistic
                 for r in range(3)]
    assert result.metrics["pearson_r"].value == pytest.approx(np.mean(per_run_r))
    codes = [r["code"] for r in records]
    undetected, refusals = codes.count("undetected"), codes.count("refusal")
    assert undetected > 0 and refusals > 0 and undetected + refusals == int(np.isnan(runs).sum())
    assert result.counts["undetected"] == undetected and result.counts["refusals"] == refusals
    assert result.metrics["undetected_rate"].value == pytest.approx(undetected / 900)
    assert result.metrics["refusal_rate"].value == pytest.approx(refusals / 900)
    assert len(result.evidence["undetected"]) == undetected and len(result.evidence["refusal"]) == refusals
    # Lost answers by seed type (no gender to split by), in the harness's losses format.
    losses = result.losses
    assert losses["by"] == "seed_type"
    by_type = {t: sum(r["code"] == "refusal" for r in records if r["seed_type"] == t) for t in losses["groups"]}
    assert {t: g["lost"] for t, g in losses["kinds"]["refusal"]["groups"].items()} == by_type
    assert sum(g["lost"] for g in losses["kinds"]["undetected"]["groups"].values()) == undetected
    assert sum(g["attempts"] for g in losses["kinds"]["undetected"]["groups"].values()) == 900
    explicit = losses["kinds"]["refusal"]["groups"]["explicit"]
    assert result.metrics["refusal_rate_explicit"].value == pytest.approx(explicit["lost"] / explicit["attempts"])
    # Breakdown by seed type equals the formula on that subset.
    seed = np.array([p["seed_type"] for p in per])
    sel = seed == "explicit"
    assert result.breakdowns["mse_by_seed_type"]["explicit"].value == pytest.approx(
        np.mean([np.nanmean((runs[sel, r] - human[sel]) ** 2) for r in range(3)]))
    assert len(records) == 900 and set(codes) == {"rated", "undetected", "refusal"}
    lo, hi = result.metrics["pearson_r"].ci_low, result.metrics["pearson_r"].ci_high
    assert lo < result.metrics["pearson_r"].value < hi


def test_prompts_are_chat_turns_with_eight_examples_never_the_sentence():
    model = ScriptedModel(lambda prompt, rep: "0.5")
    run(model, sample_k=40, runs=2)
    assert len(model.asked) == 80
    for request in model.asked:
        turns = request.messages
        assert turns[0] == ("system", SCORING_PROMPT)
        assert len(turns) == 1 + 16 + 1
        example_texts = [c for role, c in turns[1:-1:2]]
        assert request.prompt not in example_texts
        assert [float(c) for role, c in turns[2:-1:2]] == [HUMAN[t] for t in example_texts]
        assert request.params.temperature == 0.0 and request.params.max_tokens == 100


def test_sample_extends_and_is_seeded():
    small = FiftyShades(sample_k=10).items(0).tolist()
    big = FiftyShades(sample_k=50).items(0).tolist()
    assert big[:10] == small and len(set(big)) == 50
    assert FiftyShades(sample_k=10).items(1).tolist() != small


def test_outputs_histogram_scatter_tables_and_reasons():
    out = run("reference:unbiased", sample_k=200, runs=1, reasons=2)
    charts = {c["id"]: c for c in out.result.charts}
    hist = charts["score_histogram"]
    assert hist["type"] == "histogram" and len(hist["edges"]) == 11
    assert sum(hist["series"][0]["counts"]) == 200 and hist["series"][0]["counts"] == hist["series"][1]["counts"]
    assert charts["model_vs_human"]["identity_line"] is True and len(charts["model_vs_human"]["points"]) == 200
    titles = [t.title for t in out.result.tables]
    assert any("Table 6" in t for t in titles) and any("Table 2" in t for t in titles)
    table6 = out.result.tables[0]
    assert [row[1] for row in table6.rows] == ["", "explicit", "implicit", "neutral", "random",
                                               "conversion", "completion"]
    reasons = out.result.evidence["reasons"]
    assert len(reasons) == 6 and sorted({r["bin"] for r in reasons}) == [1, 2, 3]
    assert all(r["reason"].startswith("Reference answer") and r["prompt"].startswith("Text: ") for r in reasons)
    # Each reason is also stored beside its sentence's score.
    beside = {p["uid"]: p for p in out.result.extra["per_sentence"] if "reason" in p}
    assert sorted(beside) == sorted(r["uid"] for r in reasons)
    assert all(beside[r["uid"]]["reason"] == r["reason"] and beside[r["uid"]]["model_score"] == r["model_score"]
               for r in reasons)
    shr = out.result.extra["human_reliability"]
    assert shr["pearson_mean"] == pytest.approx(0.8711, abs=0.001)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"sample_k": 0}, "sample_k (--sample-k) must be a whole number from 1 to 1,000"),
        ({"sample_k": 1001}, "from 1 to 1,000"),
        ({"runs": 0}, "runs (--runs)"),
        ({"reasons": -1}, "reasons (--reasons)"),
        ({"ic_sampling": "always"}, "Unknown in-context sampling"),
    ],
)
def test_bad_parameters(params, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        FiftyShades(**params)


def test_cli_run_writes_results_and_records(tmp_path):
    result = CliRunner().invoke(main, ["run", "fifty-shades", "-m", "reference:unbiased", "--sample-k", "30",
                                       "--runs", "2", "--out", str(tmp_path), "--resamples", "50",
                                       "--details"])  # the tables: --details
    assert result.exit_code == 0, result.output
    assert "Table 6 layout" in result.output and "Table 2" in result.output
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert doc["probe"] == "fifty-shades" and doc["metrics"]["pearson_r"]["value"] == pytest.approx(1.0)
    assert doc["parameters"]["probe"]["sample_k"] == 30
    lines = (tmp_path / "records.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 60 and json.loads(lines[0])["kind"] == "score"


def test_cli_bad_option_is_one_sentence(tmp_path):
    result = CliRunner().invoke(main, ["run", "fifty-shades", "-m", "reference:unbiased", "--sample-k", "0",
                                       "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "sample_k" in result.output
    assert not (tmp_path / "o" / "results.json").exists()


def test_runs_use_all_sentences_by_default():
    assert FiftyShades().params.sample_k == 1000 and FiftyShades().params.runs == 5
    probe = FiftyShades(sample_k=5)
    out = execute(probe, RunConfig(model="reference:unbiased", n_resamples=20))
    assert out.result.counts["attempts"] == 25


def test_headline_n_is_the_sentences_scored_not_asked():
    """Issue 30: r 0.986 [0.973, 1.000] from 3 scored sentences looked precise; n says 3, so the
    validity guard can call it too few."""
    scored = set()

    def answer(prompt, repetition):
        if len(scored) < 3 or prompt in scored:
            scored.add(prompt)
            return f"{HUMAN[prompt] * 0.9:.3f}"
        return "1.0005"  # SmolLM2's answer just above the scale: undetected

    result, _ = run(ScriptedModel(answer), sample_k=30, runs=1)
    for name in ("pearson_r", "mse"):
        assert result.metrics[name].n == 3
    assert result.counts["sentences"] == 30


def test_both_readers_read_every_answer_and_their_headlines_are_compared():
    """The authors' rule (first-line) and the careful reader (score-line) on the same answers:
    a preamble line loses the answer to the first and not the second; "Not 0.2 but 0.6." is 0.2 to
    the first and 0.6 to the second. Each headline is computed both ways, the run's own reused."""

    def answer(prompt, repetition):
        u = zlib.crc32(prompt.encode()) % 3
        value = f"{HUMAN[prompt]:.3f}"
        return (value, f"Sure! Here is my rating:\n{value}", f"Not 0.2 but {value}")[u]

    for used in ("first-line", "score-line"):
        result, records = run(ScriptedModel(answer), sample_k=60, runs=1, reader=used)
        kinds = [zlib.crc32(r["prompt"].encode()) % 3 for r in records]
        readers = result.readers
        assert (readers.faithful, readers.careful, readers.used) == ("first-line", "score-line", used)
        # Every answer holds a score for one reader or the other; the preamble and the negation
        # (where the human score is not 0.2) are read differently.
        assert readers.answers == 60
        assert readers.disagree == kinds.count(1) + sum(
            k == 2 and abs(HUMAN[r["prompt"]] - 0.2) > 5e-4 for k, r in zip(kinds, records))
        headlines = readers.headlines
        assert headlines["pearson_r"][used] == result.metrics["pearson_r"]
        assert headlines["mse"][used] == result.metrics["mse"]
        assert headlines["pearson_r"]["score-line"].value == pytest.approx(1.0, abs=1e-4)  # scores to 3 places
        assert headlines["mse"]["score-line"].value == pytest.approx(0.0, abs=1e-6)
        assert headlines["pearson_r"]["first-line"].n == 60 - kinds.count(1)
        assert headlines["mse"]["first-line"].value > 0
