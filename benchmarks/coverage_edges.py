"""Statistics at the edges (issue 31): each "Done when" figure, from 1,000 simulated runs or more.

Run through benchmarks/coverage.py (``--part family``, ``compare``, ``intervals``);
each function returns table rows (check, setting, figure, runs).

* family: reference:random through the real probe, the README's command at a
  given size: the share of runs showing any breakdown flag.
* compare: two unbiased models whose answers to an item's two orders agree
  with probability C (the same person chosen), compared as ``genderprobe
  compare`` compares them (one resample of the items for both headline
  metrics, max-T over the pair): the share of pairs with any family flag; and
  the power the family keeps over two near-identical tests where Holm lost it.
* intervals: the difference of two runs' diff_abs_success_rate, DeMET's
  mixed_gender_bias_folded (the probe's own ``compute_scores`` on simulated
  answers of reference:biased?p=P), lost-answer shares clustered by item, and
  the dialogue's exact test and corrected Cramer's V.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from genderprobe.analysis.comparison_stats import (
    ItemScores,
    paired_difference,
    paired_rows,
    resampled_row_sums,
)
from genderprobe.analysis.losses import loss_report, wilson
from genderprobe.analysis.stats import ABS_RESAMPLES, holm
from genderprobe.outputs.report.paired import PairTest, _adjust
from genderprobe.studies.relationship_levy.paired import _diff, _diff_abs

Row = tuple[str, str, str, int]


# -- family: the README's command on a fair coin ------------------------------------------------


def _flags(seeds: range, sample_k: int) -> list[bool]:
    from genderprobe.interfaces.api import RunConfig, run_probe

    out = []
    for seed in seeds:
        doc = run_probe("relationship-levy", "reference:random", sample_k=sample_k,
                        config=RunConfig(seed=seed, use_cache=False, keep_records=False)).document
        out.append(any(g["flag"] for t in doc["breakdown_tests"].values() for g in t["groups"].values()))
    return out


def family(runs: int, jobs: int, sizes: tuple[int, ...] = (1000, 3000)) -> list[Row]:
    rows = []
    for k in sizes:
        chunks = [range(s, min(runs, s + 50)) for s in range(0, runs, 50)]
        with ProcessPoolExecutor(jobs) as pool:
            flagged = [f for part in pool.map(_flags, chunks, [k] * len(chunks)) for f in part]
        rows.append(("runs of reference:random showing any flag", f"relationship-levy, {k:,} items, seeds 0-{runs - 1}",
                     f"{np.mean(flagged):.1%}", runs))
    return rows


# -- compare: consistent unbiased models -----------------------------------------------------------


def _answers(rng: np.random.Generator, items: int, consistency: float, p_man: float = 0.5) -> np.ndarray:
    """Per item, the share of its two orders that chose the man; both orders alike with probability C."""
    alike = rng.random(items) < consistency
    first = (rng.random(items) < p_man).astype(float)
    second = (rng.random(items) < p_man).astype(float)
    return np.where(alike, first, (first + second) / 2)


def _pair(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, resamples: int = 2000) -> list[PairTest]:
    """compare's two RelationshipLevy tests of one pair of runs, adjusted as one family."""
    ids, ones = np.arange(len(a)), np.ones(len(a))
    scores = [(ItemScores(ids, x, ones, _diff), ItemScores(ids, x, ones, _diff_abs, signed=_diff, weights=(1.0,)))
              for x in (a, b)]
    sums = resampled_row_sums(paired_rows(scores[0][0], scores[1][0]), n_resamples=resamples,
                              rng=np.random.default_rng(int(rng.integers(1 << 62))))
    tests = []
    for m, name in enumerate(("diff_success_rate", "diff_abs_success_rate")):
        d = paired_difference(scores[0][m], scores[1][m], sums=sums)
        tests.append(PairTest("A", "B", name, False, d.estimate.to_json(), d.p_value, "paired bootstrap", True, "",
                              _difference=d))
    _adjust(tests)
    return tests


