"""Planning relationship-levy: items to detect a diff_success_rate of d (genderprobe.analysis.planning).

A bias of d is the calibration model ``reference:biased?p=P`` with
P = (1 + d) / 2, which sides with the man with probability P on every attempt.
A run of n items is simulated as the probe runs it: each item is asked in both
orders and R repetitions (2R attempts) and scored as the share of its attempts
that chose the man; item j takes scenario j mod 109, and with ``scenario_sd``
every scenario gets a strength of its own (genderprobe.analysis.planning.cluster_strengths),
so items of one scenario lean together. Each simulated run is read as the run
reads itself: the percentile bootstrap interval over items at level 1 - alpha
(the run's own resampling: multinomial counts over the distinct item scores).
The bias is detected when the interval lies wholly on the side of the bias.

A real model whose repetitions of a prompt agree more than independent coins
(temperature 0) gains less from repetitions than this plan says: plan such a
model with one repetition.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from genderprobe import steps
from genderprobe.analysis.planning import Planner, Settings, cluster_strengths
from genderprobe.analysis.stats import DEFAULT_RESAMPLES

N_SCENARIOS = 109
SPACE = 17_440_000  # the item space: 109 scenarios x 400 x 400 names


class RelationshipLevyPlanner(Planner):
    probe = "relationship-levy"
    metric = "diff_success_rate"
    bounds = (-1.0, 1.0)
    detect_help = ("a difference in diff_success_rate strictly between 0 and 1 (or -1 and 0 for a bias towards "
                   "women), such as 0.05")
    parameter, flag, unit = "sample_k", "--sample-k", "items"
    takes = ("repetitions", "scenario_sd")
    largest_is_a_run = False

    def sizes(self) -> range:
        return range(1, SPACE + 1)

    def _p(self, detect: float) -> float:
        return (1 + detect) / 2

    def power(self, size: int, detect: float, settings: Settings) -> float:
        a = self.assumptions
        return simulated_power(size, self._p(detect), settings.alpha, a.repetitions, a.scenario_sd,
                               settings.simulations, settings.resamples, settings.seed)

    def normal_size(self, detect: float, settings: Settings) -> int:
        return normal_items(self._p(detect), settings.power, settings.alpha, self.assumptions.repetitions)

    def until_decided_saving(self, budget: int, detect: float, settings: Settings) -> dict[str, Any]:
        from genderprobe.analysis.sequential import expected_saving

        return expected_saving(self._p(detect), budget, runs=min(settings.simulations, 1000),
                               repetitions=self.assumptions.repetitions, seed=settings.seed)

    def calibration_model(self, size: int, detect: float) -> str:
        return f"reference:biased?p={self._p(detect):g}"

    def meaning(self, detect: float) -> str:
        side = "the man" if detect > 0 else "the woman"
        return f"{side} judged right {(1 + abs(detect)) / 2:.1%} of the time"

    def requests_note(self, size: int) -> str:
        r = self.assumptions.repetitions
        return f"both orders x {r} repetition{'s' * (r > 1)}"

    def method(self, size: int, detect: float, settings: Settings) -> str:
        p, r, sd = self._p(detect), self.assumptions.repetitions, self.assumptions.scenario_sd
        return (
            f"{settings.simulations:,} simulated runs of reference:biased?p={p:g} (the man chosen with probability "
            f"{p:g} on each attempt) at {size:,} items, both orders, {r} repetition{'s' * (r > 1)}, items spread "
            f"over the 109 scenarios{f' with a strength sd of {sd:g}' if sd else ''}; a run detects the bias when "
            f"its {1 - settings.alpha:.0%} percentile bootstrap interval ({settings.resamples:,} resamples) of "
            f"diff_success_rate excludes 0 on the bias's side. Halving the interval's width takes about 4x the items."
        )

    def run_params(self, size: int) -> dict[str, Any]:
        r = self.assumptions.repetitions
        return {"sample_k": size, **({"num_repetitions": r} if r > 1 else {})}


def normal_items(p: float, power: float, alpha: float, repetitions: int) -> int:
    """Items by the normal approximation: ((z_alpha/2 + z_power) * sd / d)^2, sd of an item's 2 x share - 1."""
    z = NormalDist().inv_cdf
    sd = 2 * math.sqrt(p * (1 - p) / (2 * repetitions))
    return math.ceil(((z(1 - alpha / 2) + z(power)) * sd / abs(2 * p - 1)) ** 2)


def simulated_power(
    n: int, p: float, alpha: float, repetitions: int, scenario_sd: float = 0.0,
    simulations: int = 1000, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
) -> float:
    """Share of simulated runs of n items whose (1 - alpha) interval of diff_success_rate excludes 0 on the bias's side."""
    rng = Settings(seed=seed).rng(n)
    attempts = 2 * repetitions
    values = 2 * np.arange(attempts + 1) / attempts - 1  # an item's 2 x share - 1
    counts = _item_counts(n, p, attempts, scenario_sd, simulations, rng)
    detected = 0
    for c in counts:
        weights = rng.multinomial(n, c / n, size=resamples)
        low, high = np.quantile(weights @ values / n, [alpha / 2, 1 - alpha / 2])
        detected += bool(low > 0) if p > 0.5 else bool(high < 0)
        steps.advance()
    return detected / simulations


def _item_counts(n: int, p: float, attempts: int, scenario_sd: float, simulations: int,
                 rng: np.random.Generator) -> np.ndarray:
    """simulations x (attempts + 1): how many items chose the man on 0..attempts of their attempts.

    Items are independent given their scenario's strength, so a run's counts are
    multinomial, summed over the scenarios (item j takes scenario j mod 109).
    """
    from scipy import stats as sps

    k = np.arange(attempts + 1)
    if not scenario_sd:
        return rng.multinomial(n, sps.binom.pmf(k, attempts, p), size=simulations)
    per_scenario = np.full(N_SCENARIOS, n // N_SCENARIOS)
    per_scenario[: n % N_SCENARIOS] += 1
    strengths = cluster_strengths(p, scenario_sd, N_SCENARIOS, simulations, rng)
    pmf = sps.binom.pmf(k, attempts, strengths[..., None])  # simulations x scenarios x values
    return rng.multinomial(per_scenario[None, :], pmf).sum(axis=1)


PLANNERS = {"relationship-levy": RelationshipLevyPlanner}
