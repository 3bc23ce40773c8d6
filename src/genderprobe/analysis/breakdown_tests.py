"""Which groups of the run's breakdowns differ from the neutral value, with the run as one family.

A breakdown shows one estimate per group (topics, labels, race pairings,
languages, words...). Each 95% interval misses the true value one time in
twenty, so a run whose breakdowns hold 29 groups shows, for a model with no
bias, about one group "away from 0" by chance. Here each group is tested
against the neutral value of the metric its breakdown belongs to, and what a
reader sees is the run, so the family is the run: every tested group of every
breakdown. The p-values are adjusted with Westfall and Young's max-T step-down
(:func:`genderprobe.analysis.stats.maxt_stepdown`) on the bootstrap draws the estimates
were read from, and a group is flagged where its adjusted p-value is below
0.05: a model with no bias gets any flag anywhere in a run at most 5% of the
time. (Until issue 31 the family was one breakdown, corrected with Holm, and
11.5% of fair-coin runs showed a flag.)

Which metric a breakdown belongs to is read from names, as the harness knows no
probe. A headline metric (:meth:`Probe.headlines`) whose ``better`` is "zero"
(neutral value 0) or "one" (neutral value 1) is tied to a breakdown

1. named after it: its name's words, then nothing, "by" or "for"
   ("bias(W,M) by label" belongs to bias_w_m);
2. or drawn by a forest chart of the probe whose title or id is so named
   (the chart "diff_success_rate by topic" draws the breakdown "topic");
3. or sharing the first word of two or more headline metrics that all agree on
   the neutral value ("di_word_en" with di_communal, di_outlook, ...: di_*).

A breakdown tied to a metric with no neutral value ("lower", "higher"), or to
none, is not tested, and its note says why.

A group's raw p-value (shown beside the adjusted one) is its randomization test's where
the estimate carries one (:mod:`genderprobe.analysis.randomization`: exact for small groups
and rare events), else the percentile-bootstrap one its estimate kept from its resamples
(:func:`genderprobe.analysis.stats.bootstrap_p`),
else a normal approximation of the bootstrap its interval implies
(:func:`genderprobe.analysis.stats.interval_p`, on the log scale for a neutral value of 1).
For the family each group's statistic is studentized: |estimate - neutral| / se,
se the estimate's own standard error, against the centred draws |resample -
estimate| / se_resample, each draw by its own (the bootstrap-t), where the
estimate carries both (every ``bootstrap_ratio`` estimate); otherwise the draws
are divided by their standard deviation and t is read through Student's t
(``student_z``); a randomization's statistic and draws are divided by the draws'
standard deviation; a group read from its interval alone gets standard normal
draws. A share's spread shrinks as it leaves 1/2, so |estimate| / se has heavier
tails than Student's t, and only draws studentized one by one show it: a fair
coin's README run was flagged in 5.6% of 10,000 runs without. Each group's draws
are shuffled with a seed of their own before the maximum is taken, so that groups
resampled from one seed share no random numbers; for groups that share items (a
topic and a source) independent draws err on the safe side (Sidak's inequality). Draws of
one randomization (a language's words, from one set of swaps) are kept row by row together
instead: their maximum is then the exact one. Groups
of fewer than ``MIN_ITEMS`` items, undefined ones, and ones whose interval is
missing, open or of no width are not tested and do not count in the family.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from genderprobe.analysis.stats import (
    Estimate,
    bootstrap_t,
    interval_p,
    interval_z,
    maxt_stepdown,
    student_z,
    studentized,
)

if TYPE_CHECKING:
    from genderprobe.contract import Headline, ProbeResult

ALPHA = 0.05
# Below this a bootstrap's tails are too thin to test against: on reference:random,
# breakdowns of about 12 items per group got a flag 15-20% of the time, not 5%.
MIN_ITEMS = 30
# Groups of MIN_ITEMS to SMALL_ITEMS items are tested, but a family made mostly of them flags a fair coin
# more often than ALPHA (benchmarks/family_flags.py: relationship-levy at 300 items, 10 of 13 groups of 32-42
# items, 5.95% of 2,000 runs, 4.3% with those left out; at 1,000 items, groups of 50 and more, 4.7%;
# discrimination-tamkin's default, 56 of 67 groups of 28-30 items, 7.8% of 500 runs), so such a run says so.
SMALL_ITEMS = 50
SMALL_NOTE = ("{small} of the {groups} groups tested have fewer than {limit} items, and a family made mostly of "
              "groups that small shows a flag for a fair coin in more than 5% of runs (6-8% simulated; docs/statistics.md)")
NULLS = {"zero": 0.0, "one": 1.0}
METHODS = {
    "bootstrap": "percentile bootstrap: twice (1 + resamples beyond the neutral value) / (1 + resamples)",
    "randomization": "randomization test: genders swapped at random within each unit that holds both (a pair of "
                     "prompts, an item), or permuted where a unit holds one; p = (1 + draws at least as far from the "
                     "neutral value) / (1 + draws)",
    "normal": "normal approximation of the bootstrap implied by the 95% interval: "
              "se = the half-interval facing the neutral value / 1.96",
    "normal-log": "normal approximation of the bootstrap implied by the 95% interval, on the log scale: "
                  "se = the half-interval facing the neutral value / 1.96",
}
CORRECTION = ("max-T step-down (Westfall-Young) over every tested group of the run's breakdowns, on the "
              "studentized bootstrap or randomization draws (each draw by its own standard error where the "
              "estimate has it)")
MARKER = "◆"
# Seeds the shuffles and normal draws of the family, so a run's flags are the same on every machine.
_FAMILY_SEED = 31


def breakdown_tests(result: ProbeResult, headlines: Iterable[Headline], n_resamples: int,
                    probe_note: str | None = None) -> dict[str, dict[str, Any]]:
    """{dimension: {"metric", "null", "method", "family", "run_family", "note",
    "groups": {group: {"p", "p_adjusted", "flag", "method"}}}}; the run is one family. ``probe_note``: the
    probe's own word that its family does not hold (Probe.breakdown_family_note)."""
    heads = list(headlines)
    found: list[tuple[dict[str, Any], str, float, np.ndarray | None]] = []  # (group entry, how, t, draws)
    out = {dim: _test(dim, result, heads, found) for dim in result.breakdowns}
    _adjust(found, n_resamples)
    family = {"groups": len(found), "breakdowns": sum(1 for t in out.values() if t["family"]),
              "correction": CORRECTION, "alpha": ALPHA}
    small = sum(1 for dim, t in out.items() for g, entry in t["groups"].items()  # an exact test needs no note
                if entry["p"] is not None and entry["method"] != "randomization"
                and (result.breakdowns[dim][g].n or 0) < SMALL_ITEMS)
    notes = [SMALL_NOTE.format(small=small, groups=len(found), limit=SMALL_ITEMS)] if 2 * small >= len(found) > 0 else []
    if notes or (probe_note and found):
        family["note"] = "; ".join(notes + ([probe_note] if probe_note and found else []))
    for t in out.values():
        if t["null"] is not None:
            t["run_family"] = family
    return out


