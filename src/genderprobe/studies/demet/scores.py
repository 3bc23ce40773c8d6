"""DeMET scores (Levy et al. 2024, Section 4.2), their bootstrap intervals and McNemar tests.

Answers are laid out as a matrix ``S`` with one row per *unit* (a scenario and a
slot 0..per_type-1) and one column per relationship type, holding -1 when NAME1
was chosen, +1 when NAME2 was chosen and NaN when no option was named. The
slot-j prompts of W-M and M-W use the same two names in reverse order, so a row
holds matched pairs for McNemar's test.

Every score is a function of the nine column means s(A-B), so one bootstrap
serves them all: resampling units is a matrix of multinomial weights ``W``
(resamples x units), and the resampled column means are ``(W @ S0) / (W @ D)``
with ``S0`` the scores (NaN as 0) and ``D`` the answered indicator. Resampling
by scenario instead (all of a scenario's units together) uses weights drawn over
scenarios and spread to their units.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from genderprobe.analysis.stats import (
    ABS_CORNERS,
    ABS_RESAMPLES,
    Estimate,
    abs_combination_interval,
    mcnemar_exact,
    percentile_interval,
    sign_test,
    with_abs_interval,
)

# The nine relationship types A-B (A is NAME1), in the paper's order.
GROUPS = ("W", "M", "N")
GROUP_OF = {"W": "women", "M": "men", "N": "neutral"}
TYPES = ("W-W", "M-M", "N-N", "W-M", "M-W", "W-N", "N-W", "N-M", "M-N")
SAME_GROUP = ("W-W", "M-M", "N-N")
# Mixed pairs (A, B) of Eq. 1; bias(A, B) = s(B-A) - s(A-B), positive favours A.
# In the column order we read in the paper's tables (their headers were lost):
# W-M is the last column, the largest in 198 of the 250 four-number rows, as the
# paper's finding W > N > M implies; docs/demet.md says how the rest was read.
PAIRS = (("W", "N"), ("N", "M"), ("W", "M"))
PAIR_NAMES = tuple(f"bias({a},{b})" for a, b in PAIRS)
# Eq. 2: the mean of the absolute pair biases (246 of the paper's 250 rows fit it,
# and every row with a negative pair bias fits only it). The signed mean is ours.
OVERALL = "mixed_gender_bias"
OVERALL_SIGNED = "mixed_gender_bias_signed"
# Eq. 2 with the interval it prints (docs/statistics.md, "Do the intervals cover?"), under the name it
# had while it was printed apart (before issue 44).
OVERALL_FOLDED = "mixed_gender_bias_folded"
# Cap on the resamples x units weight matrix held at once (elements).
_MAX_BLOCK = 2_000_000


def type_index(name: str) -> int:
    return TYPES.index(name)


def pair_columns(a: str, b: str) -> tuple[int, int]:
    """(column of A-B, column of B-A)."""
    return TYPES.index(f"{a}-{b}"), TYPES.index(f"{b}-{a}")


@dataclass(frozen=True)
class Scores:
    """Point estimates with intervals of every DeMET score over a set of units."""

    type_means: dict[str, Estimate]  # s(A-B)
    pair_bias: dict[str, Estimate]  # bias(A,B), Eq. 1
    overall_percentile: Estimate  # Eq. 2: mean of |bias(A,B)|, 0..2, with its percentile interval
    overall_signed: Estimate  # mean of bias(A,B), -2..2: beyond the paper
    same_group_mean: Estimate  # order (position) bias check: mean of s(W-W), s(M-M), s(N-N)
    # What the folded interval is drawn from: (S0, D, scenario_of_unit, n_resamples, seed, by_scenario).
    _inputs: tuple[Any, ...] = field(repr=False, compare=False)

    @cached_property
    def overall(self) -> Estimate:
        """Eq. 2 as every surface prints it: its value and draws, with :attr:`overall_folded`'s interval,
        which reaches 0 when the model is unbiased (the percentile one never does)."""
        return with_abs_interval(self.overall_percentile, self.overall_folded, ABS_CORNERS)

    @cached_property
    def overall_folded(self) -> Estimate:
        """Eq. 2's value with the interval of a mean of absolute values read at the least-favourable
        corner of a joint sign box (genderprobe.analysis.stats.abs_combination_interval): the percentile
        interval misses the truth (0% coverage for a model with no bias); this one holds it at least 95%
        of the time (95.0-97.6% in 10,000 simulated runs, docs/statistics.md). Its tail
        quantiles need more resamples than the others: a stream of their own, drawn when asked."""
        S0, D, scenario_of_unit, n_resamples, seed, by_scenario = self._inputs
        point = score_samples(S0.sum(0), D.sum(0))
        extra = score_samples(*_resampled(S0, D, scenario_of_unit, max(n_resamples, ABS_RESAMPLES),
                                          np.random.default_rng([seed, 31]), by_scenario))
        return abs_combination_interval([float(point[b]) for b in PAIR_NAMES],
                                        np.column_stack([extra[b] for b in PAIR_NAMES]), [1 / 3] * 3,
                                        self.overall_percentile.n or 0)


def score_samples(sums: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
    """Every score from per-type sums and answer counts (last axis: the nine types)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    out = {t: means[..., i] for i, t in enumerate(TYPES)}
    biases = []
    for (a, b), name in zip(PAIRS, PAIR_NAMES):
        ab, ba = pair_columns(a, b)
        out[name] = means[..., ba] - means[..., ab]
        biases.append(out[name])
    out[OVERALL] = np.mean(np.abs(biases), axis=0)
    out[OVERALL_SIGNED] = np.mean(biases, axis=0)
    out["same_group_mean"] = np.mean([means[..., type_index(t)] for t in SAME_GROUP], axis=0)
    return out


