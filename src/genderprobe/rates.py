"""Does a rate (refusals, lost answers) differ between groups (genders, pairings)? A test on a group x (yes, no) table.

Pearson's chi-square test when every expected count is at least 5; otherwise
the exact conditional test (Freeman-Halton: the probability, with both
margins fixed, of every table no more likely than the one observed), since
refusals are often rare and the chi-square approximation then fails.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_MIN_EXPECTED = 5.0
_MAX_TABLES = 4_000_000  # tables enumerated by the exact test; beyond, counts are large enough for chi-square


def _log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln  # here: scipy is slow to import, and --help needs none of it

    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def _exact_p(events: np.ndarray, totals: np.ndarray) -> float | None:
    """Freeman-Halton p-value for a k x 2 table; None when too many tables to enumerate."""
    total_events, grand = int(events.sum()), int(totals.sum())
    if total_events > grand - total_events:  # count the rarer outcome: fewer tables, same test
        events, total_events = totals - events, grand - total_events
    head = [np.arange(min(int(n), total_events) + 1) for n in totals[:-1]]
    if np.prod([len(h) for h in head], dtype=float) > _MAX_TABLES:
        return None
    grid = np.stack([g.ravel() for g in np.meshgrid(*head, indexing="ij")], axis=1)
    last = total_events - grid.sum(1)
    ok = (last >= 0) & (last <= totals[-1])
    tables = np.column_stack([grid[ok], last[ok]])
    log_norm = _log_choose(np.array(grand), np.array(total_events))
    log_p = _log_choose(totals, tables).sum(1) - log_norm
    observed = _log_choose(totals, events).sum() - log_norm
    # A small tolerance so tables exactly as likely as the observed one count, despite rounding.
    return float(min(1.0, np.exp(log_p[log_p <= observed + 1e-7]).sum()))


def rate_difference_test(events: np.ndarray, totals: np.ndarray, labels: list[str]) -> dict[str, Any]:
    """Test whether the share of events differs between groups (rows with no trials are left out)."""
    events, totals = np.asarray(events, dtype=np.int64), np.asarray(totals, dtype=np.int64)
    keep = totals > 0
    events, totals = events[keep], totals[keep]
    base = {"groups": [lab for lab, k in zip(labels, keep) if k], "events": int(events.sum()),
            "n": int(totals.sum()), "statistic": None, "dof": 0, "p_value": None, "method": None}
    if len(totals) < 2 or base["events"] in (0, base["n"]):
        return base  # one group, or nobody (or everybody) had the event: nothing differs
    table = np.column_stack([events, totals - events])
    from scipy.stats import chi2_contingency

    chi = chi2_contingency(table, correction=False)
    base.update(statistic=float(chi.statistic), dof=int(chi.dof))
    if (chi.expected_freq >= _MIN_EXPECTED).all():
        return {**base, "p_value": float(chi.pvalue), "method": "chi-square"}
    exact = _exact_p(events, totals)
    if exact is None:
        return {**base, "p_value": float(chi.pvalue), "method": "chi-square (small expected counts)"}
    return {**base, "p_value": exact, "method": "exact (Freeman-Halton)"}
