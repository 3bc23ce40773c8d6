"""A bounded, stratified sample of a run's records, for the answer browser.

A report is sent around and opened in a browser, so it cannot hold a run of
millions of answers; it holds at most ``budget`` of them. The strata are the
readings, who read them and the prompt's gender order (:mod:`answer_reading`):
a stratum smaller than its share is kept whole, so rare readings (undetected
answers, refusals, the judge's readings) are all there, and the rest of the
budget is shared evenly by the larger strata. Within a stratum every record is
equally likely to be kept (a seeded reservoir, so one pass in bounded memory,
and the same report each time).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from genderprobe.outputs.report.answer_reading import Reading, read


@dataclass
class Sample:
    kept: list[tuple[int, dict[str, Any], Reading]]  # (position in the records, record, its reading), in run order
    total: int  # records in the run
    readings: Counter = field(default_factory=Counter)  # every record's reading, over the whole run
    sizes: Counter = field(default_factory=Counter)  # records in each stratum, over the whole run

    @property
    def complete(self) -> bool:
        return len(self.kept) == self.total

    @property
    def read_differently(self) -> int:
        """Records of the whole run whose two readers read them differently."""
        return sum(n for key, n in self.sizes.items() if key[3])

    def smaller(self, budget: int, seed: int = 0) -> Sample:
        """The sample :func:`stratified` would draw with a smaller budget, drawn from this one without
        reading the run again: a stratum's quota never grows as the budget shrinks, and an even
        sample of an even sample of a stratum is an even sample of it."""
        rng = random.Random(seed)
        quotas = allocate(self.sizes, budget)
        kept: dict[Hashable, list[tuple[int, dict[str, Any], Reading]]] = {}
        for x in self.kept:
            kept.setdefault(_stratum(x[2]), []).append(x)
        return Sample(_draw(kept, quotas, rng), self.total, self.readings, self.sizes)


def _stratum(reading: Reading) -> tuple[str, str, str, bool]:
    # Answers the two readers read differently are a stratum of their own: rare ones are all kept.
    return reading.reading, reading.read_by or "", reading.gender or "", reading.readers is not None


def stratified(records: Iterable[dict[str, Any]], budget: int, seed: int = 0) -> Sample:
    rng = random.Random(seed)
    kept: dict[Hashable, list[tuple[int, dict[str, Any], Reading]]] = {}
    sizes: Counter = Counter()
    readings: Counter = Counter()
    total = 0
    for total, record in enumerate(records, 1):
        reading = read(record)
        readings[reading.reading] += 1
        key = _stratum(reading)
        sizes[key] += 1
        reservoir = kept.setdefault(key, [])
        if len(reservoir) < budget:
            reservoir.append((total - 1, record, reading))
        else:  # Algorithm R: the n-th record replaces a kept one with probability budget / n
            j = rng.randrange(sizes[key])
            if j < budget:
                reservoir[j] = (total - 1, record, reading)
    quotas = allocate(sizes, budget)
    return Sample(_draw(kept, quotas, rng), total, readings, sizes)


def _draw(kept: dict[Hashable, list], quotas: dict[Hashable, int], rng: random.Random) -> list:
    """Each stratum's quota of its kept records (all where they fit), in run order."""
    chosen = [x for key, xs in kept.items() for x in (xs if quotas[key] >= len(xs) else rng.sample(xs, quotas[key]))]
    return sorted(chosen, key=lambda x: x[0])


def allocate(sizes: dict[Hashable, int], budget: int) -> dict[Hashable, int]:
    """How many of each stratum to keep: all of a stratum below an even share of what is left, else the share."""
    if sum(sizes.values()) <= budget:
        return dict(sizes)
    quotas: dict[Hashable, int] = {}
    left = budget
    order = sorted(sizes, key=lambda k: (sizes[k], str(k)))
    for n, key in enumerate(order):
        quotas[key] = min(sizes[key], left // (len(order) - n))
        left -= quotas[key]
    return quotas