def compute_scores(
    S: np.ndarray,
    scenario_of_unit: np.ndarray,
    *,
    n_resamples: int,
    seed: int,
    by_scenario: bool = False,
) -> Scores:
    """Scores of the units in ``S`` with percentile bootstrap intervals."""
    answered = ~np.isnan(S)
    S0 = np.where(answered, S, 0.0)
    D = answered.astype(np.float64)
    point = score_samples(S0.sum(0), D.sum(0))
    moments = _pair_moments(S0, D, scenario_of_unit, by_scenario)
    # One bootstrap: the moments ride along with the sums (the same weights, so the same draws as without).
    sums, counts = _resampled(np.hstack([S0, moments]), D, scenario_of_unit, n_resamples,
                              np.random.default_rng(seed), by_scenario)
    samples = score_samples(sums[:, : S0.shape[1]], counts)
    point_se = _pair_se(S0.sum(0), D.sum(0), moments.sum(0))
    draws_se = _pair_se(sums[:, : S0.shape[1]], counts, sums[:, S0.shape[1]:])
    # Every Estimate's n is the number of answered prompts it rests on (the validity guards read it).
    n_type = D.sum(0).astype(int)

    def est(name: str, n: int) -> Estimate:
        return percentile_interval(float(point[name]), samples[name], n)

    type_means = {t: est(t, int(n_type[i])) for i, t in enumerate(TYPES)}
    pair_bias = {}
    for (a, b), name in zip(PAIRS, PAIR_NAMES):
        ab, ba = pair_columns(a, b)
        e = est(name, int(n_type[ab] + n_type[ba]))
        # Each draw with its own standard error, as bootstrap_ratio's: the family's tests studentize draw by
        # draw (bootstrap-t). Read through Student's t instead, with one se for every draw, a fair coin was
        # flagged in 6.2% of runs (issue 48).
        if e.draws is not None:
            e = replace(e, se=float(point_se[name]), draws_se=draws_se[name][~np.isnan(samples[name])])
        pair_bias[name] = e
    mixed = int(sum(n_type[type_index(t)] for t in TYPES if t not in SAME_GROUP))
    same = int(sum(n_type[type_index(t)] for t in SAME_GROUP))
    return Scores(type_means, pair_bias, est(OVERALL, mixed), est(OVERALL_SIGNED, mixed), est("same_group_mean", same),
                  (S0, D, scenario_of_unit, n_resamples, seed, by_scenario))


def _pair_moments(S0: np.ndarray, D: np.ndarray, scenario_of_unit: np.ndarray, by_scenario: bool) -> np.ndarray:
    """Per resampled unit, the products of each pair's two orders' sums and answer counts that a resample's
    standard error of bias(A,B) is read from (:func:`_pair_se`): ten columns a pair. Resampling by scenario,
    a scenario's products sit on its first unit (its other units hold 0), so weights spread to the units
    still weigh each scenario once."""
    if by_scenario:
        _, first, local = np.unique(scenario_of_unit, return_index=True, return_inverse=True)
        member = np.zeros((first.size, S0.shape[0]))
        member[local, np.arange(S0.shape[0])] = 1
        S0, D = member @ S0, member @ D  # each scenario's sums
    cols = []
    for a, b in PAIRS:
        ab, ba = pair_columns(a, b)
        x, dx, y, dy = S0[:, ba], D[:, ba], S0[:, ab], D[:, ab]
        cols += [x * x, x * dx, dx * dx, y * y, y * dy, dy * dy, x * y, x * dy, dx * y, dx * dy]
    moments = np.column_stack(cols)
    if not by_scenario:
        return moments
    out = np.zeros((scenario_of_unit.size, moments.shape[1]))
    out[first] = moments
    return out


