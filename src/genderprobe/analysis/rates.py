"""Does a rate (refusals, lost answers) differ between groups (genders, pairings)? A test on a group x (yes, no) table.

Pearson's chi-square test when every expected count is at least 5; otherwise
the exact conditional test (Freeman-Halton: the probability, with both
margins fixed, of every table no more likely than the one observed), since
refusals are often rare and the chi-square approximation then fails.
"""

from __future__ import annotations

import math
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


def rate_difference_test(events: np.ndarray, totals: np.ndarray, labels: list[str], *,
                         design_effect: float = 1.0) -> dict[str, Any]:
    """Test whether the share of events differs between groups (rows with no trials are left out).

    ``design_effect``: where attempts come in clusters (repetitions of one prompt) that each
    sit in one group, the mean design effect of the groups' shares; the chi-square statistic
    is divided by it (Rao & Scott's first-order correction) and the exact test reads the
    counts divided by it, so a cluster is not counted as many independent attempts.
    """
    if design_effect > 1.0:
        out = rate_difference_test(np.round(np.asarray(events) / design_effect),
                                   np.round(np.asarray(totals) / design_effect), labels)
        events, totals = np.asarray(events, dtype=np.int64), np.asarray(totals, dtype=np.int64)
        out.update(events=int(events[totals > 0].sum()), n=int(totals[totals > 0].sum()),
                   design_effect=float(design_effect))
        if out["method"]:
            out["method"] += f", counts divided by the design effect {design_effect:.2f} (Rao-Scott)"
        return out
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


# --- Matched designs: each item asks every group -------------------------------------------
#
# RelationshipLevy asks each item with the man and with the woman as option (a); GenMO
# each pair with the man's and the woman's story; DeMET each unit in all nine pairings.
# A lost answer then depends on the item as much as on the group, and a test that counts
# attempts as independent (above) reads an item that is hard in both groups as evidence
# twice. The tests below condition on each item: under "the group makes no difference",
# an item's lost answers fall on its attempts as on any of them (a permutation within
# items). With one attempt per group and two groups this is McNemar's exact test.

# Beyond this many values of the statistic the exact distribution gives way to its
# normal approximation (the Cochran-Mantel-Haenszel test with items as strata).
_MAX_SUPPORT = 200_000
_MONTE_CARLO = 9_999
_SEED = 0


def matched_rate_test(attempts: np.ndarray, lost: np.ndarray, weights: np.ndarray, labels: list[str]) -> dict[str, Any]:
    """Whether the share lost differs between groups when every item was asked in several of them.

    attempts, lost: one row per distinct item profile (items x groups), weights: how many
    items have it. Two groups: the exact conditional test (each item's lost count in the
    first group is hypergeometric given its total; their sum's distribution by
    convolution), or its Cochran-Mantel-Haenszel approximation for very large counts.
    More groups: a Monte Carlo permutation test within items of Pearson's statistic on
    the group totals.
    """
    attempts, lost = np.asarray(attempts, np.int64), np.asarray(lost, np.int64)
    weights = np.asarray(weights, np.int64)
    keep = attempts.sum(0) > 0
    attempts, lost, labels = attempts[:, keep], lost[:, keep], [g for g, k in zip(labels, keep) if k]
    events, n = int((lost.sum(1) * weights).sum()), int((attempts.sum(1) * weights).sum())
    base = {"groups": labels, "events": events, "n": n, "statistic": None, "dof": 0, "p_value": None,
            "method": None, "matched": True}
    # Informative items: asked in two groups or more, and lost some but not all of their attempts.
    total, a_total = lost.sum(1), attempts.sum(1)
    informative = ((attempts > 0).sum(1) >= 2) & (total > 0) & (total < a_total)
    base["informative_items"] = int(weights[informative].sum())
    if len(labels) < 2 or not informative.any():
        return base
    attempts, lost, weights = attempts[informative], lost[informative], weights[informative]
    if len(labels) == 2:
        return {**base, **_two_groups(attempts, lost, weights)}
    return {**base, **_monte_carlo(attempts, lost, weights)}