def _compare_case(args: tuple[int, float, float, int, int]) -> tuple[float, float]:
    items, consistency, shift, runs, seed = args
    rng = np.random.default_rng(seed)
    family_hits = holm_hits = 0
    for _ in range(runs):
        tests = _pair(_answers(rng, items, consistency, 0.5 + shift), _answers(rng, items, consistency), rng)
        family_hits += any(t.p_adjusted < 0.05 for t in tests)
        holm_hits += any(p < 0.05 for p in holm([t.p_value for t in tests]))
    return family_hits / runs, holm_hits / runs


def compare(runs: int, jobs: int) -> list[Row]:
    cases = [(items, c, 0.0) for c in (0.9, 1.0) for items in (100, 400)] + [(100, 0.5, 0.15)]
    with ProcessPoolExecutor(jobs) as pool:
        found = list(pool.map(_compare_case, [(i, c, s, runs, 31 + n) for n, (i, c, s) in enumerate(cases)]))
    rows = []
    for (items, c, shift), (fam, holm_rate) in zip(cases, found):
        if shift:
            rows.append(("compare: power, A's diff_success_rate 0.3 vs B's 0", f"{items} items",
                         f"family (max-T) {fam:.1%}, Holm over both {holm_rate:.1%}", runs))
        else:
            rows.append(("compare: pairs of unbiased runs with any family flag",
                         f"consistency {c}, {items} items", f"{fam:.1%}", runs))
    return rows


# -- intervals ---------------------------------------------------------------------------------------


def _diff_abs_case(args: tuple[int, float, float, int, int]) -> tuple[float, float, float, float]:
    """(coverage two-step, coverage percentile, width two-step, width percentile) of A - B's diff_abs."""
    items, pa, pb, runs, seed = args
    rng = np.random.default_rng(seed)
    ids, ones = np.arange(items), np.ones(items)
    truth = abs(2 * pa - 1) - abs(2 * pb - 1)
    cover, width = np.zeros(2), np.zeros(2)
    for _ in range(runs):
        a, b = rng.binomial(2, pa, items) / 2, rng.binomial(2, pb, items) / 2
        scores = [(ItemScores(ids, x, ones, _diff_abs, signed=_diff, weights=(1.0,)), ItemScores(ids, x, ones, _diff_abs))
                  for x in (a, b)]
        sums = resampled_row_sums(paired_rows(scores[0][0], scores[1][0]), n_resamples=ABS_RESAMPLES,
                                  rng=np.random.default_rng(int(rng.integers(1 << 62))))
        for i in (0, 1):
            e = paired_difference(scores[0][i], scores[1][i], sums=sums).estimate
            cover[i] += e.ci_low - 1e-12 <= truth <= e.ci_high + 1e-12
            width[i] += e.ci_high - e.ci_low
    return (*(cover / runs), *(width / runs))


def _demet_case(args: tuple[int, float, int, int]) -> tuple[float, float]:
    """(coverage, mean width) of mixed_gender_bias_folded for reference:biased?p=P at per_type."""
    from genderprobe.studies.demet.plan import name2_chosen
    from genderprobe.studies.demet.scores import TYPES, compute_scores

    per_type, p, runs, seed = args
    rng = np.random.default_rng(seed)
    chance = np.array([name2_chosen(t, p) for t in TYPES])  # NAME2 chosen: score +1, else -1
    units = 29 * per_type
    truth = 4 * abs(1 - 2 * p) / 3
    hits, widths = 0, 0.0
    for _ in range(runs):
        S = np.where(rng.random((units, len(TYPES))) < chance, 1.0, -1.0)
        e = compute_scores(S, np.repeat(np.arange(29), per_type), n_resamples=1000,
                           seed=int(rng.integers(1 << 30))).overall_folded
        hits += e.ci_low - 1e-12 <= truth <= e.ci_high + 1e-12
        widths += e.ci_high - e.ci_low
    return hits / runs, widths / runs


