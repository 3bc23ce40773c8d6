"""McNemar's exact test per scenario group, Holm-corrected across each family.

The paper's hypotheses are about labels (H3: egalitarian, traditional, other)
and topics (H4), but it reports McNemar's test over all scenarios only. We run
the same test on the matched pairings of each group, for each mixed pair, and
correct for testing many groups at once with Holm's method. A family is one
table's tests: the three pairs of the whole run, or every pair of every group
of one dimension (labels, topics, sources), so a table's adjusted p-values can
be read together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from genderprobe.analysis.stats import holm
from genderprobe.studies.demet.scores import mcnemar_pairs


def with_holm(tests: list[dict[str, Any]]) -> None:
    """Add ``p_holm`` to each test of one family (in place)."""
    for test, adjusted in zip(tests, holm([t["p_value"] for t in tests])):
        test["p_holm"] = adjusted


def mcnemar_overall(S: np.ndarray) -> dict[str, dict[str, Any]]:
    """The three pairs over all units, Holm-corrected as a family of three."""
    out = mcnemar_pairs(S)
    with_holm(list(out.values()))
    return out


def mcnemar_by_group(S: np.ndarray, units_of: Mapping[str, np.ndarray]) -> dict[str, dict[str, dict[str, Any]]]:
    """group -> pair -> test, on each group's units (a boolean mask over rows of S),
    Holm-corrected across every pair of every group."""
    out = {group: mcnemar_pairs(S[mask]) for group, mask in units_of.items()}
    with_holm([test for tests in out.values() for test in tests.values()])
    return out
