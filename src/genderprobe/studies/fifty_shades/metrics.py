"""Agreement of a judge's run scores with the human scores, the paper's way and ours.

Section 6.1.1 of Hada et al. (2023) scores each of the 5 runs separately and
reports "the average performance values": Pearson r and MSE of every run,
averaged over the runs. That is the headline here. Averaging each sentence's
scores over the runs first and scoring that mean cancels part of the judge's
run-to-run noise and flatters every judge (a random judge's MSE drops from
0.145 to 0.064); it is kept as a named extra (``*_of_mean_score``).

Scores come as an (n sentences, runs) matrix with NaN where a run gave no
score; each run is scored on the sentences it scored. Intervals are a
bootstrap over sentences (a resampled sentence brings all its runs), done with
resampling weights times per-run sums, never a loop over resamples.
"""

from __future__ import annotations

import numpy as np

from genderprobe.analysis.stats import CONFIDENCE, Estimate, percentile_interval
from genderprobe.contract import ReaderComparison

# Elements of the (resamples x sentences) weight matrix held at once.
_MAX_BLOCK = 4_000_000


def _shifted(human: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Detected mask and both sides shifted by a value of their own, zero where undetected.

    r is shift-invariant; shifting a run by its first detected score makes a
    constant run exactly zero, so its variance is exactly 0 (r undefined), not
    a rounding error that would pass for a correlation.
    """
    detected = ~np.isnan(scores)
    first = np.where(detected.any(axis=0), scores[detected.argmax(axis=0), np.arange(scores.shape[1])], 0.0)
    m = np.where(detected, scores - first, 0.0)
    h = np.where(detected, (human - human[0])[:, None], 0.0)
    return detected.astype(np.float64), h, m


def _pearson_from_weights(w: np.ndarray, human: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """(B, runs) Pearson r of each run under sentence weights w (B, n); NaN where undefined."""
    d, h, m = _shifted(human, scores)
    n = w @ d
    with np.errstate(invalid="ignore", divide="ignore"):
        mh, mm = (w @ h) / n, (w @ m) / n
        cov = (w @ (h * m)) / n - mh * mm
        var_h = (w @ (h * h)) / n - mh * mh
        var_m = (w @ (m * m)) / n - mm * mm
        r = cov / np.sqrt(var_h * var_m)
    return np.where((var_h > 0) & (var_m > 0) & (n >= 3), r, np.nan)


def _mean_error_from_weights(w: np.ndarray, human: np.ndarray, scores: np.ndarray, power: int) -> np.ndarray:
    """(B, runs) mean of (score - human) ** power over each run's scored sentences."""
    detected = ~np.isnan(scores)
    err = np.where(detected, scores - human[:, None], 0.0) ** power
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ err) / (w @ detected.astype(np.float64))


def per_run_pearson(human: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Each run's Pearson r (NaN where a run's scores or humans are constant)."""
    return _pearson_from_weights(np.ones((1, human.size)), human, scores)[0]


def per_run_mse(human: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Each run's MSE (NaN for a run that scored nothing)."""
    return _mean_error_from_weights(np.ones((1, human.size)), human, scores, 2)[0]


def _bootstrap_runs_mean(statistic, human, scores, n_resamples: int, seed: int,
                         confidence: float = CONFIDENCE) -> Estimate:
    """The mean over runs of ``statistic`` (weights -> (B, runs)), bootstrapped over sentences.

    Undefined (None) when any run's value is; a resample where a run's value is
    undefined has no mean and is left out of the interval. The estimate's n is
    the sentences it rests on, those at least one run scored (not those asked):
    three scored sentences give no evidence, whatever their interval says.
    """
    n = int(human.size)
    scored = sentences_scored(scores)
    if n == 0:
        return Estimate(None, None, None, 0)
    point = float(statistic(np.ones((1, n)), human, scores)[0].mean())
    if np.isnan(point):
        return Estimate(None, None, None, scored)
    rng = np.random.default_rng(seed)
    samples = np.empty(n_resamples)
    block = max(1, _MAX_BLOCK // n)
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        picks = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
        w = np.bincount(picks.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)
        samples[start : start + size] = statistic(w, human, scores).mean(axis=1)
    return percentile_interval(point, samples, scored, confidence)


def runs_mean_pearson(human: np.ndarray, scores: np.ndarray, *, n_resamples: int, seed: int) -> Estimate:
    """The paper's r: each run's Pearson r, averaged over runs."""
    return _bootstrap_runs_mean(_pearson_from_weights, human, scores, n_resamples, seed)


def runs_mean_mse(human: np.ndarray, scores: np.ndarray, *, n_resamples: int, seed: int) -> Estimate:
    """The paper's MSE: each run's mean squared error, averaged over runs."""
    return _bootstrap_runs_mean(
        lambda w, h, m: _mean_error_from_weights(w, h, m, 2), human, scores, n_resamples, seed
    )


def runs_mean_error(human: np.ndarray, scores: np.ndarray, *, n_resamples: int, seed: int) -> Estimate:
    """Each run's mean signed error (score - human), averaged over runs."""
    return _bootstrap_runs_mean(
        lambda w, h, m: _mean_error_from_weights(w, h, m, 1), human, scores, n_resamples, seed
    )


def largest_run_p_value(human: np.ndarray, scores: np.ndarray) -> float | None:
    """The largest two-sided p-value of the runs' r: every run's r is at least this significant."""
    # Imported here: scipy.stats costs most of a second, and every command imports this module.
    from scipy import stats as sps

    values = []
    for run in range(scores.shape[1]):
        keep = ~np.isnan(scores[:, run])
        h, m = human[keep], scores[keep, run]
        if h.size < 3 or np.ptp(h) == 0 or np.ptp(m) == 0:
            return None
        values.append(float(sps.pearsonr(h, m).pvalue))
    return max(values) if values else None


def sentences_scored(scores: np.ndarray) -> int:
    """Sentences that at least one run scored."""
    return int((~np.isnan(scores)).any(axis=1).sum())


FAITHFUL_READER, CAREFUL_READER = "first-line", "score-line"


def reader_comparison(human: np.ndarray, by_reader: dict[str, np.ndarray], used: str,
                      headline: dict[str, Estimate], *, n_resamples: int, seed: int) -> ReaderComparison:
    """The same answers read by the authors' rule (first-line) and the careful reader (score-line).

    ``by_reader``: reader -> (sentences, runs) scores; ``headline``: the run's own pearson_r
    and mse (those of ``used``), reused rather than computed again. An answer counts
    when either reader read a score from it, and disagrees when the two read
    different scores or only one read any.
    """
    faithful, careful = by_reader[FAITHFUL_READER], by_reader[CAREFUL_READER]
    read = ~np.isnan(faithful) | ~np.isnan(careful)
    disagree = read & (faithful != careful)  # NaN against a score is unequal too
    boot = dict(n_resamples=n_resamples, seed=seed)
    headlines: dict[str, dict[str, Estimate]] = {"pearson_r": {}, "mse": {}}
    for reader, scores in by_reader.items():
        mine = reader == used
        headlines["pearson_r"][reader] = headline["pearson_r"] if mine else runs_mean_pearson(human, scores, **boot)
        headlines["mse"][reader] = headline["mse"] if mine else runs_mean_mse(human, scores, **boot)
    return ReaderComparison(faithful=FAITHFUL_READER, careful=CAREFUL_READER, used=used,
                            answers=int(read.sum()), disagree=int(disagree.sum()), headlines=headlines)
