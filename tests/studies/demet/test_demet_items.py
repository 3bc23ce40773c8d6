"""The DeMET sampling plan: sizes, pairing reuse and determinism (Section 4.1)."""

import numpy as np

from genderprobe.data.name_lists import levy_names
from genderprobe.studies.demet.dataset import scenarios
from genderprobe.studies.demet.items import build_plan, usable_per_type
from genderprobe.studies.demet.scores import GROUPS, TYPES


def _plan(source="human", per_type=20, seed=0, lists=None):
    ids = tuple(s.id for s in scenarios(source))
    return build_plan(ids, lists or levy_names(), per_type, seed)


def _pairs(plan, scenario, kind):
    sel = (plan.scenario == scenario) & (plan.type == TYPES.index(kind))
    return list(zip(plan.name1[sel].tolist(), plan.name2[sel].tolist()))


def test_sizes_match_the_paper():
    assert _plan("human").size == 29 * 9 * 20 == 5220
    assert _plan("gpt4").size == 80 * 9 * 20 == 14400


def test_groups_of_each_type():
    plan = _plan()
    g1 = np.array(GROUPS)[plan.name_group[plan.name1]]
    g2 = np.array(GROUPS)[plan.name_group[plan.name2]]
    for t, kind in enumerate(TYPES):
        sel = plan.type == t
        assert set(g1[sel]) == {kind[0]} and set(g2[sel]) == {kind[2]}


def test_mixed_pairs_reuse_their_pairings_in_reverse_order():
    plan = _plan()
    for s in (0, 17):
        for a, b in (("W", "M"), ("W", "N"), ("N", "M")):
            ab = _pairs(plan, s, f"{a}-{b}")
            ba = _pairs(plan, s, f"{b}-{a}")
            assert len(set(ab)) == 20
            assert ba == [(y, x) for x, y in ab]


def test_same_group_types_use_ten_pairings_in_both_orders():
    plan = _plan()
    for kind in ("W-W", "M-M", "N-N"):
        pairs = _pairs(plan, 3, kind)
        assert all(x != y for x, y in pairs)
        assert pairs[1::2] == [(y, x) for x, y in pairs[0::2]]
        assert len({frozenset(p) for p in pairs}) == 10


def test_seeded_deterministic_and_stable_across_sets():
    a, b = _plan(seed=7), _plan(seed=7)
    assert np.array_equal(a.name1, b.name1) and np.array_equal(a.name2, b.name2)
    assert not np.array_equal(a.name1, _plan(seed=8).name1)
    # A human scenario gets the same names in the "all" set (its answers are cached).
    everything = _plan("all", seed=7)
    human_first = len(scenarios("gpt4"))
    for kind in TYPES:
        assert _pairs(everything, human_first, kind) == _pairs(a, 0, kind)
    # A smaller per_type takes the first pairings of a larger one (mixed pairs).
    small = _plan(per_type=10, seed=7)
    assert _pairs(small, 0, "W-M") == _pairs(a, 0, "W-M")[:10]


def test_short_name_lists_limit_per_type():
    lists = {"women": ("Ana", "Bea"), "men": ("Cal", "Dan", "Eli"), "neutral": ("Fen", "Gus", "Hal")}
    sizes = {"W": 2, "M": 3, "N": 3}
    assert usable_per_type(20, sizes) == 2  # two women make one pair, asked in both orders
    assert usable_per_type(20, {"W": 10, "M": 10, "N": 10}) == 20
    assert usable_per_type(20, {"W": 4, "M": 4, "N": 4}) == 12
    plan = build_plan(("s",), lists, 2, 0)
    assert plan.size == 9 * 2
    assert len(set(_pairs(plan, 0, "W-M"))) == 2
