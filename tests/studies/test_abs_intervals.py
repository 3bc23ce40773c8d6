"""Every absolute-value metric prints an interval that reaches 0 for a fair coin (issue 44).

One run of each probe on reference:random: its absolute-value metric keeps the paper's value, its
printed interval reaches 0 where the percentile interval of its own draws does not (what was
printed before), the interval names its method, and GenderBench's mark is still read from
GenderBench's interval (the normal fit to the bootstrap draws), kept beside it as genderbench_ci.
benchmarks/abs_zero_coverage.py measures how often over 500 runs.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from genderprobe.analysis.stats import (
    ABS_CORNERS,
    FOLDED,
    JACKKNIFE_T,
    MAX_ABS_BOX,
    normal_fit_interval,
)
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.reading.emotion import EMOTIONS
from genderprobe.registry import get_probe


def _gap(metrics, pairs) -> float:
    return max(abs(metrics[a].value - metrics[b].value) for a, b in pairs)


def _three(*names):
    return list(combinations(names, 2))


ISEAR_PAIRS = [(f"{a}_{e}_rate", f"{b}_{e}_rate") for e in EMOTIONS for a, b in _three("male", "female", "non-binary")]

# probe: (parameters, metric, its method, the paper's value from the run's other metrics, whether GenderBench marks it)
CASES = {
    "relationship-levy": ({"sample_k": 1000}, "diff_abs_success_rate", FOLDED,
                          lambda m: abs(m["diff_success_rate"].value), True),
    "discrimination-tamkin": ({"sample_k": 60}, "max_diff", MAX_ABS_BOX,
                              lambda m: _gap(m, _three("female_success_rate", "male_success_rate",
                                                       "nonbinary_success_rate")), True),
    "diversity-med-qa": ({"sample_k": 60}, "diff_abs_success_rate", FOLDED,
                         lambda m: abs(m["diff_success_rate"].value), True),
    "dreaddit": ({"sample_k": 60}, "max_diff_stress_rate", MAX_ABS_BOX,
                 lambda m: _gap(m, _three("male_stress_rate", "female_stress_rate", "non-binary_stress_rate")), True),
    "isear": ({"sample_k": 200}, "max_diff", MAX_ABS_BOX, lambda m: _gap(m, ISEAR_PAIRS), True),
    # A whole HiringAn run of more items takes a minute (its regressions); 12 items and seed 1.
    "hiring-an": ({"sample_k": 12, "seed": 1}, "diff_abs_acceptance_rate", FOLDED,
                  lambda m: abs(m["diff_acceptance_rate"].value), True),
    "jobs-lum": ({"sample_k": 60}, "disparity", FOLDED, lambda m: abs(0.5 - m["masculine_rate"].value), False),
    "gest-creative": ({"sample_k": 200}, "disparity", FOLDED, lambda m: abs(0.5 - m["masculine_rate"].value), False),
    "inventories": ({"sample_k": 60}, "disparity", FOLDED, lambda m: abs(0.5 - m["masculine_rate"].value), True),
    "hiring-bloomberg": ({"sample_k": 60}, "disparity", FOLDED, lambda m: abs(0.5 - m["masculine_rate"].value), True),
    "demet": ({"per_type": 4}, "mixed_gender_bias", ABS_CORNERS,
              lambda m: np.mean([abs(m[b].value) for b in ("bias_w_n", "bias_n_m", "bias_w_m")]), False),
}
# Whose masculine_rate is a mean of group means, printed with the stratified jackknife's interval.
JACKKNIFED = ("gest-creative", "inventories", "hiring-bloomberg")


@pytest.mark.parametrize("probe", list(CASES))
def test_a_fair_coins_absolute_value_prints_an_interval_that_reaches_0(probe):
    params, name, method, paper_value, marked = CASES[probe]
    params = dict(params)
    config = RunConfig(keep_records=False, seed=params.pop("seed", 2), n_resamples=300)
    out = run_probe(probe, "reference:random", config=config, **params)
    metrics = out.result.metrics
    est = metrics[name]
    assert est.value == pytest.approx(paper_value(metrics), abs=1e-12)
    assert est.ci_low == 0.0 <= est.value <= est.ci_high
    assert est.ci_method == method
    if probe in JACKKNIFED:  # disparity = |0.5 - masculine_rate|: masculine_rate's interval folded at 0.5
        signed = metrics["masculine_rate"]
        assert signed.ci_method == JACKKNIFE_T and signed.ci_low <= 0.5 <= signed.ci_high
        assert est.ci_high == pytest.approx(max(0.5 - signed.ci_low, signed.ci_high - 0.5), abs=1e-15)
        assert (signed.genderbench_ci.low, signed.genderbench_ci.high) == pytest.approx(
            normal_fit_interval(signed.draws), abs=1e-15)
    # What was printed before: the percentile interval of the metric's own draws, above 0 but where the
    # draws are exactly 0 often (a few items, whose gaps take a handful of values).
    draws = est.draws[np.isfinite(est.draws)]
    assert np.quantile(draws, 0.025) > 0.0 or (draws == 0).mean() >= 0.025
    shown = est.to_json()
    assert shown["ci_method"] == method and "reaches 0" in shown["ci_how"]
    # The terminal's legend line says which interval it is.
    assert any(name == k or k.endswith("*") and name.startswith(k[:-1])
               for key in out.result.metric_notes for k in key.split(", "))
    if probe == "demet":  # not GenderBench's probe: no GenderBench interval, and the companion is the same
        assert est.genderbench_ci is None
        folded = metrics["mixed_gender_bias_folded"]
        assert (folded.ci_low, folded.ci_high) == (est.ci_low, est.ci_high)
        return
    gb = est.genderbench_ci
    assert gb.method == "normal_fit" and shown["genderbench_ci"]["low"] == gb.low
    if probe != "relationship-levy":  # GenderBench's bootstrap: the metric's draws are the ones its mark reads
        assert (gb.low, gb.high) == pytest.approx(normal_fit_interval(est.draws), abs=1e-15)
        assert out.result.extra["genderbench"]["intervals"][name] == pytest.approx([gb.low, gb.high], abs=1e-15)
    if marked:  # the mark: GenderBench's rule on GenderBench's interval, as before
        mark = out.result.marks[name]
        assert (mark["mark_interval"]["low"], mark["mark_interval"]["high"]) == (gb.low, gb.high)
        definition = next(d for d in _marks(probe) if d.metric == name)
        assert mark["mark"] == definition.letter(gb.low, gb.high)


def _marks(probe: str):
    return __import__(get_probe(probe).__module__, fromlist=["MARKS"]).MARKS
