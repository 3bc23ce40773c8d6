"""Do the intervals cover? The share of 95% intervals that hold the true value.

Part 1, end to end: many runs of the calibration models ``reference:biased?p=P``
through the real probes (``run_probe``, a new seed and generation seed each run,
so new items where the probe samples them and new answers always), at several
strengths P and sample sizes. The true value of every headline is derived
exactly from P and the design (each attempt sides with the man with
probability P, independently):

    relationship-levy  diff_success_rate = 2P - 1; diff_abs_success_rate = |2P - 1|
    demet              bias(W,M) = bias(N,M) = 2(1 - 2P); bias(W,N) = 0 (no man: a fair
                       game for both orders); mixed_gender_bias = 4|1 - 2P| / 3
    genmo              pmr = P^2 + (1 - P)^2; fbr - 1/2 = (1 - P)^2 / pmr - 1/2

Intervals measured: the printed (percentile bootstrap over items) one; for
relationship-levy also GenderBench's normal fit that its marks use, the
scenario-cluster and scenario-stratified bootstraps and, for the absolute
metric, the folded interval; for demet its ``--bootstrap-by scenario`` interval
and, for mixed_gender_bias, the folded Bonferroni interval
(``genderprobe.analysis.stats``, "Cluster bootstrap and folded intervals").

Part 2, clustering: RelationshipLevy's items reuse 109 scenarios (item j takes
scenario j mod 109). A calibration model answers every scenario alike, so part
1 cannot show what sharing a scenario does. Part 2 simulates per-item answers of
a model whose strength differs by scenario (P_s ~ Beta with mean P and standard
deviation SD), through the probe's own estimator, and asks each interval to
cover two truths: the probe's item space (the mean over these 109 scenarios,
every one in every run) and scenarios like these (P).

Parts family, compare and intervals (issue 31, benchmarks/coverage_edges.py) measure
the statistics at the edges: a fair coin's flags over a whole run, compare's false
positives for models that answer both orders alike, and the intervals of absolute
values, lost answers and dialogue tables; part sequential the runs that stop when
the answer is clear (benchmarks/sequential.py). Part abs: the two-step interval of a sum
of absolute values alone (``abs_combination_interval``): compare's and DeMET's settings
of part intervals (the same seeds), and normal estimates with the second run's signed
value 0 to 5 standard errors from 0.

    python benchmarks/coverage.py                    # parts 1 and 2, 200 runs per row
    python benchmarks/coverage.py --runs 50 --probes relationship-levy --part 1
    python benchmarks/coverage.py --runs 10000 --part family    # about 20 minutes on two cores
    python benchmarks/coverage.py --runs 10000 --part abs       # 29 minutes on two cores
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from genderprobe.analysis.stats import (
    ABS_RESAMPLES,
    Estimate,
    abs_combination_interval,
    bootstrap_ratio,
    cluster_bootstrap_ratio,
    folded_interval,
    stratified_bootstrap_ratio,
)
from genderprobe.interfaces.api import RunConfig, run_probe

STRENGTHS = (0.5, 0.6, 0.75)
SIZES = {"relationship-levy": ("sample_k", (100, 500, 3000)), "demet": ("per_type", (2, 4)), "genmo": ("sample_k", (100, 907))}
N_SCENARIOS = 109


def truths(probe: str, p: float) -> dict[str, float]:
    """Each headline's true value for reference:biased?p=P, derived from P and the design."""
    if probe == "relationship-levy":
        return {"diff_success_rate": 2 * p - 1, "diff_abs_success_rate": abs(2 * p - 1)}
    if probe == "demet":
        b = 2 * (1 - 2 * p)
        return {"bias_w_m": b, "bias_n_m": b, "bias_w_n": 0.0, "mixed_gender_bias": 4 * abs(1 - 2 * p) / 3}
    pmr = p**2 + (1 - p) ** 2
    return {"pmr": pmr, "fbr_minus_half": (1 - p) ** 2 / pmr - 0.5}


# -- one run: its intervals ------------------------------------------------------


