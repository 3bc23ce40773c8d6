"""Planning a run: how large a run detects a bias of a given size, and what it costs.

``genderprobe plan PROBE --detect D`` sizes the one parameter that sets the
probe's sample (relationship-levy's items, DeMET's filled scenarios per type,
GenMO's pairs, multilingual-pronouns' repetitions) so that a run detects a
bias of size D with the wanted power. A bias of size D is the calibration model
``reference:biased?p=P`` whose P gives the probe's headline the value D. The
probe's planner (a :class:`Planner` in its study's ``plan`` module, found by
:func:`genderprobe.registry.planners`) simulates runs of that model in the
probe's own design (both orders, repetitions, clustering by scenario) and reads
each as the run reads itself, by the probe's own interval: a run detects the
bias when its interval leaves the neutral value out on the bias's side, and
power is the share of simulated runs that do.

This module holds what every probe's plan shares: the search for the fewest
units whose power reaches the target (bisection to 1%, from the planner's
normal approximation), the cost of a dry run of the plan
(:mod:`genderprobe.engine.dry_run`, run by the caller's ``dry_run``), and, where even the largest run falls short, the
power there and the smallest bias that run detects. Simulations are seeded by
(seed, size): the same seed gives the same plan, and every bias tried at one
size sees the same draws, so power grows with the bias as it should. Noise of
about 1.3 points of power at 1,000 simulations can put a plan a few percent
above the true fewest. A size far from the plan's is decided by a pilot of a
fifth of the simulations, where that pilot puts its power well clear of the
target (3.29 standard errors: a wrong turn of the search in 0.1% of such
sizes); sizes near the target, and the size planned, whose power the plan
reports, are simulated in full, with the draws they always had.

After a run, :func:`interval_halving` says how many items would halve each
headline interval.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from genderprobe import steps
from genderprobe.analysis.stats import DEFAULT_RESAMPLES
from genderprobe.errors import UserError

DEFAULT_SIMULATIONS = 1000
# The search decides a size by a pilot of 1/PILOT_SHARE of the simulations (from PILOT_FROM of them) where
# the pilot's power is CLEAR_Z standard errors from the target (two-sided 0.1%); see _decided.
PILOT_SHARE, PILOT_FROM, CLEAR_Z = 5, 500, 3.29
# Probe parameters that set how many items a run asks.
SAMPLE_PARAMETERS = ("sample_k", "per_type")
# Steps of the bisection for the smallest bias the largest run detects: to 1/4096 of the range.
_BIAS_STEPS = 12
# (probe, its parameters, price in, price out) -> the dry run's requests, tokens and most cost.
DryRun = Callable[[str, dict[str, Any], float | None, float | None], dict[str, Any]]


@dataclass(frozen=True)
class Settings:
    """How the simulated runs are drawn and read."""

    power: float = 0.8
    alpha: float = 0.05
    simulations: int = DEFAULT_SIMULATIONS
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0

    def rng(self, size: int) -> np.random.Generator:
        # Keyed by the size alone: every bias tried at one size sees the same draws.
        return np.random.default_rng([self.seed, size])


@dataclass(frozen=True)
class Assumptions:
    """What a plan cannot know of the model or the run, as the user states it.

    Each planner reads only those it names in ``Planner.takes``; one set away
    from its default for a planner that does not read it is refused.
    """

    repetitions: int = 1  # attempts per prompt (relationship-levy)
    scenario_sd: float = 0.0  # how much the model's strength varies between scenarios (or words)
    mismatch_rate: float | None = None  # share of pairs whose two stances differ (genmo)
    scenarios: str | None = None  # the scenario set (demet)

    def given(self) -> list[str]:
        """The fields set away from their defaults."""
        return [f.name for f in fields(self) if getattr(self, f.name) != f.default]


FLAGS = {"repetitions": "--repetitions", "scenario_sd": "--scenario-sd", "mismatch_rate": "--mismatch-rate",
         "scenarios": "--scenarios"}


class Planner(ABC):
    """How one probe's runs are simulated; a study's ``plan`` module lists one per probe in ``PLANNERS``."""

    probe: str
    metric: str  # the headline metric a bias is detected in
    neutral: float = 0.0  # its value without bias
    bounds: tuple[float, float]  # --detect lies strictly between, and is not the neutral value
    detect_help: str  # what --detect is here, completing "--detect is ..." (one clause, no full stop)
    parameter: str  # the probe parameter the plan sizes
    flag: str  # its flag on ``genderprobe run``
    unit: str  # what that parameter counts, plural ("items", "pairs")
    takes: tuple[str, ...] = ()  # the Assumptions fields it reads
    normal_label = "normal approximation"  # what normal_size computes
    # False where the largest size is no run anyone makes (relationship-levy's 17,440,000
    # items): falling short of it is refused rather than planned at that size.
    largest_is_a_run: bool = True

    def __init__(self, assumptions: Assumptions):
        self.assumptions = assumptions

    @abstractmethod
    def sizes(self) -> range:
        """The values the parameter may take, smallest first."""

    @abstractmethod
    def power(self, size: int, detect: float, settings: Settings) -> float:
        """Share of simulated runs of this size that detect a bias of ``detect``."""

    def until_decided_saving(self, budget: int, detect: float, settings: Settings) -> dict[str, Any] | None:
        """What --until-decided bias would spend, with this budget, on the calibration model of a bias of
        ``detect`` (:func:`genderprobe.analysis.sequential.expected_saving`), where the probe can stop early."""
        return None

    @abstractmethod
    def calibration_model(self, size: int, detect: float) -> str:
        """The model spec whose real runs of this size the simulation stands for."""

    @abstractmethod
    def meaning(self, detect: float) -> str:
        """What a bias of ``detect`` is, in words (a clause for after the metric's value)."""

    @abstractmethod
    def method(self, size: int, detect: float, settings: Settings) -> str:
        """How the runs are simulated and read: sentences for the plan's Method line."""

    @abstractmethod
    def run_params(self, size: int) -> dict[str, Any]:
        """The probe parameters of the planned run (for its dry run and its command line)."""

    def normal_size(self, detect: float, settings: Settings) -> int | None:
        """A textbook formula's size, shown beside the simulation's and where the search starts."""
        return None

    def requests_note(self, size: int) -> str:
        """How the requests come about, e.g. "both orders x 1 repetition"."""
        return ""

    def check(self, detect: float) -> None:
        low, high = self.bounds
        if not (low < detect < high) or detect == self.neutral:
            raise UserError(f"--detect is {self.detect_help}; got {detect:g}.")


@dataclass(frozen=True)
class Plan:
    """The run that detects a bias of size ``detect`` with ``power_target``, and what it costs.

    Where no run of the probe reaches the power (``reached`` false), ``size`` is
    the largest run, ``power`` its power and ``smallest_detectable`` the smallest
    bias it detects with the target power (None when none the calibration model
    can express).
    """

    probe: str
    metric: str
    neutral: float
    signed: bool  # whether a bias has a side, shown by its sign (not for an absolute metric or a ratio)
    detect: float
    meaning: str
    power_target: float
    alpha: float
    parameter: str
    flag: str
    unit: str
    size: int
    power: float  # simulated, at ``size``
    reached: bool
    smallest_detectable: float | None
    normal_approximation: int | None  # the planner's textbook formula, for comparison
    normal_label: str  # what that formula is
    simulations: int
    resamples: int
    calibration_model: str
    assumptions: dict[str, Any]
    requests: int
    requests_note: str
    prompt_tokens: int  # estimated, four characters a token (genderprobe.engine.dry_run)
    completion_tokens_at_most: int  # each request's max_tokens
    cost_usd_at_most: float | None
    method: str
    run_command: str
    # What --until-decided bias would spend with the plan's size, and four times it, as its budget.
    until_decided: list[dict[str, Any]] | None = None

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
    mismatch_rate: float | None = None,
    scenarios: str | None = None,
    price_in: float | None = None,
    price_out: float | None = None,
    simulations: int = DEFAULT_SIMULATIONS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    dry_run: DryRun,
) -> Plan:
    """The plan for ``probe``; a :class:`UserError` (one sentence) for what cannot be planned.

    ``dry_run`` counts the planned run's requests, tokens and cost
    (:func:`genderprobe.interfaces.api.dry_run_cost`): the caller passes it, so
    that planning needs nothing of the API that runs probes.
    """
    settings = Settings(power, alpha, simulations, resamples, seed)
    _check(settings, repetitions, scenario_sd, mismatch_rate, price_in, price_out)
    planner = get_planner(probe, Assumptions(repetitions, scenario_sd, mismatch_rate, scenarios))
    planner.check(detect)
    with steps.step(f"planning {planner.probe}"):
        size, found, reached = fewest(planner, detect, settings)
        smallest = None if reached else smallest_detectable(planner, size, detect, settings)
        params = planner.run_params(size)
        with steps.step("counting the planned run's requests"):
            cost = dry_run(planner.probe, params, price_in, price_out)
        saving = _until_decided(planner, size, detect, settings)
    return Plan(
        probe=planner.probe, metric=planner.metric, neutral=planner.neutral,
        signed=planner.bounds[0] < planner.neutral == 0, detect=detect, meaning=planner.meaning(detect),
        power_target=power, alpha=alpha, parameter=planner.parameter, flag=planner.flag, unit=planner.unit,
        size=size, power=found, reached=reached, smallest_detectable=smallest,
        normal_approximation=planner.normal_size(detect, settings),
        normal_label=planner.normal_label, simulations=simulations, resamples=resamples,
        calibration_model=planner.calibration_model(size, detect),
        assumptions={k: getattr(planner.assumptions, k) for k in planner.takes},
        requests=cost["requests"], requests_note=planner.requests_note(size), prompt_tokens=cost["prompt_tokens"],
        completion_tokens_at_most=cost["completion_tokens"], cost_usd_at_most=cost.get("cost_usd_at_most"),
        method=planner.method(size, detect, settings), run_command=_command(planner.probe, params),
        until_decided=saving,
    )


