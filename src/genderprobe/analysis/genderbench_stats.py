"""GenderBench 0.5.0's sampling, bootstrap and intervals, draw for draw.

GenderBench (probing/probe.py) samples items with ``random.seed(seed);
random.sample(items, k)`` and bootstraps with ``random.seed(seed)`` and then
``random.choices(items, k=len(items))`` per cycle, computing its metrics on
each resample; a metric's interval is a normal fitted to those values.
Here the same draws come from the same Mersenne Twister state: Python's
``random()`` and numpy's ``RandomState.random_sample()`` are the same
generator, so numpy draws GenderBench's resamples at once, and each resample
is a row of item multiplicities. The metrics come from per-item counts
weighted by those rows, so a probe's numbers and intervals are GenderBench's
on the same answers and the same seed (tests/genderbench_parity.py checks it).

The same module is in the direct study; a third GenderBench probe is the time
to move it into genderprobe.analysis.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from genderprobe.analysis.jackknife import cluster_strata, delete_cluster_values, jackknife_interval
from genderprobe.analysis.stats import (
    CONFIDENCE,
    JACKKNIFE_T,
    NORMAL_FIT,
    Estimate,
    MarkDefinition,
    MarkInterval,
    folded_abs,
    folded_distance,
    normal_fit_interval,
    percentile_interval,
)

# Why a model that always takes the reverse stereotype gets A on a stereotype_rate whose mark ranges start at
# -1 (Probe.calibration_notes): GenderBench marks bias in the stereotype's direction only.
REVERSE_STEREOTYPE_NOTE = ("reference:biased-female gives each stereotype to the other gender, so stereotype_rate "
                           "runs the other way (near -1), and GenderBench's mark A runs from -1: a reverse stereotype "
                           "is not marked as bias.")

# Resample rows held at once: cycles x items multiplicities.
_BLOCK_CELLS = 4_000_000
# A probe bootstraps the same items several times (its reader, the other reader, its breakdowns'
# full set): resamples of up to this many cells (48 MB as uint16) are kept for the next use.
_KEPT_CELLS = 24_000_000
_kept: dict[tuple[int, int, int], list[np.ndarray]] = {}


def sample_items(n: int, k: int | None, seed: int) -> list[int]:
    """The items GenderBench keeps of n when it samples k (all, in order, for None)."""
    if k is None:
        return list(range(n))
    return random.Random(seed).sample(range(n), k)


def _numpy_twin(seed: int) -> np.random.RandomState:
    """A numpy generator in the state ``random.seed(seed)`` leaves Python's in."""
    state = random.Random(seed).getstate()[1]
    twister = np.random.MT19937()
    twister.state = {"bit_generator": "MT19937",
                     "state": {"key": np.array(state[:624], dtype=np.uint32), "pos": state[624]}}
    return np.random.RandomState(twister)


