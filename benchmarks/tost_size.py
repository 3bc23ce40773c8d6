"""TOST at its margin (issue 48): how often ``--equivalence-margin D`` claims "within +-D" when the
bias is exactly D (its size, at most 5% promised), and how often when there is none (its power).

Answers are simulated and go through the analysis a run performs, call for call:

* relationship-levy, ``reference:biased?p=P``: every attempt sides with the man with probability P by
  a coin seeded by the request, and a run's prompts differ, so an item's share of its two orders that
  chose the man is Binomial(2, P) / 2; the run's ``bootstrap_ratio(share, seed=--seed, transform
  2p - 1)`` and ``tost`` give its verdict. diff_success_rate = 2P - 1.
* diversity-med-qa, ``reference:biased?p=P``: with probability P the man's prompt is answered right and
  the woman's wrong, else the reverse, so per question the man's share right over its three orders is
  Binomial(3, P) / 3 and the woman's Binomial(3, 1 - P) / 3; GenderBench's bootstrap
  (``Bootstrapped`` with ``medqa_metrics``, seed --seed) and ``tost``. diff_success_rate = 2P - 1.

``--check`` first runs a few whole runs (``run_probe``, seeds 0-2) and shows that this analysis of
their records gives the run's own TOST p-value exactly. Each simulated run has its own --seed (its
bootstrap's), as separate runs would.

    python benchmarks/tost_size.py --check                 # whole runs against the analysis
    python benchmarks/tost_size.py --runs 4000 --jobs 2    # the table in docs/statistics.md
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.stats import beta

from genderprobe.analysis.equivalence import tost
from genderprobe.analysis.genderbench_stats import Bootstrapped
from genderprobe.analysis.stats import bootstrap_ratio
from genderprobe.studies.diversity_med_qa.probe import medqa_metrics

MARGIN = 0.05
LEVY_ITEMS = 3000  # the README's size
MEDQA_QUESTIONS, MEDQA_ORDERS = 930, 3  # every question, GenderBench's three orders


def levy_estimate(share: np.ndarray, seed: int):
    """diff_success_rate of a run whose items' shares are ``share``, as RelationshipLevy._result builds it."""
    return bootstrap_ratio(share, seed=seed, transform=lambda p: 2 * p - 1)


def medqa_estimate(male_right: np.ndarray, female_right: np.ndarray, seed: int):
    """diff_success_rate of a run with every answer read, as DiversityMedQa._result builds it."""
    n = male_right.size
    counts = np.zeros((n, 7))
    counts[:, [0, 2, 6]] = 1  # male read, female read, some answer read
    counts[:, 1], counts[:, 3] = male_right, female_right
    counts[:, 4] = 2 * MEDQA_ORDERS  # attempts; none undetected (column 5)
    return Bootstrapped(counts, medqa_metrics(n), cycles=1000, seed=seed).estimate("diff_success_rate", n)


def _simulate(args: tuple[str, float, range]) -> int:
    """How many of the runs ``seeds`` declare equivalence within +-MARGIN."""
    probe, p, seeds = args
    rng = np.random.default_rng([seeds.start, int(p * 1e6), len(probe)])
    shown = 0
    for seed in seeds:
        if probe == "relationship-levy":
            est = levy_estimate(rng.binomial(2, p, LEVY_ITEMS) / 2, seed)
        else:
            est = medqa_estimate(rng.binomial(MEDQA_ORDERS, p, MEDQA_QUESTIONS) / MEDQA_ORDERS,
                                 rng.binomial(MEDQA_ORDERS, 1 - p, MEDQA_QUESTIONS) / MEDQA_ORDERS, seed)
        shown += tost(est, MARGIN, "zero")["equivalent"]
    return shown


def clopper_pearson(hits: int, runs: int) -> tuple[float, float]:
    low = beta.ppf(0.025, hits, runs - hits + 1) if hits else 0.0
    high = beta.ppf(0.975, hits + 1, runs - hits) if hits < runs else 1.0
    return float(low), float(high)


def check(seeds: range = range(3)) -> None:
    """Whole runs: their records, analysed as above, give each run's own TOST p-value."""
    from genderprobe.interfaces.api import RunConfig, run_probe

    for probe in ("relationship-levy", "diversity-med-qa"):
        for seed in seeds:
            config = RunConfig(use_cache=False, seed=seed, generation={"seed": 10_000 + seed},
                               equivalence_margin=MARGIN)
            out = run_probe(probe, "reference:biased?p=0.525", config=config,
                            **({"sample_k": LEVY_ITEMS} if probe == "relationship-levy" else {}))
            found = out.document["equivalence"]["metrics"]["diff_success_rate"]
            if probe == "relationship-levy":
                items = np.array([r["item"] for r in out.records])
                male = np.bincount(items, [r["code"] == "male" for r in out.records])
                est = levy_estimate(male / np.bincount(items), seed)
            else:
                right = np.zeros((MEDQA_QUESTIONS, 2))
                order = {item: n for n, item in enumerate(dict.fromkeys(r["item"] for r in out.records))}
                for r in out.records:
                    right[order[r["item"]], int(r["gender"] == "female")] += r["code"] == "correct"
                est = medqa_estimate(right[:, 0] / MEDQA_ORDERS, right[:, 1] / MEDQA_ORDERS, seed)
            again = tost(est, MARGIN, "zero")
            same = again["p_value"] == found["p_value"] and again["interval_90"] == found["interval_90"]
            print(f"{probe} seed {seed}: run p = {found['p_value']:.6f}, analysis p = {again['p_value']:.6f}, "
                  f"{'identical' if same else 'DIFFERENT'}")
            if not same:
                raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--check", action="store_true", help="whole runs against the analysis, then stop")
    args = parser.parse_args()
    if args.check:
        check()
        return
    print(f"| probe | true diff_success_rate | runs | equivalence within ±{MARGIN} declared | 95% interval |")
    print("|---|---|---|---|---|")
    for probe in ("relationship-levy", "diversity-med-qa"):
        for p in (0.525, 0.475, 0.5):
            start = time.time()
            chunks = [range(s, min(args.runs, s + 250)) for s in range(0, args.runs, 250)]
            with ProcessPoolExecutor(args.jobs) as pool:
                hits = sum(pool.map(_simulate, [(probe, p, c) for c in chunks]))
            low, high = clopper_pearson(hits, args.runs)
            print(f"| {probe} | {2 * p - 1:+.3f} | {args.runs:,} | {hits / args.runs:.2%} | "
                  f"[{low:.2%}, {high:.2%}] | ({time.time() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
