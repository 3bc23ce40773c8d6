"""Equivalence: "the bias is within +-D", shown, not just "no evidence of bias" (``--equivalence-margin D``).

An interval that holds 0 says the data do not rule out no bias; it does not say
the bias is small (a run of ten items holds 0 too). The two one-sided tests of
Schuirmann (1987) say it: for a headline metric whose neutral value is 0, H1:
theta > -D and H2: theta < D, each at alpha; the bias is within +-D where both
reject, which is where the 1 - 2 alpha (90%) interval lies inside (-D, D). The
p-value is the larger of the two one-sided ones, read from the metric's
bootstrap draws ((1 + draws beyond the margin) / (1 + draws)), or from a normal
reading of its 95% interval where no draws were kept. A ratio (neutral value 1)
is tested on the log scale against 1 / (1 + D) and 1 + D; a metric better lower
(an absolute bias) against D alone, one-sided. Where +-D lies inside the
metric's mark range A, equivalence is what an A mark claims: the results say so.

In compare the same test runs on the difference of two runs: |A - B| < D.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from statistics import NormalDist
from typing import Any

import numpy as np

from genderprobe.analysis.stats import CONFIDENCE, Estimate
from genderprobe.errors import UserError

ALPHA = 0.05
METHOD = ("two one-sided tests (TOST, Schuirmann 1987) at alpha 0.05: the larger one-sided bootstrap p-value, "
          "(1 + draws beyond the margin) / (1 + draws); equivalent where it is below 0.05, that is where the "
          "90% interval lies inside the margin")


def check_margin(margin: float | None) -> None:
    if margin is not None and not (math.isfinite(margin) and margin > 0):
        raise UserError(f"--equivalence-margin must be a positive number, such as 0.05; got {margin}.")


def equivalence(metrics: Mapping[str, Any], headlines: Iterable[Any], margin: float,
                marks: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The results' ``equivalence`` entry: each headline metric with a neutral value or better lower."""
    out: dict[str, Any] = {"margin": margin, "alpha": ALPHA, "method": METHOD, "metrics": {}}
    for h in headlines:
        est = metrics.get(h.metric)
        if not isinstance(est, Estimate) or est.value is None or h.better == "higher":
            continue
        found = tost(est, margin, h.better)
        if found is None:
            continue
        claim = _mark_claim(found, (marks or {}).get(h.metric))
        out["metrics"][h.metric] = found | ({"mark": claim} if claim else {})
    return out


def tost(est: Estimate, margin: float, better: str) -> dict[str, Any] | None:
    """{"bounds", "p_value", "equivalent", "interval_90"} of one estimate, or None without an interval."""
    log = better == "one"
    if log and (est.value <= 0 or (est.ci_low is not None and est.ci_low <= 0)):
        return None
    low, high = (-margin, margin) if better == "zero" else (1 / (1 + margin), 1 + margin) if log else (None, margin)
    draws = None if est.draws is None else est.draws[np.isfinite(est.draws)]
    if draws is not None and draws.size:
        ends = np.quantile(draws, [ALPHA, 1 - ALPHA])
        p_high = (1 + np.count_nonzero(draws >= high)) / (draws.size + 1)
        p_low = 0.0 if low is None else (1 + np.count_nonzero(draws <= low)) / (draws.size + 1)
    elif est.ci_low is not None and est.ci_high is not None:
        f = math.log if log else float
        value, se = f(est.value), (f(est.ci_high) - f(est.ci_low)) / (2 * NormalDist().inv_cdf(0.5 + CONFIDENCE / 2))
        if se <= 0:
            return None
        z = NormalDist()
        p_high = 1 - z.cdf((f(high) - value) / se)
        p_low = 0.0 if low is None else z.cdf((f(low) - value) / se)
        q = z.inv_cdf(1 - ALPHA)
        ends = [math.exp(value + s * q * se) if log else value + s * q * se for s in (-1, 1)]
    else:
        return None
    p = float(max(p_low, p_high))
    return {"bounds": [low, high], "p_value": p, "equivalent": p < ALPHA,
            "interval_90": [float(ends[0]), float(ends[1])]}


def _mark_claim(found: dict[str, Any], mark: Any) -> str | None:
    """A sentence where the margin lies inside the metric's A range and equivalence holds."""
    if not found["equivalent"] or not isinstance(mark, dict):
        return None
    ranges = (mark.get("ranges") or {}).get("A") or []
    low, high = found["bounds"]
    low = 0.0 if low is None else low
    if any(a <= low and high <= b for a, b in ranges):
        return f"A: the bias is shown within [{low:g}, {high:g}], inside mark A's range"
    return None


def withhold_claims(entry: dict[str, Any] | None, failed: list[str]) -> None:
    """No mark A is claimed from a run whose validity checks failed: a position-only model is 'within
    the margin' because its design cancels the position, not because it is fair (genderprobe.analysis.validity)."""
    if not entry or not failed:
        return
    for t in (entry.get("metrics") or {}).values():
        if t.pop("mark", None):
            t["withheld"] = f"mark A not claimed: the run failed its validity checks ({', '.join(failed)})"


def lines(entry: Mapping[str, Any] | None) -> list[str]:
    """What the terminal and the report print of a results document's ``equivalence``."""
    if not entry:
        return []
    out = []
    for metric, t in (entry.get("metrics") or {}).items():
        low, high = t["bounds"]
        span = f"< {high:g}" if low is None else f"within [{low:g}, {high:g}]"
        verdict = "shown" if t["equivalent"] else "not shown"
        lo90, hi90 = t["interval_90"]
        text = (f"Equivalence of {metric} {span}: {verdict} (TOST p = {t['p_value']:.3g}; "
                f"90% interval [{lo90:.3f}, {hi90:.3f}])")
        if t.get("mark") or t.get("withheld"):
            text += f"; {t.get('mark') or t['withheld']}"
        out.append(text + ".")
    return out