def intervals(probe: str, size: int, p: float, run: int) -> dict[tuple[str, str], tuple[float, float]]:
    """(metric, interval method) -> (low, high) of one run."""
    key, _ = SIZES[probe]
    config = RunConfig(use_cache=False, seed=run, generation={"seed": 10_000 + run})
    out = run_probe(probe, f"reference:biased?p={p}", config=config, **{key: size})
    m = out.result.metrics
    found = {}
    for metric in truths(probe, p):
        found[(metric, "percentile (printed)")] = (m[metric].ci_low, m[metric].ci_high)
    if probe == "relationship-levy":
        for metric, mark in out.document["marks"].items():
            iv = mark["mark_interval"]
            found[(metric, "normal fit (GenderBench, marks)")] = (iv["low"], iv["high"])
        found[("diff_abs_success_rate", "folded")] = _ends(folded_interval(m["diff_success_rate"]))
        found.update(_levy_by_scenario(out.records, run))
    if probe == "demet":
        found.update(_demet_by_scenario(out.records, run))
    return found


def _ends(e: Estimate) -> tuple[float, float]:
    return e.ci_low, e.ci_high


def _levy_by_scenario(records: list[dict], seed: int) -> dict:
    """RelationshipLevy's cluster and stratified intervals (scenario) from a run's records."""
    male, detected, scenario = defaultdict(int), defaultdict(int), {}
    for r in records:
        if "null" in r or r["code"] not in ("male", "female"):
            continue
        male[r["item"]] += r["code"] == "male"
        detected[r["item"]] += 1
        scenario[r["item"]] = r["scenario"]
    items = sorted(detected)
    share = np.array([male[i] / detected[i] for i in items])
    labels = np.array([scenario[i] for i in items])
    boot = dict(seed=seed, transform=lambda x: 2 * x - 1)
    found = {("diff_success_rate", "cluster (scenario)"): _ends(cluster_bootstrap_ratio(share, clusters=labels, **boot))}
    stratified = stratified_bootstrap_ratio(share, strata=labels, **boot)
    if stratified.ci_low is not None:  # none below two items a scenario
        found[("diff_success_rate", "stratified (scenario)")] = _ends(stratified)
    return found


def _demet_by_scenario(records: list[dict], seed: int) -> dict:
    """DeMET's --bootstrap-by scenario intervals and the folded mixed_gender_bias, from a run's records."""
    from genderprobe.studies.demet.scores import PAIR_NAMES, TYPES, compute_scores, score_samples

    kept = [r for r in records if r.get("score") is not None and "null_for" not in r]
    scen_ids = sorted({r["scenario"] for r in kept})
    per_type = 1 + max(r["slot"] for r in kept)
    S = np.full((len(scen_ids) * per_type, len(TYPES)), np.nan)
    for r in kept:
        S[scen_ids.index(r["scenario"]) * per_type + r["slot"], TYPES.index(r["type"])] = r["score"]
    scen_of_unit = np.repeat(np.arange(len(scen_ids)), per_type)
    by_scen = compute_scores(S, scen_of_unit, n_resamples=1000, seed=seed, by_scenario=True)
    found = {("mixed_gender_bias", "percentile by scenario"): _ends(by_scen.overall)}
    for metric, name in (("bias_w_n", PAIR_NAMES[0]), ("bias_n_m", PAIR_NAMES[1]), ("bias_w_m", PAIR_NAMES[2])):
        found[(metric, "percentile by scenario")] = _ends(by_scen.pair_bias[name])
    # The two-step interval of mixed_gender_bias: units resampled as the probe resamples them.
    answered = ~np.isnan(S)
    S0, D = np.where(answered, S, 0.0), answered.astype(float)
    rng = np.random.default_rng(seed)
    n = S.shape[0]
    weights = rng.multinomial(n, np.full(n, 1 / n), size=ABS_RESAMPLES).astype(float)
    samples = score_samples(weights @ S0, weights @ D)
    point = score_samples(S0.sum(0), D.sum(0))
    folded = abs_combination_interval([point[b] for b in PAIR_NAMES], np.column_stack([samples[b] for b in PAIR_NAMES]),
                                      [1 / 3] * 3, n)
    found[("mixed_gender_bias", "folded (two-step)")] = _ends(folded)
    return found


