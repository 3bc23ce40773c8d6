"""How often masculine_rate's jackknife interval holds a fair coin's 0.5, with the design's degrees of
freedom (clusters less strata) and with Satterthwaite's (issue 44; docs/statistics.md, "A mean of group
means").

GestCreative's own item draws (``sample_items`` of its 3,565 GEST sentences, seeded by the run), each
sentence's four stories a Binomial(4, 1/2) share of men, as ``reference:random`` answers; the interval is
the package's (``delete_cluster_values``, ``cluster_strata``, ``jackknife_interval``) on the calculator's
shape of columns. Whole runs of the probe give the same intervals (benchmarks/abs_zero_coverage.py runs
them, at one size); this isolates the interval, so thousands of runs at several sizes take a minute.

    python benchmarks/jackknife_df.py --runs 4000 --sizes 40 80 200
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np

from genderprobe.analysis.genderbench_stats import sample_items
from genderprobe.analysis.jackknife import cluster_strata, delete_cluster_values, jackknife_interval
from genderprobe.studies.gest_creative.probe import N_ITEMS, STEREOTYPES, items

GROUPS = len(STEREOTYPES)


def masculine_rate(s: np.ndarray) -> np.ndarray:
    """Summed columns (read in stereotype k, score in k) -> the mean over the stereotypes of their means."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a stereotype with no sentence drawn is NaN
        return np.nanmean(s[:, GROUPS:] / s[:, :GROUPS], axis=1)


def coverage(runs: int, size: int, design_df: bool, rng_seed: int = 7) -> tuple[float, float]:
    """Share of runs whose interval holds 0.5, and the mean width."""
    stereotypes = np.array([it.stereotype for it in items()]) - 1
    rng = np.random.default_rng(rng_seed)
    held, widths = 0, []
    for run in range(runs):
        group = stereotypes[sample_items(N_ITEMS, size, run)]
        counts = np.zeros((size, 2 * GROUPS))
        counts[np.arange(size), group] = 1
        counts[np.arange(size), GROUPS + group] = rng.binomial(4, 0.5, size) / 4
        point = float(masculine_rate(counts.sum(axis=0, keepdims=True))[0])
        sentences = np.arange(size)
        est = jackknife_interval(point, delete_cluster_values(counts, masculine_rate, sentences),
                                 cluster_strata(sentences, group), size, bounds=(0.0, 1.0), null=0.5,
                                 design_df=design_df)
        held += est.ci_low <= 0.5 <= est.ci_high
        widths.append(est.ci_high - est.ci_low)
    return held / runs, float(np.mean(widths))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=4000)
    ap.add_argument("--sizes", type=int, nargs="+", default=[40, 80, 200])
    args = ap.parse_args()
    print(f"{'sentences':>9} {'df':>14} {'holds 0.5':>16} {'mean width':>10}")
    for size in args.sizes:
        for design_df in (True, False):
            share, width = coverage(args.runs, size, design_df)
            half = 1.96 * math.sqrt(share * (1 - share) / args.runs)
            print(f"{size:>9} {'clusters-groups' if design_df else 'Satterthwaite':>14} "
                  f"{share:>9.1%} ±{half:.1%} {width:>10.4f}")


if __name__ == "__main__":
    main()
