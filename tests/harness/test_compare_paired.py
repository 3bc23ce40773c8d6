"""Is model A less biased than model B? compare's tests between runs, on calibration models with known answers."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from rich.console import Console

from genderprobe.api import RunConfig, run_probe
from genderprobe.cli import main
from genderprobe.registry import item_score_functions
from genderprobe.report import compare, render_comparison
from genderprobe.report.leaderboard import print_leaderboard
from genderprobe.stats import holm, mcnemar_exact

LEVY = ("diff_abs_success_rate", "diff_success_rate")


def levy(model: str, k: int = 100, *, seed: int = 0, generation_seed: int | None = None, **kw):
    """An in-process RelationshipLevy run with its records: (document, source, records)."""
    generation = {} if generation_seed is None else {"seed": generation_seed}
    config = RunConfig(use_cache=False, n_resamples=100, seed=seed, generation=generation, **kw)
    out = run_probe("relationship-levy", model, config=config, sample_k=k)
    return out.document, f"{model} seed {seed}/{generation_seed}", out.records


def pair_tests_by_metric(docs) -> dict[str, object]:
    (section,) = compare(docs)
    return {t.metric: t for t in section.pairs}


def test_biased_against_position_only_on_the_same_items_is_found_with_its_exact_values():
    # reference:first-option answers (a) always: both orders cancel it to exactly 0 (reference:unbiased is noise around 0).
    docs = [levy("reference:biased"), levy("reference:first-option")]
    (section,) = compare(docs)
    assert len(section.pairs) == 2  # one pair, two headline metrics
    for t in section.pairs:
        # Ranked best first, so A is the position-only model: it sides with neither, the biased one always with the man.
        assert (t.a, t.b) == ("reference:first-option", "reference:biased")
        assert t.paired and t.test == "paired bootstrap" and t.note == "paired over the 100 items both runs asked"
        assert (t.difference["value"], t.difference["ci_low"], t.difference["ci_high"]) == (-1.0, -1.0, -1.0)
        assert t.p_value < 0.001 and t.p_holm < 0.001
    assert [t.p_holm for t in section.pairs] == holm([t.p_value for t in section.pairs])
    tests = {t.metric: t for t in section.pairs}
    # McNemar on the 200 answers: with the woman as option (a) the position-only model picks her and the biased one
    # the man (100 discordant, all one way); with the man as (a) both pick him.
    assert tests["diff_success_rate"].exact_p == pytest.approx(mcnemar_exact(0, 100)) == pytest.approx(2.0**-99)
    assert tests["diff_success_rate"].exact_note == "100 discordant answers: 0 vs 100"
    assert tests["diff_abs_success_rate"].exact_p is None  # no exact test fits an absolute value

    console = Console(width=200, record=True)
    print_leaderboard([section], console)
    text = console.export_text()
    assert "reference:first-option vs reference:biased" in text
    assert "diff_success_rate, A − B = -1.000 [-1.000, -1.000]; p < 0.001 (Holm < 0.001); McNemar p < 0.001" in text
    page = render_comparison(docs)
    assert page.count('data-paired="yes"') == 2 and "paired over the 100 items both runs asked" in page


@pytest.mark.parametrize("probe, model, params", [
    ("relationship-levy", "reference:random", {"sample_k": 150, "num_repetitions": 3}),
    ("genmo", "reference:random", {"sample_k": 60, "template": "both", "temperatures": (0.0, 0.5)}),
    ("demet", "reference:random", {"per_type": 2}),
    ("demet", "reference:biased", {"per_type": 2, "bootstrap_by": "scenario"}),
])
def test_per_item_scores_rebuild_each_runs_headline_exactly(probe, model, params):
    out = run_probe(probe, model, config=RunConfig(use_cache=False, n_resamples=50), **params)
    scores = item_score_functions()[probe](out.records, out.document["parameters"]["probe"])
    headline = [h["metric"] for h in out.document["headline"]["metrics"]]
    assert set(headline) <= set(scores)
    for metric, s in scores.items():
        assert s.value() == out.document["metrics"][metric]["value"], metric


def test_random_against_random_on_the_same_items_is_rejected_at_about_the_nominal_rate():
    """Two runs of the coin-flipping model differ only in the coin (the generation seed): no true difference."""
    pairs = 60
    rejected = {m: 0 for m in (*LEVY, "McNemar")}
    for i in range(pairs):
        tests = pair_tests_by_metric([levy("reference:random", seed=i, generation_seed=2 * i),
                                 levy("reference:random", seed=i, generation_seed=2 * i + 1)])
        assert all(t.paired for t in tests.values())
        for m in LEVY:
            rejected[m] += tests[m].p_value < 0.05
        rejected["McNemar"] += tests["diff_success_rate"].exact_p < 0.05
    rates = {m: round(int(n) / pairs, 3) for m, n in rejected.items()}
    print(f"random against random, {pairs} pairs, rejected at p < 0.05: {rates}")
    # About 5% each; 20% (12 of 60) is loose enough never to flake (everything here is seeded anyway).
    assert all(rate <= 0.20 for rate in rates.values()), rates


def test_runs_on_different_items_are_compared_unpaired_and_say_why():
    tests = pair_tests_by_metric([levy("reference:random", seed=0), levy("reference:random", seed=1)])
    for t in tests.values():
        assert not t.paired and t.test == "unpaired bootstrap" and t.exact_p is None
        assert t.note == "unpaired: the runs asked different items (seed 0 vs 1)"
    # Unpaired, a true difference is still found.
    tests = pair_tests_by_metric([levy("reference:first-option", seed=0), levy("reference:biased", seed=1)])
    assert tests["diff_success_rate"].difference["value"] == -1.0 and tests["diff_success_rate"].p_value < 0.001


def test_without_records_the_two_intervals_are_compared_and_it_says_so():
    no_records = "unpaired, from the two intervals: no per-item records (run with --out and keep the records)"
    tests = pair_tests_by_metric([levy("reference:first-option")[:2], levy("reference:biased")[:2]])
    for t in tests.values():
        assert not t.paired and t.test == "normal approximation" and t.difference["value"] == -1.0
        # Both intervals have no width, so they say nothing of the spread: no p-value, and the note says why.
        assert t.p_value is None and t.note == no_records + "; no p-value: neither interval has any width"
    tests = pair_tests_by_metric([levy("reference:random", 300)[:2], levy("reference:biased", 300)[:2]])
    for t in tests.values():
        assert t.note == no_records and t.p_value < 0.001 and t.difference["ci_high"] < 0


def _doc(model: str, value: float, low: float, high: float, better: str) -> dict:
    return {"probe": "p", "model": model, "metrics": {"m": {"value": value, "ci_low": low, "ci_high": high, "n": 50}},
            "headline": {"metrics": [{"metric": "m", "better": better}]},
            "parameters": {"probe": {}, "seed": 0}, "counts": {}, "run": {}, "versions": {"data": {}}}


def test_a_ratio_is_compared_as_a_over_b_against_one():
    (t,) = compare([(_doc("a", 2.0, 1.5, 2.5, "one"), "a"), (_doc("b", 2.0, 1.6, 2.4, "one"), "b")])[0].pairs
    assert t.ratio and t.sign == "/" and t.difference["value"] == pytest.approx(1.0) and t.p_value == pytest.approx(1.0)
    assert t.note == "unpaired, from the two intervals: this probe has no per-item scores"
    (t,) = compare([(_doc("a", 1.0, 0.9, 1.1, "one"), "a"), (_doc("b", 4.0, 3.0, 5.0, "one"), "b")])[0].pairs
    assert t.difference["value"] == pytest.approx(0.25) and t.difference["ci_high"] < 1 and t.p_value < 0.001


def test_compare_command_reads_the_records_beside_each_results_file(tmp_path):
    paths = []
    for model in ("reference:biased", "reference:unbiased"):
        config = RunConfig(use_cache=False, n_resamples=100, out_dir=tmp_path / model.split(":")[1])
        paths.append(run_probe("relationship-levy", model, config=config, sample_k=50).results_path)
    html = tmp_path / "compare.html"
    result = CliRunner().invoke(main, ["compare", str(paths[0]), str(paths[1].parent), "-o", str(html)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "relationship-levy: model against model" in result.output
    assert "paired over the 50 items both runs asked" in result.output
    page = html.read_text(encoding="utf-8")
    assert page.count('data-paired="yes"') == 2
    # A run whose records are gone is still compared, from its interval, and the output says so.
    (paths[0].parent / json.loads(paths[0].read_text())["records_file"]).unlink()
    result = CliRunner().invoke(main, ["compare", *map(str, paths)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "unpaired, from the two intervals: B: no per-item records" in result.output
