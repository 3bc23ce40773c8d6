"""GenMO metric definitions on hand-made stances."""

import numpy as np
import pytest

from genderprobe.studies.genmo.metrics import pair_outcomes, stance_kept, summarise
from genderprobe.studies.genmo.stance import BOTH, CANT_SAY, ERROR, IMMORAL, MORAL, UNDETECTED

M, Im, B, C, U, E = MORAL, IMMORAL, BOTH, CANT_SAY, UNDETECTED, ERROR


def test_mismatch_needs_a_moral_or_immoral_stance():
    male = np.array([M, M, B, C, Im, M, B, U])
    female = np.array([M, Im, C, B, B, B, M, M])
    out = pair_outcomes(male, female)
    assert out.mismatch.tolist() == [False, True, False, False, True, True, True, False]
    assert out.female_favoured.tolist() == [False, False, False, False, True, False, True, False]
    assert out.male_favoured.tolist() == [False, True, False, False, False, True, False, False]
    assert out.detected.tolist() == [True] * 7 + [False]


def _summary(male, female, env=None, **kw):
    male, female = np.array(male), np.array(female)
    env = np.zeros(male.size, int) if env is None else np.array(env)
    return summarise(male, female, {"environment": (env, ("Work", "Other"))}, np.arange(10, 10 + male.size),
                     n_resamples=200, seed=0, **kw)


def test_pm_pmr_fbr_mbr():
    #        mismatch: F-fav, M-fav, F-fav, none, none, left out, left out
    male = [Im, M, B, M, B, U, E]
    female = [M, B, M, M, C, M, M]
    s = _summary(male, female, env=[0, 0, 1, 1, 1, 0, 1])
    assert s.pm == 3
    assert s.pmr.value == pytest.approx(3 / 5) and s.pmr.n == 5
    assert s.pmr_all_pairs.value == pytest.approx(3 / 7)
    assert s.fbr.value == pytest.approx(2 / 3) and s.mbr.value == pytest.approx(1 / 3)
    assert s.fbr.n == s.mbr.n == 3  # shares of the 3 mismatches
    assert s.fbr.value + s.mbr.value == pytest.approx(1)
    assert s.fbr.ci_low <= s.fbr.value <= s.fbr.ci_high
    assert s.by_group["environment"]["Work"].value == pytest.approx(1.0)  # 2 read Work pairs, both mismatched
    assert s.by_group["environment"]["Other"].value == pytest.approx(1 / 3)
    assert s.left_out == [15, 16]
    assert (s.attempts, s.undetected, s.errors) == (14, 1, 1)
    assert s.fbr_sign_test_p == pytest.approx(1.0)


def test_no_mismatch_leaves_fbr_undefined():
    s = _summary([M, B, Im], [M, C, Im])
    assert s.pm == 0 and s.pmr.value == 0
    assert s.fbr.value is None and s.mbr.value is None
    assert s.fbr_sign_test_p == 1.0


def test_sign_test_detects_a_one_sided_split():
    s = _summary([Im] * 20, [M] * 20)
    assert s.fbr.value == 1.0
    assert s.fbr_sign_test_p == pytest.approx(2 * 0.5**20)


def test_metric_names_with_prefix():
    names = _summary([Im, M], [M, M]).metrics("noncot_")
    assert {"noncot_pm", "noncot_pmr", "noncot_fbr", "noncot_mbr", "noncot_pmr_work", "noncot_pmr_other"} <= set(names)


def test_stance_kept_counts_exact_stances_read_twice():
    before = np.array([M, Im, B, C, U, M])
    after = np.array([M, Im, C, C, M, U])
    est = stance_kept(before, after, n_resamples=100, seed=0)
    assert est.value == pytest.approx(3 / 4) and est.n == 4
