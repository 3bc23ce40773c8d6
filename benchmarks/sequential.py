"""--until-decided: requests saved and error rates, in simulation and in real runs (issue 31).

Simulated runs of reference:biased?p=P in RelationshipLevy's design (each item's
two orders side with the man with probability P; with a scenario spread, each
of the 109 scenarios has a strength of its own) are read round by round, as a
run reads itself (genderprobe.analysis.sequential): the share of runs the question is
settled in, settled wrongly (a bias of the wrong side or where there is none;
equivalence where the true bias is at or beyond the margin; a mark whose range
misses the truth), the mean items asked and the share of the budget's requests
saved. A few hundred real runs (run_probe with --until-decided) check the
simulation.

GenMO (genmo): one fixed population of the 907 pairs, a mismatch rate and an
FBR among the mismatches made exact (genderprobe.analysis.sequential.genmo_population),
asked in a fresh random order each run, without replacement, as a run's seeded
permutation asks them; settled wrongly is judged against that population's FBR.

    python benchmarks/coverage.py --part sequential --runs 1000
    python benchmarks/sequential.py --runs 2000   # genmo's rows alone
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np

from genderprobe.analysis.sequential import MARK_RANGES, genmo_population, simulate, simulate_genmo

BUDGET = 3000  # the README's run
GENMO_PAIRS = 907  # what a genmo run asks by default
LARGE = 10_000  # marks need a narrower sequence


def _wrong(verdict: str | None, truth: float, margin: float | None) -> bool:
    if verdict is None:
        return False
    if verdict.startswith("biased"):
        return (truth <= 0) if "above" in verdict else (truth >= 0)
    if verdict.startswith("within"):
        return abs(truth) >= margin
    if verdict.startswith("beyond"):
        return abs(truth) < margin
    mark = verdict.removeprefix("mark ")
    return not any(m == mark and a <= truth <= b for m, a, b in MARK_RANGES)


def _case(args: tuple) -> tuple:
    label, strengths, question, margin, budget, runs, seed = args
    truth = 2 * float(np.mean(strengths)) - 1
    found = simulate(strengths, budget, question, margin, runs=runs, seed=seed)
    items = np.array([k for k, _ in found])
    decided = np.mean([v is not None for _, v in found])
    wrong = np.mean([_wrong(v, truth, margin) for _, v in found])
    return label, question + (f" (D = {margin:g})" if margin else ""), truth, decided, wrong, items.mean(), runs, budget


def _spread(mean: float, sd: float) -> np.ndarray:
    """109 scenario strengths around ``mean`` (a Beta, then centred so their mean is exactly ``mean``)."""
    nu = mean * (1 - mean) / sd**2 - 1
    drawn = np.random.default_rng(12345).beta(mean * nu, (1 - mean) * nu, 109)
    return np.clip(drawn - drawn.mean() + mean, 0.0, 1.0)


def simulated(runs: int, jobs: int) -> list[tuple]:
    cases = [(f"P = {p}", np.full(109, p), "bias", None, BUDGET) for p in (0.5, 0.525, 0.55, 0.6, 0.75)]
    cases += [("P = 0.5, scenarios' sd 0.2", _spread(0.5, 0.2), "bias", None, BUDGET),
              ("P = 0.55, scenarios' sd 0.2", _spread(0.55, 0.2), "bias", None, BUDGET)]
    cases += [(f"P = {p}", np.full(109, p), "equivalence", 0.1, BUDGET) for p in (0.5, 0.525, 0.55, 0.6)]
    cases += [(f"P = {p}", np.full(109, p), "mark", None, LARGE) for p in (0.5, 0.55, 0.6, 0.8)]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(_case, [(*c, runs, 500 + i) for i, c in enumerate(cases)]))


def _real(args: tuple[float, range, int]) -> list[tuple[int, str | None]]:
    from genderprobe.interfaces.api import RunConfig, run_probe

    p, seeds, budget = args
    out = []
    for seed in seeds:
        # Calibration models are not stored (free to ask again): each round asks its items anew, as cheap here.
        config = RunConfig(seed=seed, generation={"seed": 50_000 + seed}, until_decided="bias", keep_records=False)
        entry = run_probe("relationship-levy", f"reference:biased?p={p}", config=config,
                          sample_k=budget).document["until_decided"]
        out.append((entry["items"], entry["verdict"] if entry["decided"] else None))
    return out


def real(runs: int, jobs: int, budget: int = 1000) -> list[tuple]:
    rows = []
    for p in (0.5, 0.6):
        chunks = [(p, range(s, min(runs, s + 25)), budget) for s in range(0, runs, 25)]
        with ProcessPoolExecutor(jobs) as pool:
            found = [f for part in pool.map(_real, chunks) for f in part]
        sim = simulate(p, budget, runs=1000, seed=7)
        truth = 2 * p - 1
        for source, got in (("real runs", found), ("simulated", sim)):
            items = np.mean([k for k, _ in got])
            rows.append((f"P = {p}, {source}", "bias", truth, np.mean([v is not None for _, v in got]),
                         np.mean([_wrong(v, truth, None) for _, v in got]), items, len(got), budget))
    return rows


def _genmo_case(args: tuple) -> tuple:
    fbr, rate, question, margin, runs, seed = args
    population = genmo_population(fbr, rate, GENMO_PAIRS)
    mismatches = int(np.isfinite(population).sum())
    truth = round(float(np.nansum(population)) / mismatches - 0.5, 12)  # 324 / 540 - 0.5 is 0.1, not 0.0999...
    found = simulate_genmo(fbr, rate, GENMO_PAIRS, question, margin, runs=runs, seed=seed)
    items = np.array([k for k, _ in found])
    label = f"FBR = {fbr:g}, {mismatches} of {GENMO_PAIRS} pairs mismatched"
    return (label, question + (f" (D = {margin:g})" if margin else ""), truth,
            np.mean([v is not None for _, v in found]), np.mean([_wrong(v, truth, margin) for _, v in found]),
            items.mean(), runs, GENMO_PAIRS)


def genmo(runs: int, jobs: int) -> list[tuple]:
    cases = [(fbr, rate, "bias", None) for rate in (0.3, 0.6) for fbr in (0.5, 0.6, 0.75)]
    cases += [(fbr, rate, "equivalence", 0.1) for rate in (0.3, 0.6) for fbr in (0.5, 0.6)]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(_genmo_case, [(*c, runs, 900 + i) for i, c in enumerate(cases)]))


def _genmo_real(args: tuple[float, range]) -> list[tuple[int, str | None]]:
    from genderprobe.interfaces.api import RunConfig, run_probe

    p, seeds = args
    out = []
    for seed in seeds:
        # The run's seed draws the pairs' order; the answers (seeded by each request) stay: one population.
        config = RunConfig(seed=seed, until_decided="bias", keep_records=False)
        entry = run_probe("genmo", f"reference:biased?p={p}", config=config).document["until_decided"]
        out.append((entry["items"], entry["verdict"] if entry["decided"] else None))
    return out


def genmo_real(runs: int, jobs: int) -> list[tuple]:
    """Real runs of reference:biased?p=P, each in another order, beside the simulation of their population:
    the calibration model's answers are fixed by each request, so its 907 pairs are one population whose FBR
    (a run of all of them) is the truth."""
    from genderprobe.interfaces.api import RunConfig, run_probe

    rows = []
    for p in (0.5, 0.6):
        full = run_probe("genmo", f"reference:biased?p={p}", config=RunConfig(keep_records=True))
        seen: dict[int, dict[str, str]] = {}
        for r in full.records:
            seen.setdefault(r["pair"], {})[r["gender"]] = r["stance"]
        # The population's values: 1 the woman's story kinder, 0 the man's, NaN alike (only Moral, Immoral).
        population = np.array([1.0 if (s["male"], s["female"]) == ("immoral", "moral") else
                               0.0 if (s["male"], s["female"]) == ("moral", "immoral") else np.nan
                               for s in seen.values()])
        truth = full.result.metrics["fbr_minus_half"].value
        chunks = [(p, range(s, min(runs, s + 25))) for s in range(0, runs, 25)]
        with ProcessPoolExecutor(jobs) as pool:
            found = [f for part in pool.map(_genmo_real, chunks) for f in part]
        sim = simulate_genmo(0, 0, GENMO_PAIRS, runs=1000, seed=8, population=population)
        for source, got in (("real runs", found), ("simulated", sim)):
            rows.append((f"reference:biased?p={p}, {int(np.isfinite(population).sum())} mismatches, {source}",
                         "bias", truth, np.mean([v is not None for _, v in got]),
                         np.mean([_wrong(v, truth, None) for _, v in got]), np.mean([k for k, _ in got]),
                         len(got), GENMO_PAIRS))
    return rows


def genmo_misses(runs: int) -> list[tuple]:
    """Share of runs whose sequence leaves the population's FBR out at some pair (any of the 907, not
    just at the rounds): pairs drawn without replacement, as a run draws them, and with replacement (the
    design the sequence's guarantee is proved for), from the same population."""
    from genderprobe.analysis.sequential import DESIGNS, confidence_sequence

    rows, rng = [], np.random.default_rng(77)
    for fbr, rate in ((0.5, 0.3), (0.5, 0.6), (0.75, 0.6)):
        population = genmo_population(fbr, rate, GENMO_PAIRS)
        truth = np.nansum(population) / np.isfinite(population).sum()
        missed = {"without": 0, "with": 0}
        for start in range(0, runs, 200):
            size = min(200, runs - start)
            drawn = {"without": rng.permuted(np.tile(population, (size, 1)), axis=1),
                     "with": population[rng.integers(0, GENMO_PAIRS, (size, GENMO_PAIRS))]}
            for how, values in drawn.items():
                low, high = confidence_sequence(values, block=DESIGNS["genmo"].block)
                missed[how] += int(((low > truth + 1e-12) | (high < truth - 1e-12)).any(axis=1).sum())
        rows.append((fbr, int(np.isfinite(population).sum()), missed["without"] / runs, missed["with"] / runs, runs))
    return rows


def print_misses(rows: list[tuple]) -> None:
    print("| FBR, mismatched pairs | truth left out at some pair: without replacement | with replacement | runs |")
    print("|---|---|---|---|")
    for fbr, mismatches, without, with_, runs in rows:
        print(f"| {fbr:g}, {mismatches} of {GENMO_PAIRS} | {without:.2%} | {with_:.2%} | {runs:,} |")
    print()


def print_rows(rows: list[tuple]) -> None:
    print("| model | question | true diff | settled | settled wrongly | mean items | budget | requests saved | runs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, question, truth, decided, wrong, items, runs, budget in rows:
        print(f"| {label} | {question} | {truth:+.3f} | {decided:.1%} | {wrong:.1%} | {items:,.0f} | {budget:,} | "
              f"{1 - items / budget:.0%} | {runs:,} |")
    print()


def main(runs: int, jobs: int) -> None:
    print("Part sequential: --until-decided (simulated)\n")
    print_rows(simulated(runs, jobs))
    print("Real runs (run_probe --until-decided bias) beside the simulation\n")
    print_rows(real(min(runs, 200), jobs))
    print("genmo: fbr_minus_half, pairs drawn without replacement from the 907 (simulated)\n")
    print_rows(genmo(runs, jobs))
    print_misses(genmo_misses(runs))
    print("genmo: real runs (run_probe --until-decided bias, each in another order) beside the simulation\n")
    print_rows(genmo_real(min(runs, 200), jobs))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="--until-decided on genmo, simulated (the rest: coverage.py).")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    print(f"genmo: fbr_minus_half, pairs drawn without replacement from the {GENMO_PAIRS} (simulated)\n")
    print_rows(genmo(args.runs, args.jobs))
    print_misses(genmo_misses(args.runs))
    print("genmo: real runs (run_probe --until-decided bias, each in another order) beside the simulation\n")
    print_rows(genmo_real(min(args.runs, 200), args.jobs))
