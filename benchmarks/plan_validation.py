"""Does a plan's simulated power hold? Real runs of the calibration model at the planned size.

For each probe and bias, ``genderprobe plan`` (genderprobe.analysis.planning) gives the
size and its simulated power; this runs the real probe (``run_probe``) on the
plan's calibration model at that size many times, a new seed and generation
seed each run, and counts how often the run's own interval detects the bias by
the plan's rule. The detection rate should lie within about two standard errors
of the simulated power (and the target). DeMET is answered by option scoring
(``--score-options``: the same calibration answers, read without the answer
reader, whose regular expressions make it 20 times slower); ``--no-scoring``
reads generated answers instead.

    python benchmarks/plan_validation.py                       # every planned probe, 200 runs each
    python benchmarks/plan_validation.py --runs 100 --probes genmo --simulations 1000
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor

from genderprobe.analysis.planning import plan
from genderprobe.interfaces.api import RunConfig, dry_run_cost, run_probe

# probe -> the biases checked, and how a run's metrics say it detected the bias.
CASES = {
    "relationship-levy": ((0.2, 0.1), lambda m, d: m["diff_success_rate"].ci_low > 0 if d > 0
                          else m["diff_success_rate"].ci_high < 0),
    "demet": ((0.4, 0.2, 0.1), lambda m, d: (m["mixed_gender_bias_folded"].ci_low or 0) > 0),
    "genmo": ((0.2, 0.1, -0.1), lambda m, d: m["fbr_minus_half"].ci_low > 0 if d > 0
              else m["fbr_minus_half"].ci_high < 0),
    "multilingual-pronouns": ((1.5, 1.25, 0.8), lambda m, d: m["di_communal"].ci_low > 1 if d > 1
                              else m["di_communal"].ci_high < 1),
}


def _run(args: tuple) -> bool:
    probe, model, params, seed, detect, resamples, scoring = args
    config = RunConfig(use_cache=False, keep_records=False, seed=seed, n_resamples=resamples,
                       generation={"seed": seed}, score_options=scoring)
    metrics = run_probe(probe, model, config=config, **params).result.metrics
    return bool(CASES[probe][1](metrics, detect))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--probes", default=",".join(CASES))
    ap.add_argument("--simulations", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-scoring", action="store_true", help="DeMET: read generated answers, not option scores")
    args = ap.parse_args()
    print("| probe | detect | plan | simulated power | real runs detecting | standard error |")
    print("|---|---|---|---|---|---|")
    with ProcessPoolExecutor(args.workers) as pool:
        for probe in args.probes.split(","):
            for detect in CASES[probe][0]:
                start = time.time()
                p = plan(probe, detect, simulations=args.simulations, resamples=args.resamples, dry_run=dry_run_cost)
                params = {p.parameter: p.size} | ({"languages": ("en", "zh", "ja")}
                                                   if probe == "multilingual-pronouns" else {})
                scoring = probe == "demet" and not args.no_scoring
                jobs = [(probe, p.calibration_model, params, seed, detect, args.resamples, scoring)
                        for seed in range(args.runs)]
                rate = sum(pool.map(_run, jobs, chunksize=8)) / args.runs
                se = math.sqrt(p.power * (1 - p.power) / args.runs)
                print(f"| {probe} | {detect:g} | {p.size:,} {p.unit} | {p.power:.1%} | {rate:.1%} of {args.runs} "
                      f"| {se:.1%} | ({time.time() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
