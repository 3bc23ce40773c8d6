"""Why a fair coin's run family needed the bootstrap-t and a seed per group (issue 31; docs/statistics.md).

    python benchmarks/family_studentizing.py --part tails     # 20 million groups' statistics (seconds)
    python benchmarks/family_studentizing.py --part single    # one group's test, 100,000 groups a size (2 min)
    python benchmarks/family_studentizing.py --part binary    # single yes/no answers per item (1 min)
    python benchmarks/family_studentizing.py --part seeds     # whole simulated runs, 10,000 a mode (8 min)

Fair-coin items as RelationshipLevy's: each item's share of its two answers
that chose the man, 0, 1/2 or 1, read as diff = 2 x share - 1 and tested
against 0.

* tails: how much heavier than a normal the tails of |estimate| / se are once
  read through Student's t (the reading before the bootstrap-t), se the
  plug-in spread with a bootstrap's noise.
* single: one group's test at p <= 1/1001, 2/1001, 5/1001 and 10/1001 (B = 1,000), with
  one se for all draws and Student's t, and with each draw studentized by its
  own se (bootstrap-t).
* binary: the same two tests where each item is one yes/no answer.
* seeds: whole runs of 1,000 items in RelationshipLevy's breakdowns (8 topics, 2
  sources, 3 labels by scenario, 16 race pairings by item), through
  ``bootstrap_ratio`` and ``breakdown_tests``' own test and adjustment: the
  share of runs with any flag when every group is resampled from the run's seed
  and when each group has its own.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.special import ndtri, stdtr
from scipy.stats import norm

from genderprobe.analysis import breakdown_tests as bt
from genderprobe.analysis.stats import bootstrap_ratio, bootstrap_t, student_z, studentized

B = 1000
SHARES = np.array([0.0, 0.5, 1.0])
CHANCES = [0.25, 0.5, 0.25]


def _student_reading(t: np.ndarray, n: int) -> np.ndarray:
    return -ndtri(stdtr(n - 1, -(t * np.sqrt((n - 1) / n))))


def tails(seed: int = 1, groups: int = 20_000_000) -> None:
    rng = np.random.default_rng(seed)
    for n in (62, 190):
        c = rng.multinomial(n, CHANCES, size=groups)
        y = (c[:, 2] - c[:, 0]) / n
        se = np.sqrt(((c[:, 2] + c[:, 0]) / n - y**2) / n) * np.sqrt(rng.chisquare(B - 1, groups) / (B - 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = _student_reading(np.abs(y) / se, n)
        ratios = [f"{cut:g}: {(z > cut).mean() / (2 * norm.sf(cut)):.3f}" for cut in (2.5, 2.9, 3.1, 3.3)]
        print(f"{n} items, P(|t| > c) read through Student's t over the normal's: {', '.join(ratios)}")


def _one_group(rng: np.random.Generator, values: np.ndarray, chances: list[float], n: int):
    c = rng.multinomial(n, chances)
    e = bootstrap_ratio(np.repeat(values, c), n_resamples=B, seed=int(rng.integers(1 << 62)),
                        transform=lambda p: 2 * p - 1)
    if not e.se:
        return None
    t, draws = studentized(e.value, e.draws, 0.0)
    one_se = ((draws >= student_z(t, n) - 1e-12).sum())
    t, draws = bootstrap_t(e.value, e.se, e.draws, e.draws_se, 0.0)
    return one_se, (draws >= t - 1e-12).sum()


def _single_case(args: tuple[int, int, int, bool]) -> np.ndarray:
    n, groups, seed, binary = args
    rng = np.random.default_rng(seed)
    values, chances = (np.array([0.0, 1.0]), [0.5, 0.5]) if binary else (SHARES, CHANCES)
    beyond = np.zeros((2, 4))
    tested = 0
    for _ in range(groups):
        found = _one_group(rng, values, chances, n)
        if found is None:
            continue
        tested += 1
        for i, k in enumerate(found):
            beyond[i] += [k == 0, k <= 1, k <= 4, k <= 9]
    return beyond / tested


def single(jobs: int, binary: bool = False) -> None:
    sizes = ((30, 20_000), (100, 10_000)) if binary else ((45, 100_000), (62, 100_000))
    with ProcessPoolExecutor(jobs) as pool:
        found = list(pool.map(_single_case, [(n, g, 60 + i, binary) for i, (n, g) in enumerate(sizes)]))
    kind = "single yes/no answers" if binary else "three-valued shares"
    print(f"{kind}: share of groups with p <= 1/1001, 2/1001, 5/1001, 10/1001 (nominal 0.1%, 0.2%, 0.5%, 1.0%)")
    for (n, g), (old, new) in zip(sizes, found):
        show = lambda r: ", ".join(f"{x:.3%}" for x in r)  # noqa: E731
        print(f"  {n} items ({g:,} groups): one se, Student's t {show(old)}; bootstrap-t {show(new)}")


def _runs(args: tuple[int, int, bool]) -> list[bool]:
    start, stop, own_seeds = args
    out = []
    for s in range(start, stop):
        rng = np.random.default_rng(10_000 + s)
        share = rng.binomial(2, 0.5, 1000) / 2
        scenario = np.arange(1000) % 109
        dims = [(rng.integers(0, 8, 109)[scenario], 8), (rng.integers(0, 2, 109)[scenario], 2),
                (rng.integers(0, 3, 109)[scenario], 3), (rng.integers(0, 16, 1000), 16)]
        found = []
        for group, size in dims:
            for g in range(size):
                seed = int(rng.integers(1 << 30)) if own_seeds else s
                e = bootstrap_ratio(share[group == g], n_resamples=B, seed=seed, transform=lambda p: 2 * p - 1)
                p, how, _, stat, null_draws = bt._p(e, 0.0)
                if p is not None:
                    found.append(({"p": p}, how, stat, null_draws))
        bt._adjust(found, B)
        out.append(any(entry["flag"] for entry, *_ in found))
    return out


def seeds(jobs: int, runs: int = 10_000) -> None:
    with ProcessPoolExecutor(jobs) as pool:
        for own in (False, True):
            chunks = [(s, min(runs, s + 500), own) for s in range(0, runs, 500)]
            flagged = [f for part in pool.map(_runs, chunks) for f in part]
            mode = "a seed per group" if own else "every group from the run's seed"
            print(f"simulated 1,000-item runs, {mode}: any flag in {np.mean(flagged):.2%} of {runs:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("tails", "single", "binary", "seeds"), required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.part == "tails":
        tails()
    elif args.part == "seeds":
        seeds(args.jobs)
    else:
        single(args.jobs, binary=args.part == "binary")


if __name__ == "__main__":
    main()