def _until_decided(planner: Planner, size: int, detect: float, settings: Settings) -> list[dict[str, Any]] | None:
    """The expected saving of --until-decided bias on the plan's calibration model, with the planned size
    as its budget and with four times it (the sequence, valid at every round, is wider than one interval
    at a fixed size, so it needs a larger budget to settle as often)."""
    largest = planner.sizes()[-1]
    found = []
    for budget in dict.fromkeys((size, min(4 * size, largest))):
        with steps.step(f"simulating --until-decided with a budget of {budget:,} {planner.unit}"):
            found.append(planner.until_decided_saving(budget, detect, settings))
    return None if None in found else found


def get_planner(probe: str, assumptions: Assumptions = Assumptions()) -> Planner:
    """The probe's planner, or a :class:`UserError` saying in one sentence why it has none."""
    from genderprobe.registry import get_probe, planners

    cls = get_probe(probe)  # an unknown probe is told in one sentence
    found = planners().get(cls.name)
    if found is None or isinstance(found, str):
        raise UserError(_not_planned(cls, found))
    for name in assumptions.given():
        if FLAGS[name] == found.flag:
            raise UserError(f"{found.flag} is what the plan of {cls.name} sizes; leave it out.")
        if name not in found.takes:
            reads = " and ".join(FLAGS[t] for t in found.takes) or "none of them"
            raise UserError(f"{FLAGS[name]} does not apply to the plan of {cls.name}, which reads {reads}.")
    return found(assumptions)