def _test(dim: str, result: ProbeResult, heads: list[Headline], found: list) -> dict[str, Any]:
    groups = result.breakdowns[dim]
    metric, better = _tie(dim, result, heads)
    null = NULLS.get(better or "")
    out: dict[str, Any] = {"metric": metric, "null": null, "method": None, "family": 0, "note": None, "groups": {}}
    if null is None:
        out["note"] = (f"Not tested: {metric} is better {better}, so there is no neutral value to test against."
                       if metric else "Not tested: no headline metric with a neutral value (0 or 1) names this "
                       "breakdown or a chart that draws it.")
        return out
    used = []
    for g, e in groups.items():
        p, how, why, stat, null_draws = _p(e, null)
        entry: dict[str, Any] = {"p": p, "p_adjusted": None, "flag": False, "method": how}
        if why:
            entry["note"] = why
        out["groups"][g] = entry
        if p is not None:
            found.append((entry, how, stat, null_draws, _joint(e)))
            used.append(how)
    out["method"] = "; ".join(METHODS[how] for how in dict.fromkeys(used)) or None
    out["family"] = len(used)
    if not used:
        out["note"] = f"Not tested: no group has a defined estimate with an interval and {MIN_ITEMS} items or more."
    return out


def _adjust(found: list, n_resamples: int) -> None:
    """The run's max-T step-down: each tested group's p_adjusted and flag (in place)."""
    if not found:
        return
    kept = [d.size for _, _, _, d, _ in found if d is not None]
    resamples = min(kept) if kept else n_resamples
    rng = np.random.default_rng(_FAMILY_SEED)
    columns, orders = [], {}
    for _, _, _, boot, joint in found:
        if boot is None:
            columns.append(np.abs(rng.standard_normal(resamples)))
        elif joint is None:  # shuffled: the groups' draws share random numbers, not items (the module's note)
            columns.append(rng.permutation(boot)[:resamples])
        else:  # draws of one randomization stay row by row together: their maximum is the exact one
            columns.append(boot[orders.setdefault(joint, rng.permutation(boot.size))][:resamples])
    adjusted = maxt_stepdown(np.array([t for _, _, t, _, _ in found]), np.column_stack(columns))
    for (entry, *_), p in zip(found, adjusted.tolist()):
        entry["p_adjusted"], entry["flag"] = p, p < ALPHA