# -- part 1 -----------------------------------------------------------------------


@dataclass
class Tally:
    covered: int = 0
    runs: int = 0
    widths: list[float] = field(default_factory=list)

    def add(self, low: float | None, high: float | None, truth: float) -> None:
        self.runs += 1
        if low is None or high is None:
            return
        self.covered += low - 1e-12 <= truth <= high + 1e-12
        self.widths.append(high - low)


def _case(args: tuple[str, int, float, range]) -> dict:
    probe, size, p, runs = args
    return {run: intervals(probe, size, p, run) for run in runs}


def part1(probes: list[str], runs: int, jobs: int) -> list[tuple]:
    cases = [(probe, size, p) for probe in probes for size in SIZES[probe][1] for p in STRENGTHS]
    chunks = [(probe, size, p, range(start, min(runs, start + 25)))
              for probe, size, p in cases for start in range(0, runs, 25)]
    tallies: dict[tuple, Tally] = defaultdict(Tally)
    with ProcessPoolExecutor(jobs) as pool:
        for (probe, size, p, _), result in zip(chunks, pool.map(_case, chunks)):
            truth = truths(probe, p)
            for found in result.values():
                for (metric, method), (low, high) in found.items():
                    tallies[(probe, metric, method, p, size)].add(low, high, truth[metric])
    rows = []
    for (probe, metric, method, p, size), t in sorted(tallies.items(), key=lambda kv: _order(kv[0])):
        key = SIZES[probe][0]
        rows.append((probe, metric, method, p, f"{key} {size}", truths(probe, p)[metric],
                     t.covered / t.runs, float(np.mean(t.widths)) if t.widths else float("nan"), t.runs))
    return rows


def _order(k: tuple) -> tuple:
    probe, metric, method, p, size = k
    return (list(SIZES).index(probe), metric, method != "percentile (printed)", method, size, p)


# -- part 2 -----------------------------------------------------------------------


def part2(runs: int, p: float = 0.6, sds: tuple[float, ...] = (0.1, 0.2), sizes: tuple[int, ...] = (218, 1090)) -> list[tuple]:
    """Coverage when the model's strength differs by scenario, for the item space and for new scenarios."""
    rows = []
    for sd in sds:
        # Beta(a, b) with mean p and standard deviation sd.
        nu = p * (1 - p) / sd**2 - 1
        a, b = p * nu, (1 - p) * nu
        fixed = np.random.default_rng(12345).beta(a, b, N_SCENARIOS)
        for k in sizes:
            scenario = np.arange(k) % N_SCENARIOS
            tallies: dict[tuple, Tally] = defaultdict(Tally)
            for run in range(runs):
                rng = np.random.default_rng(run)
                for truth_name, p_s, truth in (
                    ("these 109 scenarios", fixed, 2 * fixed.mean() - 1),
                    ("scenarios like these", rng.beta(a, b, N_SCENARIOS), 2 * p - 1),
                ):
                    share = rng.binomial(2, p_s[scenario]) / 2  # both orders, one repetition
                    boot = dict(seed=run, transform=lambda x: 2 * x - 1)
                    for method, est in (
                        ("percentile (printed)", bootstrap_ratio(share, **boot)),
                        ("cluster (scenario)", cluster_bootstrap_ratio(share, clusters=scenario, **boot)),
                        ("stratified (scenario)", stratified_bootstrap_ratio(share, strata=scenario, **boot)),
                    ):
                        tallies[(truth_name, method)].add(est.ci_low, est.ci_high, truth)
            for (truth_name, method), t in tallies.items():
                rows.append((f"sd {sd}", truth_name, method, p, f"sample_k {k}", float("nan"),
                             t.covered / t.runs, float(np.mean(t.widths)), t.runs))
    return rows