def _losses_case(args: tuple[int, int]) -> tuple[float, float, float]:
    """Lost shares of 100 items asked 5 times each, item difficulty Beta-spread around 20%:
    (clustered Wilson coverage, per-answer Wilson coverage, matched test's false-positive rate)."""
    runs, seed = args
    rng = np.random.default_rng(seed)
    cover = np.zeros(2)
    false = 0
    items, reps = 100, 5
    for _ in range(runs):
        difficulty = rng.beta(0.5, 2.0, items)  # mean 0.2, items far apart
        lost = rng.random((items, reps)) < difficulty[:, None]
        flags = lost.ravel().tolist()
        report = loss_report(["x"] * items * reps, {"undetected": flags}, items=np.repeat(np.arange(items), reps).tolist())
        for i, e in enumerate((report.rate("undetected", "x"), wilson(int(lost.sum()), items * reps))):
            cover[i] += e.ci_low <= 0.2 <= e.ci_high
        # Both groups of a matched design, the same difficulty per item: no group differs.
        second = rng.random((items, reps)) < difficulty[:, None]
        groups = ["a"] * items * reps + ["b"] * items * reps
        matched = loss_report(groups, {"undetected": flags + second.ravel().tolist()}, order=["a", "b"],
                              items=[*np.repeat(np.arange(items), reps).tolist()] * 2).tests["undetected"]
        false += matched["p_value"] is not None and matched["p_value"] < 0.05
    return (*(cover / runs), false / runs)


def _dialogue_case(args: tuple[int, int, float, int]) -> tuple[float, float, float]:
    """Dialogue tables of 4 pairings x 5 topics, ``per`` dialogues a pairing, the pairings' topic shares
    moved apart by ``strength``: (the test's rejection rate, the corrected V's coverage, its mean width)."""
    from genderprobe.studies.multilingual.dialogue_probe import corrected_v, independence_test

    per, runs, strength, seed = args
    rng = np.random.default_rng(seed)
    base = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
    tilt = np.array([[1, -1, 0, 0, 0], [-1, 1, 0, 0, 0], [0, 0, 1, -1, 0], [0, 0, -1, 1, 0]]) * 0.1 * strength
    probs = base + tilt
    truth = float(corrected_v(probs * 1e9))  # V of the population: the correction vanishes as n grows
    rejected = covered = 0
    width = 0.0
    for _ in range(runs):
        table = np.stack([rng.multinomial(per, row) for row in probs])
        test = independence_test(table, seed=int(rng.integers(1 << 30)))
        rejected += test["p_value"] is not None and test["p_value"] < 0.05
        v = test["cramers_v_corrected"]
        covered += v["ci_low"] - 1e-12 <= truth <= v["ci_high"] + 1e-12
        width += v["ci_high"] - v["ci_low"]
    return rejected / runs, covered / runs, width / runs


DIFF_CASES = [(300, 0.6, 0.5), (400, 0.6, 0.5), (300, 0.75, 0.5), (300, 0.6, 0.7), (300, 0.5, 0.5)]
DEMET_CASES = [(pt, p) for pt in (2, 4) for p in (0.5, 0.6, 0.75)]


def abs_rows(pool: ProcessPoolExecutor, runs: int) -> Iterator[Row]:
    """The intervals of sums of absolute values: compare's difference and DeMET's folded one (seeds 100+, 200+)."""
    diff = pool.map(_diff_abs_case, [(*c, runs, 100 + i) for i, c in enumerate(DIFF_CASES)])
    demet = pool.map(_demet_case, [(*c, runs, 200 + i) for i, c in enumerate(DEMET_CASES)])
    for (items, pa, pb), (c2, cp, w2, wp) in zip(DIFF_CASES, diff):
        yield ("compare: A - B of diff_abs_success_rate", f"{items} items, A's diff {2 * pa - 1:.1f}, "
               f"B's {2 * pb - 1:.1f}", f"abs_combination_interval {c2:.1%} (width {w2:.3f}); percentile {cp:.1%} "
               f"(width {wp:.3f})", runs)
    for (pt, p), (cover, width) in zip(DEMET_CASES, demet):
        yield ("demet: mixed_gender_bias_folded", f"per_type {pt}, P = {p} (true {4 * abs(1 - 2 * p) / 3:.3f})",
               f"{cover:.1%} (width {width:.3f})", runs)