def supported() -> list[str]:
    """The probes genderprobe plan plans, sorted."""
    from genderprobe.registry import planners

    return sorted(name for name, found in planners().items() if not isinstance(found, str))


def _not_planned(cls: Any, reason: str | None) -> str:
    head = f"genderprobe plan covers {', '.join(supported())}; {cls.name} has no plan"
    if reason:
        return f"{head}: {reason}."
    headlines = list(getattr(cls, "headline", ()))
    if not any(h.better in ("zero", "one") for h in headlines):
        shown = ", ".join(f"{h.metric} (better {h.better})" for h in headlines[:2])
        more = f" and {len(headlines) - 2} more" if len(headlines) > 2 else ""
        return (f"{head}: no headline metric of it has a neutral value that a bias is measured from "
                f"({shown or 'it declares none'}{more}).")
    return f"{head}: no planner simulates its runs (a study adds one to its plan module)."


def _check(settings: Settings, repetitions: int, scenario_sd: float, mismatch_rate: float | None,
           price_in: float | None, price_out: float | None) -> None:
    if not 0.5 <= settings.power < 1:
        raise UserError(f"--power must be at least 0.5 and below 1, such as 0.8; got {settings.power}.")
    if not 0 < settings.alpha < 0.5:
        raise UserError(f"--alpha must be between 0 and 0.5, such as 0.05; got {settings.alpha}.")
    if repetitions < 1:
        raise UserError(f"--repetitions must be 1 or more; got {repetitions}.")
    if not 0 <= scenario_sd < 0.5:
        raise UserError(f"--scenario-sd must be at least 0 and below 0.5, such as 0.1; got {scenario_sd}.")
    if mismatch_rate is not None and not 0 < mismatch_rate <= 1:
        raise UserError(f"--mismatch-rate is the share of pairs whose two stances differ, above 0 and at most 1, "
                        f"such as 0.2; got {mismatch_rate}.")
    for flag, price in (("--price-in", price_in), ("--price-out", price_out)):
        if price is not None and not price >= 0:
            raise UserError(f"{flag} is US dollars per million tokens, 0 or more; got {price}.")
    if settings.simulations < 50 or settings.resamples < 100:
        raise UserError("Plan with at least 50 simulations and 100 bootstrap resamples.")


