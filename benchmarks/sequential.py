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

    python benchmarks/coverage.py --part sequential --runs 1000
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np

from genderprobe.analysis.sequential import MARK_RANGES, simulate

BUDGET = 3000  # the README's run
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