# -- part abs: sums of absolute values ---------------------------------------------


def _normal_case(args: tuple[tuple[float, ...], tuple[float, ...], int, int]) -> tuple[float, float, float, float]:
    """Normal estimates theta + Z (unit standard errors, independent), 5,000 draws around each:
    (coverage, share with the low end above the truth, share with the high end below it, mean width)."""
    theta, weights, runs, seed = args
    rng = np.random.default_rng(seed)
    theta, weights = np.asarray(theta, float), np.asarray(weights, float)
    truth = float(weights @ np.abs(theta))
    above = below = 0
    width = 0.0
    for _ in range(runs):
        est = theta + rng.standard_normal(theta.size)
        e = abs_combination_interval(est, est + rng.standard_normal((ABS_RESAMPLES, theta.size)), weights, 100)
        above += e.ci_low > truth + 1e-12
        below += e.ci_high < truth - 1e-12
        width += e.ci_high - e.ci_low
    return 1 - (above + below) / runs, above / runs, below / runs, width / runs


NORMAL_CASES = ([((5.0, b), (1.0, -1.0)) for b in (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)]
                + [((0.0, t, t), (1 / 3,) * 3) for t in (0.0, 1.0, 2.2, 3.0, 5.0)])


def part_abs(runs: int, jobs: int) -> list[tuple[str, str, str, int]]:
    """Coverage of abs_combination_interval: compare's and DeMET's settings, then normal estimates."""
    import coverage_edges as edges

    with ProcessPoolExecutor(jobs) as pool:  # the seeds of part intervals
        rows = list(edges.abs_rows(pool, runs))
        normal = pool.map(_normal_case, [(*c, runs, 500 + i) for i, c in enumerate(NORMAL_CASES)])
        for (theta, weights), (cover, above, below, width) in zip(NORMAL_CASES, normal):
            name = "A - B, normal" if len(theta) == 2 else "mean of three, normal"
            rows.append((f"{name}: weights {', '.join(f'{w:+.2g}' for w in weights)}",
                         "theta " + ", ".join(f"{t:g}" for t in theta) + " standard errors",
                         f"{cover:.1%} (low end above the truth {above:.1%}, high end below {below:.1%}; "
                         f"width {width:.2f})", runs))
    return rows


def print_table(rows: list[tuple], header: tuple[str, ...]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for probe, metric, method, p, size, truth, cover, width, _runs in rows:
        flag = "" if 0.93 <= cover <= 0.97 else " *"
        true_text = "" if np.isnan(truth) else f" | {truth:+.3f}"
        print(f"| {probe} | {metric} | {method} | {p} | {size}{true_text} | {cover:.1%}{flag} | {width:.3f} |")
    print(f"\n({rows[0][-1] if rows else 0} runs a row; * outside 93-97%.)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--probes", default="relationship-levy,demet,genmo")
    parser.add_argument("--part", choices=("1", "2", "both", "family", "compare", "intervals", "crossed",
                                           "sequential", "abs"),
                        default="both")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    if args.part in ("1", "both"):
        rows = part1(args.probes.split(","), args.runs, args.jobs)
        print_table(rows, ("probe", "metric", "interval", "p", "sample", "true value", "coverage", "mean width"))
    if args.part in ("2", "both"):
        print("Part 2: a model whose strength differs by scenario (RelationshipLevy design, p = 0.6)\n")
        print_table(part2(args.runs), ("spread of P_s", "truth", "interval", "p", "sample", "coverage", "mean width"))
    if args.part in ("family", "compare", "intervals", "crossed"):
        import coverage_edges

        rows = getattr(coverage_edges, args.part)(args.runs, args.jobs)
        coverage_edges.print_rows(rows, f"Part {args.part}")
    if args.part == "abs":
        import coverage_edges

        coverage_edges.print_rows(part_abs(args.runs, args.jobs), "Part abs: sums of absolute values")
    if args.part == "sequential":
        import sequential

        sequential.main(args.runs, args.jobs)
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
