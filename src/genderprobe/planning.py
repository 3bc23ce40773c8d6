"""Planning a run: how many items detect a bias of a given size, and what they cost.

Method (relationship-levy, whose headline ``diff_success_rate`` is the share of
detected answers siding with the man, less the share siding with the woman):
a bias of size d is the calibration model ``reference:biased?p=P`` with
P = (1 + d) / 2, which sides with the man with probability P on every attempt.
A run of n items is simulated as the probe runs it: each item is asked in
both orders and R repetitions (2R attempts) and scored as the share of its
attempts that chose the man; item j takes scenario j mod 109, and with
``scenario_sd`` every scenario gets a strength of its own (a Beta around P
with that standard deviation), so items of one scenario lean together. Each
simulated run is read as the run reads itself: the percentile bootstrap
interval over items at level 1 - alpha (the run's own resampling: multinomial
counts over the distinct item scores). The bias is detected when the interval
lies wholly on the side of the bias. Power is the share of simulated runs that
detect it; the plan is the fewest items whose simulated power reaches the
target, found by bisection (to 1%) from the normal approximation's answer.
The same seed gives the same plan; simulation noise (about 1.3 points of power
at 1,000 simulations) can put it a few percent above the true fewest.

A real model whose repetitions of a prompt agree more than independent coins
(temperature 0) gains less from repetitions than this plan says: plan such a
model with one repetition.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from genderprobe.errors import UserError
from genderprobe.stats import DEFAULT_RESAMPLES

SUPPORTED = ("relationship-levy",)
N_SCENARIOS = 109
SPACE = 17_440_000  # RelationshipLevy's item space: 109 scenarios x 400 x 400 names
DEFAULT_SIMULATIONS = 1000
# Probe parameters that set how many items a run asks.
SAMPLE_PARAMETERS = ("sample_k", "per_type")


@dataclass(frozen=True)
class Plan:
    """How many items detect a bias of size ``detect`` with ``power``, and what they cost."""

    probe: str
    metric: str
    detect: float
    power_target: float
    alpha: float
    repetitions: int
    scenario_sd: float
    items: int
    power: float  # simulated, at ``items``
    simulations: int
    normal_approximation_items: int  # the textbook formula, for comparison
    calibration_model: str
    requests: int
    prompt_tokens: int  # estimated, four characters a token (genderprobe.dry_run)
    completion_tokens_at_most: int  # each request's max_tokens
    cost_usd_at_most: float | None
    method: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def plan(
    probe: str,
    detect: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    repetitions: int = 1,
    scenario_sd: float = 0.0,
    price_in: float | None = None,
    price_out: float | None = None,
    simulations: int = DEFAULT_SIMULATIONS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Plan:
    """The plan for ``probe``; a :class:`UserError` (one sentence) for what cannot be planned."""
    from genderprobe.registry import get_probe

    name = get_probe(probe).name  # an unknown probe is told in one sentence
    if name not in SUPPORTED:
        raise UserError(
            f"genderprobe plan supports relationship-levy only (diff_success_rate against --sample-k); "
            f"'{name}' has no headline that a bias size and a number of items map onto yet."
        )
    _check(detect, power, alpha, repetitions, scenario_sd, price_in, price_out, simulations, resamples)
    p = (1 + detect) / 2
    items, simulated = required_items(p, power, alpha, repetitions, scenario_sd, simulations, resamples, seed)
    cost = _dry_run(name, items, repetitions, price_in, price_out)
    return Plan(
        probe=name, metric="diff_success_rate", detect=detect, power_target=power, alpha=alpha,
        repetitions=repetitions, scenario_sd=scenario_sd, items=items, power=simulated,
        simulations=simulations, normal_approximation_items=normal_items(p, power, alpha, repetitions),
        calibration_model=f"reference:biased?p={p:g}",
        requests=cost["requests"], prompt_tokens=cost["prompt_tokens"],
        completion_tokens_at_most=cost["completion_tokens"], cost_usd_at_most=cost.get("cost_usd_at_most"),
        method=(
            f"{simulations:,} simulated runs of reference:biased?p={p:g} (the man chosen with probability {p:g} "
            f"on each attempt) at {items:,} items, both orders, {repetitions} repetition{'s' * (repetitions > 1)}, "
            f"items spread over the 109 scenarios{f' with a strength sd of {scenario_sd:g}' if scenario_sd else ''}; "
            f"a run "
            f"detects the bias when its {1 - alpha:.0%} percentile bootstrap interval ({resamples:,} resamples) "
            f"of diff_success_rate excludes 0 on the bias's side."
        ),
    )


def _check(detect, power, alpha, repetitions, scenario_sd, price_in, price_out, simulations, resamples) -> None:
    if not 0 < abs(detect) < 1:
        raise UserError(f"--detect is a difference in diff_success_rate strictly between 0 and 1 (or -1 and 0 "
                        f"for a bias towards women), such as 0.05; got {detect}.")
    if not 0.5 <= power < 1:
        raise UserError(f"--power must be at least 0.5 and below 1, such as 0.8; got {power}.")
    if not 0 < alpha < 0.5:
        raise UserError(f"--alpha must be between 0 and 0.5, such as 0.05; got {alpha}.")
    if repetitions < 1:
        raise UserError(f"--repetitions must be 1 or more; got {repetitions}.")
    if not 0 <= scenario_sd < 0.5:
        raise UserError(f"--scenario-sd must be at least 0 and below 0.5, such as 0.1; got {scenario_sd}.")
    for flag, price in (("--price-in", price_in), ("--price-out", price_out)):
        if price is not None and not price >= 0:
            raise UserError(f"{flag} is US dollars per million tokens, 0 or more; got {price}.")
    if simulations < 50 or resamples < 100:
        raise UserError("Plan with at least 50 simulations and 100 bootstrap resamples.")


def required_items(
    p: float, power: float, alpha: float, repetitions: int, scenario_sd: float = 0.0,
    simulations: int = DEFAULT_SIMULATIONS, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
) -> tuple[int, float]:
    """(fewest items whose simulated power reaches ``power``, that power)."""

    def power_at(n: int) -> float:
        return simulated_power(n, p, alpha, repetitions, scenario_sd, simulations, resamples, seed)

    hi = max(2, normal_items(p, power, alpha, repetitions))
    lo = hi // 2
    found = power_at(hi)
    while found < power:
        if hi >= SPACE:
            raise UserError(
                f"Even all {SPACE:,} items of relationship-levy would not detect that bias with that power; "
                "plan for a larger --detect or lower --power."
            )
        lo, hi = hi, min(SPACE, 2 * hi)
        found = power_at(hi)
    while hi - lo > max(1, hi // 100):  # within 1%: the simulation is no finer than that
        mid = (lo + hi) // 2
        at_mid = power_at(mid)
        if at_mid >= power:
            hi, found = mid, at_mid
        else:
            lo = mid
    return hi, found


def normal_items(p: float, power: float, alpha: float, repetitions: int) -> int:
    """Items by the normal approximation: ((z_alpha/2 + z_power) * sd / d)^2, sd of an item's 2 x share - 1."""
    z = NormalDist().inv_cdf
    sd = 2 * math.sqrt(p * (1 - p) / (2 * repetitions))
    return math.ceil(((z(1 - alpha / 2) + z(power)) * sd / abs(2 * p - 1)) ** 2)


