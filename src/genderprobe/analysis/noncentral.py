"""A confidence interval for the noncentrality of a chi-square statistic that holds at 0 too.

Inverting the noncentral chi-square at its 2.5% and 97.5% points (Smithson 2003)
covers 95% inside the parameter space but 97.5% and more at its edge, 0
(independence), where the lower end cannot go below 0. The unified interval of
Feldman & Cousins (1998) orders the statistic's values by likelihood ratio
against the best noncentrality allowed (0 or more), so each noncentrality's
acceptance region holds 95% and the interval moves from one-sided to two-sided
by itself: 95% at 0 and 95% away from it.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

X_BINS = 800  # the statistic's grid (bins of probability mass)
LAMBDA_POINTS = 300  # noncentralities tried, evenly spaced in their square root (an effect size's scale)


def unified_interval(statistic: float, dof: int, confidence: float = 0.95) -> tuple[float, float]:
    """(low, high) noncentralities whose unified acceptance region holds ``statistic``."""
    # Far enough that the statistic lies below every acceptance region beyond it; rounded up to a
    # power of two so that one table of acceptance regions serves many statistics.
    needed = max(statistic - dof, 0.0) + 8 * math.sqrt(2 * (dof + 2 * (statistic + 10))) + 10
    top = 2.0 ** math.ceil(math.log2(max(needed, 16.0)))
    edges, lambdas, accepted = _acceptance(dof, top, confidence)
    here = min(int(np.searchsorted(edges, statistic, side="right")) - 1, X_BINS - 1)
    holding = lambdas[accepted[here]]
    if holding.size == 0:  # a value no region on the grid takes: too far out to happen (p < 1e-7)
        return float(lambdas[-1]), float(lambdas[-1])
    return float(holding.min()), float(holding.max())


@lru_cache(maxsize=64)
def _acceptance(dof: int, top: float, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The statistic's bin edges, the noncentralities tried, and which bins each one's region accepts."""
    from scipy.stats import chi2, ncx2

    lambdas = top * np.linspace(0.0, 1.0, LAMBDA_POINTS) ** 2
    edges = np.linspace(0.0, float(ncx2.ppf(1 - 1e-7, dof, top)), X_BINS + 1)
    mids = (edges[:-1] + edges[1:]) / 2
    nc = lambdas[1:][None, :]
    cdf = np.hstack([chi2.cdf(edges, dof)[:, None], ncx2.cdf(edges[:, None], dof, nc)])
    mass = np.diff(cdf, axis=0)  # bins x noncentralities
    density = np.hstack([chi2.pdf(mids, dof)[:, None], ncx2.pdf(mids[:, None], dof, nc)])
    # Each value's likelihood ratio against the best noncentrality for it (0 or more, on the grid).
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.nan_to_num(density / density.max(axis=1, keepdims=True))
    order = np.argsort(-ratio, axis=0, kind="stable")
    ranked = np.take_along_axis(mass, order, axis=0)
    # A bin is accepted while the mass of the bins ranked before it is short of the confidence.
    before = np.cumsum(ranked, axis=0) - ranked
    accepted = np.zeros_like(mass, dtype=bool)
    np.put_along_axis(accepted, order, before < confidence, axis=0)
    return edges, lambdas, accepted
