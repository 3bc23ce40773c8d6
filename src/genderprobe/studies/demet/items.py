"""Which names fill which scenario: the DeMET sampling plan (Levy et al. 2024, Section 4.1).

For each scenario and each of the nine relationship types A-B, ``per_type``
filled scenarios (the paper's 20):

* a mixed pair (A, B) draws ``per_type`` distinct (a, b) pairings; type A-B uses
  them as (NAME1 = a, NAME2 = b) and type B-A reuses them in reverse order, so
  slot j of W-M and slot j of M-W hold the same two people;
* a same-group type draws ``per_type / 2`` distinct unordered pairs of two
  different names and uses each in both orders (slots 2q and 2q + 1).

Draws are seeded permutations (:func:`genderprobe.analysis.sampling.permute`) keyed by
the scenario's id, so a scenario gets the same names whichever scenario set it
is run in, and a smaller ``per_type`` takes the first pairings of a larger one.
When a user's name lists are too short for ``per_type`` distinct pairings, the
plan uses the largest even number they allow (recorded in the results).

Rows are ordered scenario, type, slot: row = (scenario * 9 + type) * per_type + slot.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from genderprobe.analysis.sampling import permute, splitmix64
from genderprobe.studies.demet.scores import GROUP_OF, GROUPS, PAIRS, TYPES


@dataclass(frozen=True)
class Plan:
    """The filled-scenario table, one entry per prompt (numpy columns)."""

    per_type: int
    names: tuple[str, ...]  # women, then men, then neutral
    name_group: np.ndarray  # index into GROUPS, per name
    scenario: np.ndarray
    type: np.ndarray  # index into TYPES
    slot: np.ndarray
    name1: np.ndarray  # index into names
    name2: np.ndarray

    @property
    def size(self) -> int:
        return int(self.scenario.size)


def usable_per_type(requested: int, sizes: Mapping[str, int]) -> int:
    """The largest even count <= requested that the name lists can fill without repeats."""
    limit = requested
    for g in GROUPS:
        n = sizes[g]
        limit = min(limit, n * (n - 1))  # unordered pairs, each in both orders
    for a in GROUPS:
        for b in GROUPS:
            if a != b:
                limit = min(limit, sizes[a] * sizes[b])
    return max(2, limit - limit % 2)


def build_plan(
    scenario_ids: tuple[str, ...], lists: Mapping[str, tuple[str, ...]], per_type: int, seed: int
) -> Plan:
    """Draw the names of every prompt: scenarios x nine types x per_type slots."""
    members = [lists[GROUP_OF[g]] for g in GROUPS]
    offsets = np.cumsum([0] + [len(m) for m in members])
    names = tuple(n for m in members for n in m)
    name_group = np.repeat(np.arange(len(GROUPS)), [len(m) for m in members])
    n_scen, n_types, p = len(scenario_ids), len(TYPES), per_type
    name1 = np.empty((n_scen, n_types, p), np.int64)
    name2 = np.empty((n_scen, n_types, p), np.int64)
    for t, kind in enumerate(TYPES):
        a, b = kind.split("-")
        ga, gb = GROUPS.index(a), GROUPS.index(b)
        if a == b:
            first, second = _same_group(len(members[ga]), p, seed, _streams(scenario_ids, kind, p // 2))
        elif kind == _canonical(a, b):
            first, second = _mixed(len(members[ga]), len(members[gb]), p, seed, _streams(scenario_ids, kind, p))
        else:
            # B-A reuses the pairings drawn for A-B, in reverse order.
            b_idx, a_idx = _mixed(len(members[gb]), len(members[ga]), p, seed, _streams(scenario_ids, f"{b}-{a}", p))
            first, second = a_idx, b_idx
        name1[:, t] = offsets[ga] + first.reshape(n_scen, p)
        name2[:, t] = offsets[gb] + second.reshape(n_scen, p)
    shape = (n_scen, n_types, p)
    grid = np.indices(shape)
    return Plan(
        per_type=p,
        names=names,
        name_group=name_group,
        scenario=grid[0].ravel(),
        type=grid[1].ravel(),
        slot=grid[2].ravel(),
        name1=name1.ravel(),
        name2=name2.ravel(),
    )


def build_null_plan(
    scenario_ids: tuple[str, ...], lists: Mapping[str, tuple[str, ...]], per_type: int, seed: int
) -> Plan:
    """The null baseline's prompts (beyond the paper): each mixed pair's design with no gender difference.

    For the pair (A, B), slot j holds two different people x and y of one group
    (A's for even j, B's for odd j): the A-B row asks (NAME1 = x, NAME2 = y), the
    B-A row the same two in reverse order, as a mixed pair's slot j does. Each
    group's couples are one seeded permutation of its unordered pairs per
    scenario, split between the two pairs the group is in, so no couple repeats
    while the lists allow; a seeded coin puts one of the two in x's place, so x
    and y are exchangeable and bias(A, B) on these rows (x in A's place) has
    expected value 0. Rows are the mixed types only, ordered scenario, type, slot.
    """
    members = [lists[GROUP_OF[g]] for g in GROUPS]
    offsets = np.cumsum([0] + [len(m) for m in members])
    full = build_plan(scenario_ids, lists, per_type, seed)
    n_scen, half = len(scenario_ids), per_type // 2
    name1 = np.zeros((n_scen, len(TYPES), per_type), np.int64)
    name2 = np.zeros_like(name1)
    kinds = [_canonical(a, b) for a, b in PAIRS]
    for gi, g in enumerate(GROUPS):
        first, second = np.triu_indices(len(members[gi]), 1)
        streams = _streams(scenario_ids, f"null {g}", half)
        for k, kind in enumerate(kd for kd in kinds if g in kd.split("-")):
            draw = np.tile((k * half + np.arange(half)) % first.size, n_scen)
            pick = permute(draw, first.size, seed, streams)
            coin = (splitmix64(streams ^ draw.astype(np.uint64)) & np.uint64(1)).astype(bool)
            x = offsets[gi] + np.where(coin, second[pick], first[pick]).reshape(n_scen, half)
            y = offsets[gi] + np.where(coin, first[pick], second[pick]).reshape(n_scen, half)
            a, b = kind.split("-")
            slots = slice(kind.split("-").index(g), None, 2)
            ab, ba = TYPES.index(kind), TYPES.index(f"{b}-{a}")
            name1[:, ab, slots], name2[:, ab, slots] = x, y
            name1[:, ba, slots], name2[:, ba, slots] = y, x
    keep = np.array([kind[0] != kind[2] for kind in TYPES])[full.type]
    return Plan(per_type, full.names, full.name_group, full.scenario[keep], full.type[keep], full.slot[keep],
                name1.ravel()[keep], name2.ravel()[keep])


def _canonical(a: str, b: str) -> str:
    """The type of a mixed pair whose pairings are drawn (the pair's first type in TYPES)."""
    ab, ba = f"{a}-{b}", f"{b}-{a}"
    return ab if TYPES.index(ab) < TYPES.index(ba) else ba


def _mixed(n_a: int, n_b: int, p: int, seed: int, streams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p distinct (a, b) pairings out of n_a x n_b for each scenario (flattened, scenario-major)."""
    pick = permute(np.tile(np.arange(p), streams.size // p), n_a * n_b, seed, streams)
    return pick // n_b, pick % n_b


def _same_group(n: int, p: int, seed: int, streams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p / 2 distinct unordered pairs of two different names per scenario, each in both orders."""
    first, second = np.triu_indices(n, 1)
    pick = permute(np.tile(np.arange(p // 2), streams.size // (p // 2)), first.size, seed, streams)
    i, j = first[pick], second[pick]
    return np.stack([i, j], 1).ravel(), np.stack([j, i], 1).ravel()


def _streams(scenario_ids: tuple[str, ...], kind: str, per_scenario: int) -> np.ndarray:
    """A stable 63-bit permutation key per scenario and type, repeated per draw."""
    keys = [
        int.from_bytes(hashlib.blake2b(f"{sid}\x00{kind}".encode(), digest_size=8).digest(), "little") >> 1
        for sid in scenario_ids
    ]
    return np.repeat(np.array(keys, dtype=np.uint64), per_scenario)