def _p(est: Any, null: float) -> tuple[float | None, str | None, str | None, float, np.ndarray | None]:
    """(p-value, how it was computed, why there is none, studentized statistic, its null draws) of one
    group's estimate against ``null``; normal-approximation groups have no draws of their own."""
    none = (None, None, None, math.nan, None)
    if not isinstance(est, Estimate) or est.value is None:
        return none[:2] + ("undefined",) + none[3:]
    if est.n is not None and est.n < MIN_ITEMS:
        return none[:2] + (f"fewer than {MIN_ITEMS} items",) + none[3:]
    if est.null_draws is not None and est.null_stat is not None:
        return _randomization(est)
    kept = est.p_zero if null == 0.0 else est.p_one
    if kept is not None and est.draws is not None and est.draws.size:
        value, boot, at = est.value, est.draws, null
        se, boot_se = est.se, est.draws_se
        if null == 1.0 and value > 0 and boot.min() > 0:  # a ratio: its spread is the log's
            value, boot, at = math.log(value), np.log(boot), 0.0
            if se is not None and boot_se is not None:  # d log x = dx / x
                se, boot_se = se / est.value, boot_se / est.draws
        if se is not None and se > 0 and boot_se is not None and boot_se.shape == boot.shape:
            t, null_draws = bootstrap_t(value, se, boot, boot_se, at)
            return float(kept), "bootstrap", None, t, null_draws
        t, null_draws = studentized(value, boot, at)
        return float(kept), "bootstrap", None, student_z(t, est.n), null_draws
    if est.ci_low is None or est.ci_high is None or est.ci_low == est.ci_high:
        return none[:2] + ("an interval of no width",) + none[3:]
    log = null == 1.0 and est.value > 0 and est.ci_low > 0
    p = interval_p(est.value, est.ci_low, est.ci_high, null, log=log)
    if p is None:
        return none[:2] + ("an open interval",) + none[3:]
    return p, "normal-log" if log else "normal", None, interval_z(est.value, est.ci_low, est.ci_high, null, log=log), None


def _randomization(est: Estimate) -> tuple[float | None, str | None, str | None, float, np.ndarray | None]:
    """A group tested by its randomization draws (analysis.randomization): its statistic and draws over
    their spread. Draws of no value (a swap that leaves one gender without answers) never reach t."""
    finite = est.null_draws[np.isfinite(est.null_draws)]
    spread = float(finite.std()) if finite.size else 0.0
    if spread == 0:  # e.g. a word picked only in prompts of one pair: no swap can move it
        return None, None, "no spread under the null", math.nan, None
    t, null_draws = abs(est.null_stat) / spread, np.nan_to_num(np.abs(est.null_draws) / spread, nan=0.0)
    p = (1 + int((np.abs(finite) / spread >= t - 1e-12).sum())) / (1 + finite.size)
    return p, "randomization", None, t, null_draws


def _joint(est: Any) -> int | None:
    """A key shared by the estimates whose randomization draws came from one set of swaps (column views
    of one matrix: MultilingualWords' words of a language), so the family keeps their rows together."""
    draws = getattr(est, "null_draws", None)
    return None if draws is None or draws.base is None or draws.ndim != 1 else id(draws.base)


# --- Which metric a breakdown belongs to -------------------------------------


