"""Planning demet: filled scenarios per type to detect a mixed-gender bias of D (genderprobe.analysis.planning).

DeMET's sample is fixed but for ``--per-type`` (filled scenarios per type and
scenario; the scenario sets and name lists are the paper's), so that is what
the plan sizes, for the scenario set asked (``--scenarios``, default human).

A bias of D is the calibration model ``reference:biased?p=P`` with
P = 1/2 + 3D/8: it chooses the man with probability P where exactly one of the
two is a man and the first option with probability P otherwise, so
bias(W,M) = bias(N,M) = 2(1 - 2P) = -3D/2, bias(W,N) = 0 and Eq. 2's
mixed_gender_bias = D (docs/statistics.md, "Calibration models of a chosen
strength"). A simulated run is the probe's: every scenario x slot unit holds one
answer of each type, independent coins, so each pair's unit difference
s(B-A) - s(A-B) is -2, 0 or 2, and a run is multinomial counts of them (per
scenario, with ``scenario_sd``, each scenario's P drawn around P).

The detection rule is the probe's own interval of its headline that holds its
coverage: ``mixed_gender_bias_folded`` (genderprobe.analysis.stats.abs_combination_interval
on the bootstrap over units). The printed interval of mixed_gender_bias, a mean
of absolute values, never reaches 0 and leaves it out for a model with no bias
at all (0% coverage at P = 0.5), so it would "detect" any bias with any sample.
Its lower end is above 0 where the error quantile at the least favourable
corner of the joint 99.5% sign box still leaves the value above 0: in practice
where some pair bias's sign is settled (the box leaves 0 out).
"""

from __future__ import annotations

import math
from dataclasses import replace
from statistics import NormalDist
from typing import Any

import numpy as np

from genderprobe import steps
from genderprobe.analysis.planning import Planner, Settings, cluster_strengths
from genderprobe.analysis.stats import ABS_RESAMPLES, SIGN_LEVEL, _abs_tails, _box_half_widths
from genderprobe.data.name_lists import levy_names
from genderprobe.errors import UserError
from genderprobe.studies.demet.dataset import SCENARIO_SETS, scenarios
from genderprobe.studies.demet.items import usable_per_type
from genderprobe.studies.demet.scores import GROUP_OF, GROUPS, PAIRS, TYPES

# A unit's difference s(B-A) - s(A-B) for one pair.
_DIFFS = np.array([-2.0, 0.0, 2.0])


def name2_chosen(kind: str, p: np.ndarray | float) -> np.ndarray | float:
    """P(NAME2 chosen) on a type A-B under reference:biased?p=P: P where NAME2 is the only man,
    else 1 - P (NAME1 is the only man, or neither is and the first option is taken with P)."""
    a, b = kind.split("-")
    return p if (b == "M" and a != "M") else 1 - p


def pair_pmf(p: np.ndarray | float) -> np.ndarray:
    """(..., pairs, 3): the chance of each pair's unit difference (-2, 0, 2) at strength p."""
    p = np.asarray(p, dtype=np.float64)
    out = []
    for a, b in PAIRS:
        q_ab, q_ba = name2_chosen(f"{a}-{b}", p), name2_chosen(f"{b}-{a}", p)
        out.append(np.stack([(1 - q_ba) * q_ab, q_ba * q_ab + (1 - q_ba) * (1 - q_ab), q_ba * (1 - q_ab)], -1))
    return np.stack(out, -2)


def folded_low_end(points: np.ndarray, draws: np.ndarray, alpha: float) -> float:
    """The lower end of mixed_gender_bias_folded, the mean of absolute pair biases: that of
    :func:`genderprobe.analysis.stats.abs_combination_interval` (equal to it: tests/harness/test_plan.py),
    in one error quantile rather than one per corner of the sign box.

    The lower end is the value less the largest upper quantile of the error
    sum_i w_i (|t_i + Z_i| - |t_i|) over the box's corners. For every draw Z each term falls
    as t_i leaves 0 on either side, so the error at the corner nearest 0 (0 where the box
    holds it, else its end nearer 0) is the largest at every draw, and so is its quantile."""
    weights = np.full(points.size, 1 / points.size)
    value = float(weights @ np.abs(points))
    dev = draws - points
    se = dev.std(axis=0)
    half = _box_half_widths(dev, se, SIGN_LEVEL)
    lo, hi = points - half, points + half
    open_ = (lo <= 0) & (hi >= 0)
    nearest = np.where(open_, 0.0, np.where(lo > 0, lo, hi))
    _, a_hi = _abs_tails(alpha - SIGN_LEVEL, weights[open_])
    upper = float(np.quantile((np.abs(nearest + dev) - np.abs(nearest)) @ weights, 1 - a_hi))
    return min(max(value - upper, 0.0), value)