def _two_groups(attempts: np.ndarray, lost: np.ndarray, weights: np.ndarray) -> dict[str, Any]:
    from scipy.signal import fftconvolve
    from scipy.stats import hypergeom

    a1, a2, total = attempts[:, 0], attempts[:, 1], lost.sum(1)
    observed = int((lost[:, 0] * weights).sum())
    mean = (weights * total * a1 / (a1 + a2)).sum()
    var = (weights * total * a1 * a2 * (a1 + a2 - total) / ((a1 + a2) ** 2 * (a1 + a2 - 1))).sum()
    statistic = float((observed - mean) ** 2 / var) if var > 0 else 0.0
    low = np.maximum(0, total - a2)
    support = int((weights * (np.minimum(a1, total) - low)).sum())
    if support > _MAX_SUPPORT:
        return {"statistic": statistic, "dof": 1, "p_value": float(math.erfc(math.sqrt(statistic / 2))),
                "method": "Cochran-Mantel-Haenszel, items as strata"}
    pmf, offset = np.ones(1), 0
    for x1, x2, t, w in zip(a1.tolist(), a2.tolist(), total.tolist(), weights.tolist()):
        lo = max(0, t - x2)
        row = hypergeom.pmf(np.arange(lo, min(x1, t) + 1), x1 + x2, x1, t)
        pmf, offset = fftconvolve(pmf, _power(row, w)), offset + w * lo
        pmf = np.clip(pmf, 0.0, None)
    at = pmf[observed - offset]
    p = float(min(1.0, pmf[pmf <= at * (1 + 1e-7)].sum()))
    one = bool((attempts == 1).all())
    return {"statistic": statistic, "dof": 1, "p_value": p,
            "method": "exact conditional, items as strata" + (" (McNemar's exact test)" if one else "")}


def _power(pmf: np.ndarray, times: int) -> np.ndarray:
    """The distribution of the sum of ``times`` independent draws of ``pmf`` (by repeated squaring)."""
    from scipy.signal import fftconvolve

    out, base = np.ones(1), pmf
    while times:
        if times & 1:
            out = np.clip(fftconvolve(out, base), 0.0, None)
        times >>= 1
        if times:
            base = np.clip(fftconvolve(base, base), 0.0, None)
    return out


def _monte_carlo(attempts: np.ndarray, lost: np.ndarray, weights: np.ndarray) -> dict[str, Any]:
    """Pearson's statistic on the group totals against its distribution when each item's lost answers
    fall at random on its attempts (sequential hypergeometric draws, group by group)."""
    attempts, lost = np.repeat(attempts, weights, axis=0), np.repeat(lost, weights, axis=0)
    total, a_total = lost.sum(1), attempts.sum(1)
    expected = (total[:, None] * attempts / a_total[:, None]).sum(0)

    def pearson(observed: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nansum(np.where(expected > 0, (observed - expected) ** 2 / expected, 0.0), axis=-1)

    rng = np.random.default_rng(_SEED)
    draws = max(999, min(_MONTE_CARLO, 50_000_000 // max(1, attempts.size)))
    left_lost = np.broadcast_to(total, (draws, total.size)).copy()
    left_attempts = np.broadcast_to(a_total, (draws, total.size)).copy()
    counts = np.zeros((draws, attempts.shape[1]))
    for g in range(attempts.shape[1]):
        good = np.broadcast_to(attempts[:, g], left_lost.shape)
        x = left_lost if g == attempts.shape[1] - 1 else rng.hypergeometric(good, left_attempts - good, left_lost)
        counts[:, g] = x.sum(1)
        left_lost, left_attempts = left_lost - x, left_attempts - good
    statistic = float(pearson(lost.sum(0)))
    p = (1 + int((pearson(counts) >= statistic - 1e-9).sum())) / (draws + 1)
    return {"statistic": statistic, "dof": attempts.shape[1] - 1, "p_value": float(p),
            "method": f"Monte Carlo permutation within items ({draws:,} draws)"}