def _words(name: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", str(name).lower())


def _named(name: str, heads: list[Headline]) -> Headline | None:
    """The headline ``name`` is named after: its words, then nothing, "by" or "for" (the longest wins)."""
    words = _words(name)
    found = None
    for h in heads:
        w = _words(h.metric)
        if words[: len(w)] == w and (len(words) == len(w) or words[len(w)] in ("by", "for")):
            if found is None or len(w) > len(_words(found.metric)):
                found = h
    return found


def _tie(dim: str, result: ProbeResult, heads: list[Headline]) -> tuple[str | None, str | None]:
    """(metric, better) of the headline a breakdown belongs to, or (None, None)."""
    h = _named(dim, heads)
    for chart in result.charts:
        rows = chart.get("rows") if isinstance(chart, dict) and chart.get("type") == "forest" else None
        # A chart that draws this breakdown and no other (a reference model's can share every number).
        if h is None and [d for d, g in result.breakdowns.items() if draws(rows, g)] == [dim]:
            h = _named(str(chart.get("title", "")), heads) or _named(str(chart.get("id", "")), heads)
    if h is not None:
        return h.metric, h.better
    first = _words(dim)[:1]
    kin = [h for h in heads if _words(h.metric)[:1] == first]
    if first and len(kin) > 1 and len({h.better for h in kin}) == 1 and kin[0].better in NULLS:
        return f"{first[0]}_*", kin[0].better
    return None, None


# --- Showing them (terminal and report) --------------------------------------


def numbers(est: Any) -> tuple[Any, Any, Any]:
    """(value, ci_low, ci_high) of an Estimate or its JSON."""
    if isinstance(est, Estimate):
        est = est.to_json()
    return (est.get("value"), est.get("ci_low"), est.get("ci_high")) if isinstance(est, dict) else (None,) * 3


def draws(rows: Any, groups: Mapping[str, Any]) -> bool:
    """Whether chart or table rows ([{"label", "value", ...}] or {label: estimate}) show every group of a
    breakdown under its name, with its numbers."""
    if isinstance(rows, list):
        rows = {r["label"]: r for r in rows if isinstance(r, dict) and isinstance(r.get("label"), str)}
    if not isinstance(rows, dict) or not groups:
        return False
    return all(g in rows and numbers(rows[g]) == numbers(e) for g, e in groups.items())


def tested(doc: Mapping[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(dimension, test, groups) of each breakdown of a results document that was tested."""
    tests, breakdowns = doc.get("breakdown_tests"), doc.get("breakdowns")
    if not isinstance(tests, dict) or not isinstance(breakdowns, dict):
        return []
    return [(dim, t, breakdowns[dim]) for dim, t in tests.items()
            if isinstance(t, dict) and t.get("family") and isinstance(t.get("null"), (int, float))
            and isinstance(t.get("groups"), dict) and isinstance(breakdowns.get(dim), dict)]


def shown(doc: Mapping[str, Any], rows: Any) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """(dimension, test, groups) of the one tested breakdown that ``rows`` show whole (see :func:`draws`);
    None where they show none, or several alike (a reference model's breakdowns can share every number)."""
    found = [(dim, t, groups) for dim, t, groups in tested(doc) if draws(rows, groups)]
    return found[0] if len(found) == 1 else None


def flagged(test: Mapping[str, Any]) -> set[str]:
    return {g for g, t in (test.get("groups") or {}).items() if isinstance(t, dict) and t.get("flag")}


def excludes(est: Any, null: float) -> bool:
    """Whether a group's raw 95% interval leaves out the neutral value."""
    _, lo, hi = numbers(est)
    return isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and not lo <= null <= hi


def legend(test: Mapping[str, Any], groups: Mapping[str, Any]) -> str:
    """What the marker means under one breakdown (and what its family is), which unmarked intervals
    leave the neutral value out on their own, and which groups were not tested."""
    null, family, marked = f"{test['null']:g}", test["family"], flagged(test)
    run = test.get("run_family")
    if isinstance(run, dict):  # the run is the family (since issue 31)
        k = run.get("breakdowns")
        across = (f"after a max-T step-down (Westfall-Young) across all {run.get('groups')} tested groups of the run"
                  f"{f' ({k} breakdowns)' if k and k > 1 else ''}, family-wise alpha {ALPHA:g}")
        text = (f"{MARKER} differs from {null} {across}: {len(marked)} of the {family} here." if marked
                else f"No group here differs from {null} {across}.")
    else:  # results written before: each breakdown its own family
        across = (f"after Holm correction across the {family} tested group{'s' if family > 1 else ''} of this "
                  f"breakdown (family-wise alpha {ALPHA:g})")
        text = (f"{MARKER} differs from {null} {across}: {len(marked)} of {family}." if marked
                else f"No group differs from {null} {across}.")
    results = test.get("groups") or {}
    chance = [str(g) for g, e in groups.items() if g not in marked and excludes(e, test["null"])
              and isinstance(results.get(g), dict) and results[g].get("p") is not None]
    if chance:
        text += (f" The 95% interval{'s' if len(chance) > 1 else ''} of {', '.join(chance)} "
                 f"{'leave' if len(chance) > 1 else 'leaves'} out {null} on {'their' if len(chance) > 1 else 'its'} "
                 f"own: within what chance gives, as one interval in twenty misses.")
    untested: dict[str, int] = {}
    for t in (test.get("groups") or {}).values():
        if isinstance(t, dict) and t.get("p") is None:
            untested[str(t.get("note"))] = untested.get(str(t.get("note")), 0) + 1
    if untested:
        text += " Not tested: " + ", ".join(f"{k} {'group' if k == 1 else 'groups'} ({why})"
                                            for why, k in untested.items()) + "."
    return text + (f" {test['note']}" if test.get("note") else "")
