"""Planning genmo: pairs to detect an FBR of 1/2 + D (genderprobe.analysis.planning).

GenMO's headline with a neutral value is ``fbr_minus_half`` (FBR - 1/2: the
share of mismatched pairs where the woman's story got the kinder stance, less
the balanced half); PMR is better lower with no neutral value. What a run can
choose is how many of the 907 pairs it asks (``--sample-k``).

A pair's two stances differ with some probability M (the mismatch rate) and a
mismatch favours the woman with probability 1/2 + D. The calibration model
``reference:biased?p=P`` answers the man's story Moral with probability P (else
Immoral) and the woman's Immoral with probability P (else Moral), so
M = P² + (1 - P)² and FBR = (1 - P)² / M: the P with FBR - 1/2 = D. Its M is at
least 1/2, more than most real models mismatch, and FBR's precision rests on
the mismatches, so ``--mismatch-rate`` plans a model whose M you know (its PMR
from an earlier run), with the same D. Pairs are asked once each and are
independent, so a run is multinomial counts of woman-favoured, man-favoured and
matched pairs; it is read by the probe's own interval, the percentile bootstrap
of the ratio over pairs, and detects the bias when that interval of
fbr_minus_half leaves 0 out on the bias's side.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from genderprobe import steps
from genderprobe.analysis.planning import Planner, Settings, excludes
from genderprobe.analysis.stats import percentile_interval
from genderprobe.studies.genmo.dataset import story_pairs


class GenmoPlanner(Planner):
    probe = "genmo"
    metric = "fbr_minus_half"
    bounds = (-0.5, 0.5)
    detect_help = ("an fbr_minus_half (FBR - 1/2) strictly between 0 and 0.5 for women's stories judged kinder "
                   "(or -0.5 and 0 for men's), such as 0.1")
    parameter, flag, unit = "sample_k", "--sample-k", "pairs"
    takes = ("mismatch_rate",)

    def __init__(self, assumptions):
        super().__init__(assumptions)
        self.pairs = sum(not p.identical for p in story_pairs())  # what a run asks by default: 907

    def sizes(self) -> range:
        return range(1, self.pairs + 1)

    @staticmethod
    def _p(detect: float) -> float:
        """The calibration strength: FBR - 1/2 = -x / (1 + x²) with x = 2P - 1."""
        x = -(1 - math.sqrt(1 - 4 * detect**2)) / (2 * detect)
        return (1 + x) / 2

    def _rate(self, detect: float) -> float:
        p = self._p(detect)
        return self.assumptions.mismatch_rate or p**2 + (1 - p) ** 2

    def power(self, size: int, detect: float, settings: Settings) -> float:
        rng, m = settings.rng(size), self._rate(detect)
        # Per pair: the woman's story favoured, the man's, or the two stances alike.
        counts = rng.multinomial(size, [m * (0.5 + detect), m * (0.5 - detect), 1 - m], size=settings.simulations)
        detected = 0
        for c in counts:
            if c[0] + c[1] == 0:  # no mismatch: FBR is undefined, as in the probe
                continue
            w = rng.multinomial(size, c / size, size=settings.resamples)
            with np.errstate(invalid="ignore", divide="ignore"):
                samples = w[:, 0] / (w[:, 0] + w[:, 1])
            fbr = percentile_interval(c[0] / (c[0] + c[1]), samples, int(c[0] + c[1]), 1 - settings.alpha)
            detected += excludes(fbr.ci_low, fbr.ci_high, 0.5, detect)
            steps.advance()
        return detected / settings.simulations

    def normal_size(self, detect: float, settings: Settings) -> int:
        """Pairs whose mismatches, M of them, hold a binomial share 1/2 + D to the normal approximation."""
        z = NormalDist().inv_cdf
        mismatches = ((z(1 - settings.alpha / 2) + z(settings.power)) / detect) ** 2 * (0.25 - detect**2)
        return math.ceil(mismatches / self._rate(detect))

    def until_decided_saving(self, budget: int, detect: float, settings: Settings) -> dict[str, Any]:
        """Simulated on a population of the run's pairs whose FBR and mismatch rate are the plan's (a model
        at temperature 0), asked in a fresh order each run as --until-decided asks them."""
        from genderprobe.analysis.sequential import expected_saving_genmo

        return expected_saving_genmo(0.5 + detect, self._rate(detect), budget, pairs=self.pairs,
                                     runs=min(settings.simulations, 1000), seed=settings.seed)

    def calibration_model(self, size: int, detect: float) -> str:
        return f"reference:biased?p={self._p(detect):g}"

    def meaning(self, detect: float) -> str:
        who = "woman's" if detect > 0 else "man's"
        given = "" if self.assumptions.mismatch_rate else ", the calibration model's rate"
        return (f"the {who} story judged kinder in {0.5 + abs(detect):.1%} of the pairs whose stances differ, "
                f"which are {self._rate(detect):.1%} of the pairs{given}")

    def requests_note(self, size: int) -> str:
        return "both stories of each pair, the CoT template"

    def method(self, size: int, detect: float, settings: Settings) -> str:
        p, m = self._p(detect), self._rate(detect)
        rate = ("--mismatch-rate" if self.assumptions.mismatch_rate else
                f"reference:biased?p={p:g}'s rate P² + (1 - P)²")
        return (
            f"{settings.simulations:,} simulated runs of {size:,} pairs, each pair's two stances differing with "
            f"probability {m:.3g} ({rate}) and a mismatch favouring the "
            f"{'woman' if detect > 0 else 'man'} with probability {0.5 + abs(detect):.3g}; a run detects the bias "
            f"when its {1 - settings.alpha:.0%} percentile bootstrap interval of fbr_minus_half over pairs "
            f"({settings.resamples:,} resamples) excludes 0 on the bias's side. FBR rests on the mismatches alone: "
            f"a model that mismatches less needs more pairs (--mismatch-rate), and all {self.pairs} pairs give the "
            f"narrowest interval GenMO can."
        )

    def run_params(self, size: int) -> dict[str, Any]:
        return {} if size == self.pairs else {"sample_k": size}


PLANNERS = {"genmo": GenmoPlanner}
