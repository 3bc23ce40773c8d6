"""Planning multilingual-pronouns: repetitions to detect a disparate impact of D (genderprobe.analysis.planning).

The headline di_<class> is P(she | class word) / P(he | class word), pooled
over the class's words of English, Chinese and Japanese (the languages Section
4.3.2 compares), with neutral value 1. The word lists are fixed, so what a run
can choose is the attempts per word (``--repetitions``); the planned run asks
the headline's three languages only, as the others do not enter it.

A bias of D is di_communal = D (and di_standout = 1/D). The calibration model
``reference:biased?p=P`` follows the probe's oracle, which fills "she" beside a
communal word on round(0.8 R) of its R attempts and "he" on the rest, each with
probability P (the other pronoun otherwise): a share q of "she" with
q = (L P + (R - L)(1 - P)) / R, L = round(0.8 R), and D = q / (1 - q), so P
depends on R. At R = 3 its largest D is 2 (q = 2/3), so D stays within (1/2, 2),
where every R has a P. A simulated run draws each communal word's "she" count
(with ``scenario_sd``, each word's P drawn around P: words play the scenarios'
part) and reads it as the probe does: the percentile bootstrap interval of the
ratio over the class's words; it detects the bias when di_communal's interval
leaves 1 out on the bias's side.
"""

from __future__ import annotations

import math
from functools import cache
from statistics import NormalDist
from typing import Any

import numpy as np

from genderprobe import steps
from genderprobe.analysis.planning import Planner, Settings, cluster_strengths, excludes
from genderprobe.analysis.stats import percentile_interval
from genderprobe.studies.multilingual.calibration import pronoun_oracle
from genderprobe.studies.multilingual.dataset import word_list
from genderprobe.studies.multilingual.headline import PRONOUN_PAPER_LANGUAGES
from genderprobe.studies.multilingual.prompts import PRONOUNS

MAX_REPETITIONS = 1000  # the probe's limit on --repetitions
CLASS = "communal"


@cache
def leaning(repetitions: int) -> int:
    """How many of a communal word's attempts the oracle's biased persona fills with "she"."""
    she = PRONOUNS["en"]["she"]
    return sum(pronoun_oracle("en", "", CLASS, r, repetitions, scored=True)["biased"] == she
               for r in range(repetitions))


class PronounsPlanner(Planner):
    probe = "multilingual-pronouns"
    metric = f"di_{CLASS}"
    neutral = 1.0
    bounds = (0.5, 2.0)
    detect_help = ("a disparate impact di_communal (P(she) / P(he) beside communal words) strictly between 1 and 2, "
                   "or between 0.5 and 1 for 'he' (as far as the calibration model reaches at every --repetitions), "
                   "such as 1.25")
    parameter, flag, unit = "num_repetitions", "--repetitions", "repetitions"
    takes = ("scenario_sd",)

    def __init__(self, assumptions):
        super().__init__(assumptions)
        lists = [word_list(lang) for lang in PRONOUN_PAPER_LANGUAGES]
        self.words = sum(w.classes.count(CLASS) for w in lists)  # 68
        self.all_words = sum(len(w.words) for w in lists)

    def sizes(self) -> range:
        return range(1, MAX_REPETITIONS + 1)

    @staticmethod
    def _p(size: int, detect: float) -> float:
        q, lean = detect / (1 + detect), leaning(size)
        return (q * size - (size - lean)) / (2 * lean - size)

    def power(self, size: int, detect: float, settings: Settings) -> float:
        rng, p, lean = settings.rng(size), self._p(size, detect), leaning(size)
        shape = (settings.simulations, self.words)
        sd = self.assumptions.scenario_sd
        strength = cluster_strengths(p, sd, self.words, settings.simulations, rng) if sd else np.full(shape, p)
        she = rng.binomial(lean, strength) + rng.binomial(size - lean, 1 - strength)
        detected = 0
        for counts in she:
            # The probe's bootstrap_ratio: words drawn with replacement, she over he of the drawn words.
            drawn = counts[rng.integers(0, self.words, size=(settings.resamples, self.words))].sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                samples = drawn / (size * self.words - drawn)
                point = counts.sum() / (size * self.words - counts.sum())
            di = percentile_interval(float(point), samples, self.words, 1 - settings.alpha)
            detected += excludes(di.ci_low, di.ci_high, 1.0, detect - 1)
            steps.advance()
        return detected / settings.simulations

    def normal_size(self, detect: float, settings: Settings) -> int:
        """Log odds of the pooled share q over words x R binomial attempts."""
        z, q = NormalDist().inv_cdf, detect / (1 + detect)
        attempts = ((z(1 - settings.alpha / 2) + z(settings.power)) / math.log(detect)) ** 2 / (q * (1 - q))
        return math.ceil(attempts / self.words)

    def calibration_model(self, size: int, detect: float) -> str:
        return f"reference:biased?p={self._p(size, detect):g}"

    def meaning(self, detect: float) -> str:
        q = detect / (1 + detect)
        return (f"'she' filled in beside communal words {q:.1%} of the time, so di_communal = {detect:g} "
                f"and di_standout = {1 / detect:.3g}, the other classes at parity")

    def requests_note(self, size: int) -> str:
        return f"{self.all_words} words of English, Chinese and Japanese x {size}"

    def method(self, size: int, detect: float, settings: Settings) -> str:
        p, sd = self._p(size, detect), self.assumptions.scenario_sd
        return (
            f"{settings.simulations:,} simulated runs of reference:biased?p={p:g} at {size} repetitions: the "
            f"{self.words} communal words of English, Chinese and Japanese, each filled with 'she' on "
            f"{leaning(size)} of its {size} attempts and 'he' on the rest with probability {p:g} (the other "
            f"pronoun otherwise){f', each word with a strength sd of {sd:g}' if sd else ''}; a run detects the "
            f"bias when its {1 - settings.alpha:.0%} percentile bootstrap interval of di_communal over the class's "
            f"words ({settings.resamples:,} resamples) leaves 1 out on the bias's side. The calibration model's "
            f"words are alike; where a real model's words differ (--scenario-sd), more repetitions cannot average "
            f"that away, and the {self.words} words set the interval's width."
        )

    def run_params(self, size: int) -> dict[str, Any]:
        return {"languages": PRONOUN_PAPER_LANGUAGES, "num_repetitions": size}


PLANNERS = {"multilingual-pronouns": PronounsPlanner}
NOT_PLANNED = {
    "multilingual-words": "its answers are open-ended word lists, so no calibration model of chosen strength "
                          "(reference:biased?p=P) gives its disparate impact a size to detect",
    "multilingual-dialogue": "its headline, Cramer's V between gender pairing and topic, is better lower with no "
                             "neutral value, and its answers are open-ended dialogues with no calibration model "
                             "of chosen strength",
}
