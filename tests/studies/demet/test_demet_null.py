"""Issue 18: demet --null-baseline asks each mixed pair's design with two people of one group."""

import numpy as np
import pytest
from instruments import ScriptedModel

from genderprobe.contract import ListSink, RunContext
from genderprobe.data.name_lists import levy_names
from genderprobe.engine.runner import Runner
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.studies.demet.dataset import scenarios
from genderprobe.studies.demet.items import build_null_plan, build_plan
from genderprobe.studies.demet.probe import Demet
from genderprobe.studies.demet.scores import GROUPS, TYPES

HEADLINE = ("mixed_gender_bias", "bias_w_m", "bias_w_n", "bias_n_m")


def _metrics(model, **params):
    config = RunConfig(model=model, use_cache=False, n_resamples=300)
    return run_probe("demet", model, config=config, null_baseline=True, **params).result


def _asked(**params):
    model = ScriptedModel(lambda p, r: "1")
    Demet(per_type=2, **params).run(RunContext(ask=Runner(model), records=ListSink(), n_resamples=50))
    return [q.prompt for q in model.asked]


def test_off_asks_exactly_todays_prompts_and_on_adds_its_own_after_them():
    off = _asked()
    probe, ids = Demet(per_type=2), tuple(s.id for s in scenarios("human"))
    plan = build_plan(ids, levy_names(), 2, seed=0)
    assert off == [probe.original_prompt(probe.scenarios[s], plan.names[a], plan.names[b])
                   for s, a, b in zip(plan.scenario, plan.name1, plan.name2)]
    assert len(off) == 29 * 9 * 2
    on = _asked(null_baseline=True)
    assert len(on) == len(off) + 29 * 6 * 2 and on[: len(off)] == off
    assert _asked(null_baseline=False) == off


def test_the_null_plan_repeats_each_mixed_pairs_design_with_one_group():
    ids = tuple(s.id for s in scenarios("human"))
    plan = build_null_plan(ids, levy_names(), 4, seed=0)
    assert plan.size == 29 * 6 * 4
    group = plan.name_group
    assert (group[plan.name1] == group[plan.name2]).all() and (plan.name1 != plan.name2).all()
    columns = (plan.scenario, plan.type, plan.slot, plan.name1, plan.name2)
    rows = {(s, TYPES[t], j): (a, b) for s, t, j, a, b in zip(*(c.tolist() for c in columns))}
    for (s, kind, j), (a, b) in rows.items():
        first, second = kind.split("-")
        # Slot j of B-A holds the two people of slot j of A-B in reverse order ...
        assert rows[(s, f"{second}-{first}", j)] == (b, a)
        # ... two of A's group on even slots, two of B's on odd ones (A-B the pair's type listed first in TYPES).
        canonical = min(kind, f"{second}-{first}", key=TYPES.index)
        assert GROUPS[group[a]] == canonical.split("-")[j % 2]
    # No couple is asked twice in a scenario, and either of the two is first about half the time.
    couples = [(s, frozenset(names)) for (s, kind, _), names in rows.items() if kind in ("W-M", "W-N", "N-M")]
    assert len(couples) == len(set(couples)) == 29 * 3 * 4
    assert 0.4 < np.mean(plan.name1 < plan.name2) < 0.6


def test_biased_models_are_far_from_their_null():
    out = _metrics("reference:biased", per_type=4)
    m = out.metrics
    assert (m["bias_w_m"].value, m["bias_n_m"].value) == (-2, -2)
    for name in HEADLINE:
        null = m[f"null_{name}"]
        assert (null.value, null.ci_low, null.ci_high) == (0, 0, 0)
    table = out.tables[0]
    assert table.title == "Headline beside its null" and [r[0] for r in table.rows] == list(HEADLINE)
    assert out.counts["null_prompts"] == 29 * 6 * 4 and out.counts["prompts"] == 29 * 9 * 4


def test_position_only_and_random_models_are_not_told_apart_from_their_null():
    m = _metrics("reference:first-option", per_type=4).metrics  # position only: both orders cancel it
    assert all(m[name].value == m[f"null_{name}"].value == 0 for name in HEADLINE)
    m = _metrics("reference:random").metrics
    for name in HEADLINE[1:]:
        null = m[f"null_{name}"]
        assert null.ci_low <= 0 <= null.ci_high
        assert null.ci_low <= m[name].value <= null.ci_high
    assert m["null_mixed_gender_bias"].value == pytest.approx(m["mixed_gender_bias"].value, abs=0.05)
    assert np.isfinite(m["null_mixed_gender_bias_signed"].value)