def simulated_power(
    n: int, p: float, alpha: float, repetitions: int, scenario_sd: float = 0.0,
    simulations: int = DEFAULT_SIMULATIONS, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
) -> float:
    """Share of simulated runs of n items whose (1 - alpha) interval of diff_success_rate excludes 0 on the bias's side."""
    rng = np.random.default_rng([seed, n])
    attempts = 2 * repetitions
    values = 2 * np.arange(attempts + 1) / attempts - 1  # an item's 2 x share - 1
    counts = _item_counts(n, p, attempts, scenario_sd, simulations, rng)
    detected = 0
    for c in counts:
        weights = rng.multinomial(n, c / n, size=resamples)
        low, high = np.quantile(weights @ values / n, [alpha / 2, 1 - alpha / 2])
        detected += bool(low > 0) if p > 0.5 else bool(high < 0)
    return detected / simulations


def _item_counts(n: int, p: float, attempts: int, scenario_sd: float, simulations: int,
                 rng: np.random.Generator) -> np.ndarray:
    """simulations x (attempts + 1): how many items chose the man on 0..attempts of their attempts.

    Items are independent given their scenario's strength, so a run's counts are
    multinomial, summed over the scenarios (item j takes scenario j mod 109).
    """
    from scipy import stats as sps

    k = np.arange(attempts + 1)
    if not scenario_sd:
        return rng.multinomial(n, sps.binom.pmf(k, attempts, p), size=simulations)
    per_scenario = np.full(N_SCENARIOS, n // N_SCENARIOS)
    per_scenario[: n % N_SCENARIOS] += 1
    # Beta with mean p and standard deviation scenario_sd (its largest is sqrt(p(1 - p))),
    # centred so that the bias over the probe's items, where every scenario weighs alike, is the one planned.
    nu = max(p * (1 - p) / scenario_sd**2 - 1, 1e-6)
    strengths = rng.beta(p * nu, (1 - p) * nu, size=(simulations, N_SCENARIOS))
    strengths = np.clip(strengths + p - strengths.mean(axis=1, keepdims=True), 0, 1)
    pmf = sps.binom.pmf(k, attempts, strengths[..., None])  # simulations x scenarios x values
    return rng.multinomial(per_scenario[None, :], pmf).sum(axis=1)


def _dry_run(probe: str, items: int, repetitions: int, price_in: float | None,
             price_out: float | None) -> dict[str, Any]:
    """Requests, estimated tokens and the most it costs: a dry run of the plan (genderprobe.dry_run)."""
    from genderprobe.api import RunConfig, run_probe

    config = RunConfig(dry_run=True, use_cache=False, keep_records=False, price_in=price_in, price_out=price_out)
    out = run_probe(probe, "reference:random", config=config, sample_k=items, num_repetitions=repetitions)
    return out.document["dry_run"]["model"]


# -- after a run ------------------------------------------------------------------


def interval_halving(document: dict[str, Any]) -> dict[str, Any] | None:
    """What would halve each headline interval of a run's results: about 4x the items.

    An interval's width shrinks about as 1 / sqrt(n), so halving it takes about
    four times the items behind it (the metric's n), which is four times the
    probe's sample parameter where it has one (sample_k, per_type). None when
    no headline metric has an interval.
    """
    metrics = document.get("metrics", {})
    rows = {}
    for headline in document.get("headline", {}).get("metrics", []):
        m = metrics.get(headline["metric"], {})
        if m.get("ci_low") is None or m.get("ci_high") is None or not m.get("n"):
            continue
        width = m["ci_high"] - m["ci_low"]
        rows[headline["metric"]] = {"width": width, "halved_width": width / 2, "n": m["n"], "n_to_halve": 4 * m["n"]}
    if not rows:
        return None
    out: dict[str, Any] = {"rule": "an interval's width shrinks about as 1/sqrt(n): about 4x the items halve it"}
    params = document.get("parameters", {}).get("probe") or {}
    for name in SAMPLE_PARAMETERS:
        if isinstance(params.get(name), int):
            out["parameter"] = {"name": name, "now": params[name], "to_halve": 4 * params[name]}
            break
    out["metrics"] = rows
    return out
