"""Disparate impact: the ratio of two groups' rates, with stratified bootstrap intervals.

Zhao et al. 2024, Eq. 2: DI(w) = (f_w / N_f) / (m_w / N_m), the frequency of
word w per female-context prompt over its frequency per male-context prompt.
Prompts are resampled with replacement within their stratum (language x
gender), so every resample keeps the design's group sizes. Vectorised: one
matrix of multinomial resampling weights (resamples x prompts) times the
prompt x word count matrix gives every word's resampled rates at once.
"""

from __future__ import annotations

import numpy as np

from genderprobe.analysis.randomization import swap_draws, with_randomization_test
from genderprobe.analysis.stats import CONFIDENCE, Estimate

# Cap on resamples x prompts weights held at once.
_MAX_BLOCK = 4_000_000


def stratified_weights(strata: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(n_resamples, n) counts: each stratum's items drawn with replacement, stratum size kept."""
    strata = np.asarray(strata)
    weights = np.zeros((n_resamples, strata.size))
    for s in np.unique(strata):
        cols = np.flatnonzero(strata == s)
        weights[:, cols] = rng.multinomial(cols.size, np.full(cols.size, 1 / cols.size), size=n_resamples)
    return weights


def rate_ratio(
    counts: np.ndarray,
    numerator: np.ndarray,
    strata: np.ndarray,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> list[Estimate]:
    """Per column of ``counts`` (prompts x k): rate among numerator prompts / rate among the others.

    numerator: bool per prompt (female context). strata: an integer per prompt
    within which prompts are resampled; each stratum should lie inside one
    group. A ratio whose denominator rate is 0 is undefined (value None); n is
    the number of prompts.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim == 1:
        counts = counts[:, None]
    num = np.asarray(numerator, dtype=bool)
    n, k = counts.shape
    if n == 0 or num.all() or not num.any():
        return [Estimate(None, None, None, n) for _ in range(k)]
    point = _ratio(np.ones((1, n)), counts, num)[0]
    rng = np.random.default_rng(seed)
    samples = np.empty((n_resamples, k))
    block = max(1, _MAX_BLOCK // n)
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        samples[start : start + size] = _ratio(stratified_weights(strata, size, rng), counts, num)
    alpha = (1 - confidence) / 2
    out = []
    for j in range(k):
        value = point[j]
        if not np.isfinite(value):
            out.append(Estimate(None, None, None, n))
            continue
        col = samples[:, j]
        col = col[~np.isnan(col)]
        # No interpolation: an infinite resample (denominator 0) stays an order statistic.
        lo, hi = np.quantile(col, [alpha, 1 - alpha], method="inverted_cdf") if col.size else (value, value)
        out.append(Estimate(float(value), float(min(lo, value)), float(max(hi, value)), n))
    return out


def _ratio(weights: np.ndarray, counts: np.ndarray, num: np.ndarray) -> np.ndarray:
    """(resamples, k) ratios of weighted rates, numerator group over the other."""
    wf, wm = weights[:, num], weights[:, ~num]
    with np.errstate(invalid="ignore", divide="ignore"):
        rate_f = (wf @ counts[num]) / wf.sum(axis=1, keepdims=True)
        rate_m = (wm @ counts[~num]) / wm.sum(axis=1, keepdims=True)
        return rate_f / rate_m


def swap_test(counts: np.ndarray, numerator: np.ndarray, pairs: np.ndarray, estimates: list[Estimate], *,
              n_resamples: int = 1000, seed: int = 0) -> list[Estimate]:
    """The per-word estimates, each with a randomization test of "the ratio is 1"
    (genderprobe.analysis.randomization): ``pairs`` numbers the prompts' gender-free part, so a
    pair is one prompt asked as a woman and as a man, every repetition of both."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim == 1:
        counts = counts[:, None]
    num = np.asarray(numerator, dtype=bool)
    if num.all() or not num.any():
        return estimates
    _, pair = np.unique(np.asarray(pairs), return_inverse=True)
    n_pairs = int(pair.max()) + 1
    sums = np.zeros((2, n_pairs, counts.shape[1]))
    np.add.at(sums[0], pair[num], counts[num])
    np.add.at(sums[1], pair[~num], counts[~num])
    observed, draws = swap_draws(sums[0], sums[1], np.bincount(pair[num], minlength=n_pairs),
                                 np.bincount(pair[~num], minlength=n_pairs), n_resamples=n_resamples, seed=seed)
    return with_randomization_test(estimates, observed, draws)