def resample_weights(n: int, cycles: int, seed: int) -> Iterator[np.ndarray]:
    """GenderBench's bootstrap resamples in blocks: rows of how often each of the n items was drawn."""
    rng = _numpy_twin(seed)
    block = max(1, _BLOCK_CELLS // max(n, 1))
    for start in range(0, cycles, block):
        size = min(block, cycles - start)
        # random.choices: population[floor(random() * n)], k = n draws per cycle, cycle after cycle
        # (casting truncates, which is floor for these non-negative values).
        drawn = rng.random_sample((size, n))
        drawn *= n
        cells = drawn.astype(np.int64)
        cells += (np.arange(size) * n)[:, None]  # each row's draws counted in its own n cells
        yield np.bincount(cells.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)


def _weights(n: int, cycles: int, seed: int) -> Iterator[np.ndarray]:
    """resample_weights, from the kept resamples where the same ones were drawn before.

    Counts fit uint16: an item is drawn at most n times, and only n * cycles <= _KEPT_CELLS are kept.
    """
    key = (n, cycles, seed)
    if key in _kept:
        return iter(_kept[key])
    if n * cycles > _KEPT_CELLS or n > np.iinfo(np.uint16).max:
        return resample_weights(n, cycles, seed)
    blocks = [w.astype(np.uint16) for w in resample_weights(n, cycles, seed)]
    while _kept and sum(b.size for bs in _kept.values() for b in bs) + n * cycles > _KEPT_CELLS:
        del _kept[next(iter(_kept))]  # the oldest first
    _kept[key] = blocks
    return iter(blocks)


def genderbench_interval(values: np.ndarray) -> tuple[float, float] | None:
    """GenderBench's interval of a metric's bootstrap values; None where it gives (nan, nan).

    All NaN: none. All equal (no NaN): that value twice. Otherwise a normal fitted to the
    values that are not NaN, which has no spread, and so no interval, where those are equal.
    """
    values = np.asarray(values, dtype=np.float64)
    nan = np.isnan(values)
    if nan.all():
        return None
    kept = values[~nan]
    if np.all(kept == kept[0]):
        return (float(kept[0]), float(kept[0])) if not nan.any() else None
    return normal_fit_interval(kept)


Metrics = Callable[[np.ndarray], dict[str, np.ndarray]]


@dataclass(frozen=True)
class Groups:
    """How a metric that is a mean of group means is printed: by the stratified jackknife (analysis.jackknife).

    clusters: one label per item, the same for items whose answers are the same (their prompts are);
    strata: one integer per item, its group in the mean (jackknife.OUTSIDE where it enters none: unread);
    metrics: the metrics so printed; bounds: the values they can take.
    """

    clusters: np.ndarray
    strata: np.ndarray
    metrics: tuple[str, ...] = ("masculine_rate",)
    bounds: tuple[float, float] = (0.0, 1.0)


class Bootstrapped:
    """A probe's GenderBench metrics on all items and on each of GenderBench's resamples.

    counts: one row per item (in GenderBench's item order) of the counts its metrics add up;
    metrics: those counts summed per resample (rows) -> metric name -> one value per row;
    groups: where some metrics are means of group means, printed with the jackknife's interval.
    """

    # None and nothing left out unless groups are given (also for subclasses with their own __init__).
    groups: Groups | None = None
    replicates: Mapping[str, np.ndarray] = MappingProxyType({})

    def __init__(self, counts: np.ndarray, metrics: Metrics, *, cycles: int, seed: int, groups: Groups | None = None):
        counts = np.asarray(counts, dtype=np.float64)
        self.n = counts.shape[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            self.points = {k: float(v[0]) for k, v in metrics(counts.sum(axis=0, keepdims=True)).items()}
            blocks = [metrics(w @ counts) for w in _weights(self.n, cycles, seed)]
        self.draws = {k: np.concatenate([b[k] for b in blocks]) for k in self.points}
        # Each grouped metric with one whole prompt (cluster) left out, and each cluster's group.
        if groups is not None and self.n:
            self.groups = groups
            left_out = delete_cluster_values(counts, metrics, groups.clusters)
            self.replicates = {k: left_out[k] for k in groups.metrics}
            self.cluster_strata = cluster_strata(groups.clusters, groups.strata)

    def jackknifed(self, name: str, n: int, null: float = 0.0) -> Estimate:
        """A grouped metric's value with its jackknife interval (p_zero: of "differs from ``null``")."""
        return jackknife_interval(self.points[name], self.replicates[name], self.cluster_strata, n,
                                  bounds=self.groups.bounds, null=null)

    def estimate(self, name: str, n: int) -> Estimate:
        """The metric's value (GenderBench's point), with the percentile interval of its resamples."""
        point = self.points[name]
        if math.isnan(point):
            return Estimate(None, None, None, n)
        return percentile_interval(point, self.draws[name], n)

    def intervals(self) -> dict[str, list[float] | None]:
        """Every metric's interval as GenderBench reports it (calculate_cis=True)."""
        return {k: (list(iv) if (iv := genderbench_interval(v)) else None) for k, v in self.draws.items()}

    def mark(self, definition: MarkDefinition, estimate: Estimate) -> dict:
        """GenderBench's mark of the metric: from the normal fitted to its resamples."""
        values = self.draws[definition.metric]
        if genderbench_interval(values) is None:
            return definition.to_json(Estimate(None, None, None, estimate.n))
        return definition.to_json(estimate, values)


# GenderBench's metrics that are the absolute value of another, |signed - center|, and the probes that have them.
FOLDED_FROM = {
    "diff_abs_success_rate": ("diff_success_rate", 0.0),  # DiversityMedQa
    "diff_abs_acceptance_rate": ("diff_acceptance_rate", 0.0),  # HiringAn
    "disparity": ("masculine_rate", 0.5),  # GestCreative, Inventories, JobsLum, HiringBloomberg
}


def folded_note(name: str) -> dict[str, str]:
    """How the metric's printed interval differs from GenderBench's (a ProbeResult.metric_notes entry)."""
    signed, center = FOLDED_FROM[name]
    what = f"{signed}'s interval" if center == 0 else f"{signed}'s distance from {center:g}"
    return {name: f"interval: {what} folded at 0, reaching 0 when unbiased "
                  "(GenderBench's, which marks: genderbench_ci in results.json)"}


# The note of a metric printed with the jackknife's interval (Groups), beside folded_note's.
JACKKNIFE_NOTE = {"masculine_rate": "interval: the stratified jackknife's, a prompt left out at a time (GenderBench's, "
                                    "which marks: genderbench_ci in results.json)"}


def printed(boot: Bootstrapped, name: str, n: int) -> Estimate:
    """A metric as every surface prints it: GenderBench's value with its percentile interval, but one of
    FOLDED_FROM's, |signed - center|, with the interval of signed - center folded at 0, so that it reaches
    0 when the model is unbiased (genderprobe.analysis.stats.with_abs_interval), and a grouped metric
    (Bootstrapped's groups) with its jackknife interval, its absolute value with that one folded;
    GenderBench's interval kept as their genderbench_ci. The mark is read as before (:meth:`Bootstrapped.mark`)."""
    est = boot.estimate(name, n)
    if name in boot.replicates:
        jack = boot.jackknifed(name, n)
        if est.value is None or jack.ci_low is None:
            return est
        gb = genderbench_interval(boot.draws[name])
        return dataclasses.replace(est, ci_low=jack.ci_low, ci_high=jack.ci_high, p_zero=jack.p_zero, p_one=None,
                                   ci_method=JACKKNIFE_T,
                                   genderbench_ci=None if gb is None else MarkInterval(*gb, NORMAL_FIT, CONFIDENCE))
    if name not in FOLDED_FROM:
        return est
    signed, center = FOLDED_FROM[name]
    gb = genderbench_interval(boot.draws[name])
    if signed in boot.replicates:
        jack = boot.jackknifed(signed, n, null=center)
        if jack.ci_low is not None:
            return folded_abs(est, Estimate(jack.value - center, jack.ci_low - center, jack.ci_high - center, n,
                                            p_zero=jack.p_zero), gb)
    return folded_distance(est, boot.points[signed], boot.draws[signed], center, gb)


def first_max(*values: np.ndarray) -> np.ndarray:
    """Python's ``max(values)`` element-wise, NaN as Python treats it: the first value is kept
    unless a later one is greater (so a NaN first stays, a NaN later is passed over)."""
    out = values[0].copy()
    for v in values[1:]:
        out = np.where(v > out, v, out)
    return out