class DemetPlanner(Planner):
    probe = "demet"
    metric = "mixed_gender_bias"
    bounds = (0.0, 4 / 3)
    detect_help = ("a mixed_gender_bias (Eq. 2, the mean of the absolute pair biases) strictly between 0 and 4/3, "
                   "the largest the calibration model reaches, such as 0.1")
    parameter, flag, unit = "per_type", "--per-type", "filled scenarios per type"
    takes = ("scenario_sd", "scenarios")
    normal_label = "normal approximation, two biased pairs"

    def __init__(self, assumptions):
        super().__init__(replace(assumptions, scenarios=assumptions.scenarios or "human"))
        self.scenario_set = self.assumptions.scenarios
        if self.scenario_set not in SCENARIO_SETS:
            raise UserError(f"Unknown --scenarios value '{self.scenario_set}'; use human, gpt4 or all.")
        self.n_scenarios = len(scenarios(self.scenario_set))
        lists = levy_names()
        self.largest = usable_per_type(10_000, {g: len(lists[GROUP_OF[g]]) for g in GROUPS})

    def sizes(self) -> range:
        return range(2, self.largest + 1, 2)

    @staticmethod
    def _p(detect: float) -> float:
        return 0.5 + 3 * detect / 8

    def power(self, size: int, detect: float, settings: Settings) -> float:
        rng, p, sd = settings.rng(size), self._p(detect), self.assumptions.scenario_sd
        units = self.n_scenarios * size
        # simulations x pairs x 3: how many units took each difference. A unit's three pairs are
        # prompts of their own, independent given the scenario's strength.
        if sd:
            strengths = cluster_strengths(p, sd, self.n_scenarios, settings.simulations, rng)
            counts = rng.multinomial(size, pair_pmf(strengths)).sum(axis=1)
        else:
            counts = rng.multinomial(units, pair_pmf(p), size=(settings.simulations, len(PAIRS)))
        detected = 0
        resamples = max(settings.resamples, ABS_RESAMPLES)  # the interval's 99.5% quantiles need them
        for c in counts:
            # The probe's bootstrap over units: multinomial counts over the distinct unit values. A unit's
            # three pair differences are independent coins, so each pair's margin is resampled alone.
            samples = np.stack([rng.multinomial(units, pair / units, size=resamples) @ _DIFFS
                                for pair in c], -1) / units
            detected += folded_low_end(c @ _DIFFS / units, samples, settings.alpha) > 0
            steps.advance()
        return detected / settings.simulations

    def normal_size(self, detect: float, settings: Settings) -> int:
        """Two biased pairs, each settled by the joint 99.5% box over three (about z(1 - 0.005/6) = 3.14
        standard errors): either detects it, so each needs the power 1 - sqrt(1 - power); a unit's
        difference has variance 8P(1 - P)."""
        z, p = NormalDist().inv_cdf, self._p(detect)
        each = 1 - math.sqrt(1 - settings.power)
        units = ((z(1 - SIGN_LEVEL / 6) + z(each)) / (1.5 * detect)) ** 2 * 8 * p * (1 - p)
        return 2 * math.ceil(units / self.n_scenarios / 2)

    def calibration_model(self, size: int, detect: float) -> str:
        return f"reference:biased?p={self._p(detect):g}"

    def meaning(self, detect: float) -> str:
        return (f"bias(W,M) = bias(N,M) = {-1.5 * detect:+g} and bias(W,N) = 0: the man chosen "
                f"{self._p(detect):.1%} of the time where one of the two is a man")

    def requests_note(self, size: int) -> str:
        return (f"{self.n_scenarios} scenarios x {len(TYPES)} relationship types x {size}; "
                "more where an answer needs rewording")

    def method(self, size: int, detect: float, settings: Settings) -> str:
        p, sd = self._p(detect), self.assumptions.scenario_sd
        return (
            f"{settings.simulations:,} simulated runs of reference:biased?p={p:g} (the man chosen with probability "
            f"{p:g} where one of the two is a man, the first option with probability {p:g} otherwise) on the "
            f"{self.n_scenarios} {self.scenario_set} scenarios x {len(TYPES)} relationship types x {size} filled "
            f"scenarios, every prompt answered{f', each scenario with a strength sd of {sd:g}' if sd else ''}; a run "
            f"detects the bias when the lower end of its mixed_gender_bias_folded interval is above 0: the "
            f"interval of a mean of absolute values over a bootstrap of filled-scenario slots "
            f"({max(settings.resamples, ABS_RESAMPLES):,} resamples; the error's quantiles at the least favourable "
            f"corner of a joint 99.5% box of the signed pair biases), the interval of this absolute metric "
            f"that holds its coverage (the printed one leaves 0 out even with no bias). "
            f"Halving the interval's width takes about 4x --per-type."
        )

    def run_params(self, size: int) -> dict[str, Any]:
        return {"per_type": size, **({"scenarios": self.scenario_set} if self.scenario_set != "human" else {})}


PLANNERS = {"demet": DemetPlanner}
NOT_PLANNED = {
    "demet-names": "its headline is how often names are read as the gender they stand for "
                   "(better higher), a check of the names with no neutral value that a bias is measured from",
}