def intervals(runs: int, jobs: int) -> list[Row]:
    dialogue_cases = [(8, 0.0), (50, 0.0), (50, 1.0), (100, 1.0)]
    with ProcessPoolExecutor(jobs) as pool:
        rows: list[Row] = list(abs_rows(pool, runs))
        losses = pool.map(_losses_case, [(runs, 300)])
        dialogue = pool.map(_dialogue_case, [(per, runs, s, 400 + i) for i, (per, s) in enumerate(dialogue_cases)])
        for clustered, plain, false in losses:
            rows.append(("losses: share lost, 100 items x 5 attempts, items' difficulty spread",
                         "Wilson clustered by item / per answer", f"{clustered:.1%} / {plain:.1%}", runs))
            rows.append(("losses: matched test, two groups alike", "100 items x 5 attempts each group",
                         f"false positives {false:.1%}", runs))
        for (per, s), (rejected, covered, width) in zip(dialogue_cases, dialogue):
            setting = f"{per} dialogues a pairing, " + ("independent" if not s else f"association strength {s:g}")
            rows.append(("dialogue: independence test rejects / corrected V covers", setting,
                         f"{rejected:.1%} / {covered:.1%} (width {width:.3f})", runs))
    return rows


def print_rows(rows: list[Row], title: str) -> None:
    print(f"{title}\n\n| check | setting | figure | runs |\n|---|---|---|---|")
    for check, setting, figure, runs in rows:
        print(f"| {check} | {setting} | {figure} | {runs:,} |")
    print()


# -- crossed: scenarios and names both pull their items ----------------------------------------------


def _crossed_case(args: tuple[float, float, int, int, int]) -> dict[str, tuple[float, float]]:
    """Coverage and mean width of diff_success_rate's intervals when the model's lean depends on the
    scenario (sd_s) and on each name (sd_n), new scenarios and names each run: the truth is the lean
    over scenarios and names like these."""
    from genderprobe.analysis.stats import (
        bootstrap_ratio,
        cluster_bootstrap_ratio,
        crossed_cluster_ratio,
    )

    sd_s, sd_n, items, runs, seed = args
    rng = np.random.default_rng(seed)
    truth = 2 * float(np.clip(0.6 + rng.normal(0, sd_s, 10**6) + rng.normal(0, sd_n, 10**6)
                              + rng.normal(0, sd_n, 10**6), 0, 1).mean()) - 1
    scenario = np.arange(items) % 109
    found: dict[str, list] = {"item (printed)": [], "scenario cluster": [], "crossed (scenario x man x woman)": []}
    for run in range(runs):
        s, m, w = rng.normal(0, sd_s, 109), rng.normal(0, sd_n, 400), rng.normal(0, sd_n, 400)
        man, woman = rng.integers(0, 400, items), rng.integers(0, 400, items)
        p = np.clip(0.6 + s[scenario] + m[man] + w[woman], 0, 1)
        share = rng.binomial(2, p) / 2
        boot = dict(seed=run, transform=lambda x: 2 * x - 1)
        for name, e in (("item (printed)", bootstrap_ratio(share, **boot)),
                        ("scenario cluster", cluster_bootstrap_ratio(share, clusters=scenario, **boot)),
                        ("crossed (scenario x man x woman)", crossed_cluster_ratio(
                            share, factors=(scenario, man, woman), transform=lambda x: 2 * x - 1))):
            found[name].append((e.ci_low <= truth <= e.ci_high, e.ci_high - e.ci_low))
    return {name: (float(np.mean([c for c, _ in v])), float(np.mean([w for _, w in v]))) for name, v in found.items()}


def crossed(runs: int, jobs: int) -> list[Row]:
    cases = [(0.0, 0.0, 3000), (0.1, 0.0, 3000), (0.0, 0.1, 3000), (0.1, 0.1, 3000), (0.1, 0.1, 1090)]
    with ProcessPoolExecutor(jobs) as pool:
        found = list(pool.map(_crossed_case, [(*c, runs, 600 + i) for i, c in enumerate(cases)]))
    rows = []
    for (sd_s, sd_n, items), result in zip(cases, found):
        figure = "; ".join(f"{name} {cover:.1%} ({width:.3f})" for name, (cover, width) in result.items())
        rows.append(("relationship-levy: diff_success_rate covers (mean width)",
                     f"{items:,} items, sd of scenario {sd_s:g}, of each name {sd_n:g}", figure, runs))
    return rows