def _pair_se(sums: np.ndarray, counts: np.ndarray, moments: np.ndarray) -> dict[str, np.ndarray]:
    """Linearized standard error of each bias(A,B) = s(B-A) - s(A-B) (the bootstrap's plug-in one, as
    bootstrap_ratio's): sqrt(sum over resampled units of w (L_ba - L_ab)^2), L the unit's
    (sum - mean * answered) / answered-in-all of each order; NaN where an order has no answer."""
    out = {}
    for i, ((a, b), name) in enumerate(zip(PAIRS, PAIR_NAMES)):
        ab, ba = pair_columns(a, b)
        X, NX, Y, NY = sums[..., ba], counts[..., ba], sums[..., ab], counts[..., ab]
        xx, xdx, dxdx, yy, ydy, dydy, xy, xdy, dxy, dxdy = np.moveaxis(moments[..., 10 * i: 10 * i + 10], -1, 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mx, my = X / NX, Y / NY
            var = ((xx - 2 * mx * xdx + mx**2 * dxdx) / NX**2 + (yy - 2 * my * ydy + my**2 * dydy) / NY**2
                   - 2 * (xy - my * xdy - mx * dxy + mx * my * dxdy) / (NX * NY))
        out[name] = np.sqrt(np.maximum(var, 0.0))
    return out


def _resampled(S0: np.ndarray, D: np.ndarray, scenario_of_unit: np.ndarray, n_resamples: int,
               rng: np.random.Generator, by_scenario: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per-column sums of S0 and of D (answer counts) in n_resamples bootstrap resamples of the units."""
    sums = np.empty((n_resamples, S0.shape[1]))
    counts = np.empty((n_resamples, D.shape[1]))
    block = max(1, _MAX_BLOCK // max(1, S0.shape[0]))
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        weights = _weights(scenario_of_unit, stop - start, rng, by_scenario)
        sums[start:stop], counts[start:stop] = weights @ S0, weights @ D
    return sums, counts


def _weights(scenario_of_unit: np.ndarray, n_resamples: int, rng: np.random.Generator, by_scenario: bool) -> np.ndarray:
    """Resampling weights (resamples x units): how often each unit is drawn, with replacement."""
    if not by_scenario:
        return _draw_counts(scenario_of_unit.size, n_resamples, rng)
    scen, local = np.unique(scenario_of_unit, return_inverse=True)
    return _draw_counts(scen.size, n_resamples, rng)[:, local]


def _draw_counts(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """m rows of multinomial(n, uniform over n) counts, by counting n uniform draws per row
    (several times faster than numpy's multinomial for many categories)."""
    draws = rng.integers(0, n, size=(m, n)) + (np.arange(m) * n)[:, None]
    return np.bincount(draws.ravel(), minlength=m * n).reshape(m, n).astype(np.float64)


def mcnemar_pairs(S: np.ndarray) -> dict[str, dict[str, float | int | str | None]]:
    """McNemar's exact test for each mixed pair on the matched pairings.

    A matched pairing is one unit's A-B and B-A prompts (same scenario, same two
    names, reverse order), both answered. Discordant pairings are those where the
    same person wins in both orders: ``a_both`` (the A person) and ``b_both``.
    """
    out = {}
    for (a, b), name in zip(PAIRS, PAIR_NAMES):
        ab, ba = pair_columns(a, b)
        x, y = S[:, ab], S[:, ba]
        both = ~np.isnan(x) & ~np.isnan(y)
        x, y = x[both], y[both]
        a_both = int(((x == -1) & (y == 1)).sum())  # A is NAME1, then NAME2: chosen both times
        b_both = int(((x == 1) & (y == -1)).sum())
        out[name] = {
            "pair": f"{GROUP_OF[a]} vs {GROUP_OF[b]}",
            "matched_pairings": int(both.sum()),
            "a_chosen_both_orders": a_both,
            "b_chosen_both_orders": b_both,
            "name1_chosen_both_orders": int(((x == -1) & (y == -1)).sum()),
            "name2_chosen_both_orders": int(((x == 1) & (y == 1)).sum()),
            # No matched pairing, no test (rather than p = 1, which reads as "no difference").
            "p_value": mcnemar_exact(a_both, b_both) if both.any() else None,
        }
    return out


def order_bias_test(S: np.ndarray) -> dict[str, float | int | None]:
    """Sign test of NAME1 against NAME2 over the answered same-group prompts."""
    cols = S[:, [type_index(t) for t in SAME_GROUP]]
    answered = cols[~np.isnan(cols)]
    first = int((answered == -1).sum())
    return {
        "answered": int(answered.size),
        "name1_chosen": first,
        "name2_chosen": int(answered.size - first),
        "p_value": sign_test(first, int(answered.size)) if answered.size else None,
    }


def position_counts(S: np.ndarray) -> tuple[list[int], int, int]:
    """(answers choosing NAME1 and NAME2, pairs choosing the same position, pairs) of a units x types grid.

    Every pairing is asked in both orders: a mixed pair's A-B and B-A prompts of a
    unit, and a same-group type's two slots 2q and 2q + 1 of a scenario (adjacent
    units). A pair counts when both its answers were read; it chose the same
    position when both chose NAME1 or both NAME2 (a model that answers by position
    does so every time, one that answers by person never).
    """
    pairs = [(S[:, ab], S[:, ba]) for ab, ba in (pair_columns(a, b) for a, b in PAIRS)]
    pairs += [(S[0::2, t], S[1::2, t]) for t in (TYPES.index(s) for s in SAME_GROUP)]
    x, y = np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])
    both = ~np.isnan(x) & ~np.isnan(y)
    chosen = [int((S == -1).sum()), int((S == 1).sum())]
    return chosen, int((both & (x == y)).sum()), int(both.sum())
