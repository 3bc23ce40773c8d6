"""Holm's step-down correction of a family of p-values."""

import pytest

from genderprobe.analysis.stats import holm


def test_holm_on_a_worked_example():
    # Sorted 0.01, 0.02, 0.03, 0.04 times 4, 3, 2, 1 -> 0.04, 0.06, 0.06, 0.06 (kept monotone).
    assert holm([0.04, 0.01, 0.03, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])


def test_holm_caps_at_one_and_keeps_order_monotone():
    adjusted = holm([0.5, 0.001, 0.6])
    assert adjusted == pytest.approx([1.0, 0.003, 1.0])
    assert holm([0.2]) == [0.2]


def test_undefined_tests_are_left_out_of_the_family():
    # Two defined tests: the family has two members, not three.
    assert holm([0.01, None, 0.04]) == pytest.approx([0.02, None, 0.04])
    assert holm([None, None]) == [None, None]
    assert holm([]) == []


def test_ties_get_the_same_adjusted_value():
    assert holm([0.01, 0.01, 0.5]) == pytest.approx([0.03, 0.03, 0.5])