# -- the search -------------------------------------------------------------------


def fewest(planner: Planner, detect: float, settings: Settings) -> tuple[int, float, bool]:
    """(fewest units whose simulated power reaches the target, that power, True), or
    (the largest size, its power, False) where none does."""
    sizes = planner.sizes()
    first, step, top = sizes[0], sizes.step, sizes[-1]

    def up(n: int) -> int:  # the smallest size >= n
        return min(top, max(first, first + -(-(n - first) // step) * step))

    simulated: dict[int, float] = {}  # the sizes simulated in full, and their power

    def at(n: int) -> float:
        found, every_simulation = _decided(planner, n, detect, settings)
        if every_simulation:
            simulated[n] = found
        return found

    def full(n: int) -> float:  # the plan reports its size's power from every simulation
        return simulated[n] if n in simulated else _power(planner, n, detect, settings)

    hi = up(max(first, planner.normal_size(detect, settings) or first))
    lo = first + (hi // 2 - first) // step * step  # assumed short of the power; never asked
    found = at(hi)
    while found < settings.power:
        if hi >= top:
            if not planner.largest_is_a_run:
                raise UserError(
                    f"Even all {top:,} {planner.unit} of {planner.probe} would not detect that bias with that "
                    f"power; plan for a larger --detect or lower --power."
                )
            return top, full(top), False
        lo, hi = hi, up(2 * hi)
        found = at(hi)
    while hi - lo > max(step, hi // 100):  # within 1%: the simulation is no finer than that
        mid = lo + (hi - lo) // (2 * step) * step
        if mid <= lo:
            break
        at_mid = at(mid)
        if at_mid >= settings.power:
            hi = mid
        else:
            lo = mid
    return hi, full(hi), True


def smallest_detectable(planner: Planner, size: int, detect: float, settings: Settings) -> float | None:
    """The smallest bias, on ``detect``'s side, that runs of ``size`` detect with the target power
    (bisection between ``detect``, which they do not, and the largest bias the planner can express)."""
    lo, hi = detect, planner.bounds[1] if detect > planner.neutral else planner.bounds[0]
    limit = hi
    for _ in range(_BIAS_STEPS):
        mid = (lo + hi) / 2
        if _decided(planner, size, mid, settings, bias=mid)[0] >= settings.power:
            hi = mid
        else:
            lo = mid
    return None if hi == limit else hi


def _decided(planner: Planner, size: int, detect: float, settings: Settings,
             bias: float | None = None) -> tuple[float, bool]:
    """(power at ``size``, whether from every simulation) for a search that asks only whether it reaches the
    target: a pilot of a fifth of the simulations answers where its power lies CLEAR_Z standard errors (at
    the target) away from the target, as a size far from the plan's does; the full count is spent near it."""
    if settings.simulations >= PILOT_FROM:
        pilot = replace(settings, simulations=settings.simulations // PILOT_SHARE)
        found = _power(planner, size, detect, pilot, bias, " (a first fifth)")
        margin = CLEAR_Z * math.sqrt(settings.power * (1 - settings.power) / pilot.simulations)
        if abs(found - settings.power) > margin:
            return found, False
    return _power(planner, size, detect, settings, bias), True


def _power(planner: Planner, size: int, detect: float, settings: Settings, bias: float | None = None,
           note: str = "") -> float:
    """The planner's power, as a step the user sees (the planners count their simulated runs)."""
    what = f"simulating runs of {size:,} {planner.unit}" + (f" at a bias of {bias:.3g}" if bias is not None else "")
    with steps.step(what + note, total=settings.simulations, unit="runs"):
        return planner.power(size, detect, settings)


# -- simulation helpers the planners share ------------------------------------------


def cluster_strengths(p: float, sd: float, clusters: int, simulations: int, rng: np.random.Generator) -> np.ndarray:
    """simulations x clusters: each cluster's (scenario's, word's) strength around p, with standard deviation sd.

    A Beta with mean p and standard deviation sd (its largest is sqrt(p(1 - p))),
    centred in each simulated run so that the bias over the run's clusters, where
    every cluster weighs alike, is the one planned.
    """
    nu = max(p * (1 - p) / sd**2 - 1, 1e-6)
    strengths = rng.beta(p * nu, (1 - p) * nu, size=(simulations, clusters))
    return np.clip(strengths + p - strengths.mean(axis=1, keepdims=True), 0, 1)


def excludes(low: float | None, high: float | None, neutral: float, side: float) -> bool:
    """Whether the interval [low, high] leaves ``neutral`` out on ``side`` (+1 above it, -1 below it)."""
    if low is None or high is None:
        return False
    return low > neutral if side > 0 else high < neutral


def _command(probe: str, params: dict[str, Any]) -> str:
    """The command line of the planned run."""
    from genderprobe.registry import get_probe

    flags = {f.name: f.metadata.get("flag") for f in fields(get_probe(probe).Params)}
    parts = [f"genderprobe run {probe}"]
    for name, value in params.items():
        flag = flags.get(name) or "--" + name.replace("_", "-")
        shown = ",".join(map(str, value)) if isinstance(value, (tuple, list)) else value
        parts.append(f"{flag} {shown}")
    return " ".join(parts) + " --model SPEC"


# -- after a run ------------------------------------------------------------------


def interval_halving(document: dict[str, Any]) -> dict[str, Any] | None:
    """What would halve each headline interval of a run's results.

    An interval's width shrinks about as 1 / sqrt(n), so halving it takes about
    four times the items behind it (the metric's n), which is four times the
    probe's sample parameter where it has one (sample_k, per_type). Where the
    probe reports a metric's variance components (``extra.variance_components``:
    a fixed set of words whose spread more attempts cannot average away, and the
    noise within each word, which they can), the parameter that repeats attempts
    is sized from them: halving the width needs the within part to fall to a
    quarter of the whole less the between part, and none will where the between
    part alone is more than a quarter. None when no headline metric has an interval.
    """
    metrics = document.get("metrics", {})
    components = (document.get("extra") or {}).get("variance_components") or {}
    rows = {}
    for headline in document.get("headline", {}).get("metrics", []):
        m = metrics.get(headline["metric"], {})
        if m.get("ci_low") is None or m.get("ci_high") is None or not m.get("n"):
            continue
        width = m["ci_high"] - m["ci_low"]
        rows[headline["metric"]] = {"width": width, "halved_width": width / 2, "n": m["n"], "n_to_halve": 4 * m["n"]}
        found = components.get(headline["metric"])
        if isinstance(found, dict):
            rows[headline["metric"]] |= _halving_by_components(found, document)
    if not rows:
        return None
    out: dict[str, Any] = {"rule": "an interval's width shrinks about as 1/sqrt(n): about 4x the items halve it"}
    params = document.get("parameters", {}).get("probe") or {}
    for name in SAMPLE_PARAMETERS:
        if isinstance(params.get(name), int):
            out["parameter"] = {"name": name, "now": params[name], "to_halve": 4 * params[name]}
            largest = _largest(document.get("probe"), name)
            if largest is not None and 4 * params[name] > largest:  # GenMO's 907 pairs, DeMET's per_type
                out["parameter"] |= {"largest": largest, "note": f"{name} goes up to {largest:,}: no run of "
                                     f"this probe halves these intervals with more {name}"}
            break
        if name in params and params[name] is None:  # the default of most probes: every item of the data set
            items = (document.get("counts") or {}).get("items")
            items = items if isinstance(items, int) else _largest(document.get("probe"), name)
            if items is not None:
                out["parameter"] = {"name": name, "now": None, "to_halve": 4 * items, "largest": items,
                                    "note": f"this run asked all {items:,} items the probe has: no larger run exists"}
                break
    out["metrics"] = rows
    return out


def halving_line(entry: dict[str, Any] | None) -> str | None:
    """Each headline's effective sample (n: the units its interval rests on) and how many more would halve
    its interval, in one line, alike for every probe (the terminal's summary and --details)."""
    if not entry or not entry.get("metrics"):
        return None
    groups: dict[tuple[Any, ...], list[str]] = {}  # metrics of one n said once
    for metric, row in entry["metrics"].items():
        groups.setdefault((row["n"], row.get("n_to_halve"), row.get("note")), []).append(metric)
    parts = []
    for (n, to_halve, note), metrics in groups.items():
        one = len(metrics) == 1
        text = f"{', '.join(metrics)} rest{'s' if one else ''} on n = {n:,}"
        if to_halve:
            text += f", about {to_halve - n:,} more would halve {'its interval' if one else 'their intervals'}"
        elif note:
            text += f" ({note})"
        parts.append(text)
    line = "Sample: " + "; ".join(parts) + "."
    parameter = entry.get("parameter")
    if parameter and parameter.get("note"):
        line += f" ({parameter['note'][0].upper()}{parameter['note'][1:]}.)"
    elif parameter:
        line += f" ({parameter['name']} {parameter['to_halve']:,} instead of {parameter['now']:,}.)"
    return line


def _halving_by_components(found: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """The n_to_halve of a metric whose between-unit spread no repetition reduces (the 4x rule does not hold)."""
    between, within, name = float(found["between"]), float(found["within"]), found["parameter"]
    now = (document.get("parameters", {}).get("probe") or {}).get(name)
    total = between + within
    out: dict[str, Any] = {"n_to_halve": None, "variance_between": between, "variance_within": within,
                           "parameter": name, "now": now}
    if not isinstance(now, int) or total <= 0:
        return out
    share = between / total
    if within <= 0 or between >= total / 4:
        out["note"] = (f"the spread between {found.get('units', 'units')} is {share:.0%} of the variance, and more "
                       f"{name} cannot reduce it: no run of these {found.get('units', 'units')} halves this interval")
        return out
    out["to_halve"] = math.ceil(now * within / (total / 4 - between))
    out["note"] = (f"{share:.0%} of the variance is the spread between {found.get('units', 'units')}, which more "
                   f"{name} leave as it is: halving the width takes {name} {out['to_halve']:,}")
    return out


def ratio_variance_components(num: np.ndarray, den: np.ndarray) -> dict[str, float]:
    """Variance components of sum(num) / sum(den) over units whose num and den split each unit's answered
    attempts binomially (a word's "she" and "he"): the whole, as a bootstrap over units sees it (the
    linearized ratio's spread), and the part within units (binomial noise, which more attempts per unit
    reduce); the rest is between units. The between part is a difference of two estimates, so with few
    units or attempts it is noisy (68 words alike at 30 attempts: 0-20% of the whole)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    n_total, d_total = num.sum(), den.sum()
    if d_total <= 0 or num.size < 2:
        return {"between": 0.0, "within": 0.0}
    r = n_total / d_total
    z = (num - r * den) / d_total
    total = float(((z - z.mean()) ** 2).sum())
    answered = num + den
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(answered > 0, num / np.maximum(answered, 1), 0.0)
        unbiased = np.where(answered > 1, answered / np.maximum(answered - 1, 1), 0.0)
    within = float(((1 + r) ** 2 * answered * share * (1 - share) * unbiased).sum() / d_total**2)
    within = min(within, total)
    return {"between": total - within, "within": within}


def _largest(probe: Any, parameter: str) -> int | None:
    """The most ``parameter`` can be for the probe, where its planner sizes that parameter."""
    from genderprobe.registry import planner

    found = planner(probe) if isinstance(probe, str) else None
    if found is None or isinstance(found, str) or found.parameter != parameter:
        return None
    return found(Assumptions()).sizes()[-1]
