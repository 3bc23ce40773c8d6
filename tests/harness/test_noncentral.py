"""The unified (Feldman-Cousins) interval of a chi-square noncentrality: 95% at 0 and away from it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2, ncx2

from genderprobe.analysis.noncentral import unified_interval


@pytest.mark.parametrize("noncentrality", [0.0, 3.0, 15.0, 60.0])
def test_the_unified_interval_covers_95_percent_at_the_edge_and_inside(noncentrality):
    rng = np.random.default_rng(7)
    draws = (ncx2.rvs(12, noncentrality, size=2000, random_state=rng) if noncentrality
             else chi2.rvs(12, size=2000, random_state=rng))
    intervals = [unified_interval(float(x), 12) for x in draws]
    # The grid's step in the noncentrality near the truth, as tolerance.
    covered = np.mean([lo <= noncentrality <= hi * 1.01 + 0.05 for lo, hi in intervals])
    assert 0.935 <= covered <= 0.965, covered


def test_at_independence_it_is_one_sided_and_the_central_inversion_was_not():
    # The statistic at chi-square's 95% point: the unified interval just reaches 0; the 2.5%/97.5%
    # inversion reaches 0 up to the 97.5% point, so it covered 0 at least 97.5% of the time.
    low, high = unified_interval(float(chi2.ppf(0.94, 12)), 12)
    assert low == 0.0 and high > 0
    low, _ = unified_interval(float(chi2.ppf(0.965, 12)), 12)
    assert low > 0.0
