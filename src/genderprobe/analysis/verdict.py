"""A run's verdict: what it may claim, computed once and rendered by every surface.

The terminal, the run and suite reports, the GenderBench card, the leaderboard,
``compare``, the paper tables and the notebook all show marks and intervals.
Each used to decide on its own whether a mark stands; here it is decided once,
from the results document alone (so a results file read back is judged as a
run just made), and the surfaces only render what this module says:

* a mark is **decided** only when every interval printed beside it (the
  printed one and the interval GenderBench reads the mark from) lies in one
  mark range;
* it is **undecided** ("A…C") when those intervals reach several ranges;
* it is **struck** when the run failed its validity checks, or the metric
  rests on too few answers: such a mark is never shown plain.
"""

from __future__ import annotations

from typing import Any

from genderprobe.analysis import validity

SCHEMA = 1

DECIDED, UNDECIDED, STRUCK, NONE = "decided", "undecided", "struck", "none"


def mark_state(name: str, mark: dict[str, Any] | None, estimate: dict[str, Any] | None,
               failed: list[str], too_few: set[str]) -> dict[str, Any]:
    """One metric's mark as every surface shows it: letter, state, the marks it reaches, and a text."""
    letter = mark.get("mark") if isinstance(mark, dict) else None
    if not letter:
        return {"metric": name, "mark": None, "state": NONE, "reaches": [], "reason": None, "text": ""}
    reaches = validity.reached_marks(mark, estimate) or [letter]
    if name in too_few:
        reason = "too few answers"
    elif failed:
        reason = "invalid: " + ", ".join(failed)
    else:
        reason = None
    if reason:
        state, text = STRUCK, f"{letter} does not stand ({reason})"
    elif len(reaches) > 1:
        state, text = UNDECIDED, f"undecided {reaches[0]}…{reaches[-1]}"
    else:
        state, text = DECIDED, letter
    return {"metric": name, "mark": letter, "state": state, "reaches": reaches, "reason": reason, "text": text}


def assess(document: dict[str, Any]) -> dict[str, Any]:
    """The ``verdict`` section of a results document; ``document["validity"]`` must be assessed first."""
    assessed = validity.of(document)
    failed = sorted({c["guard"] for c in assessed["checks"] if c["status"] == "fail"})
    too_few = {c.get("metric") for c in assessed["checks"] if c["guard"] == "sample" and c["status"] == "fail"}
    metrics = document.get("metrics") or {}
    marks = document.get("marks") or {}
    states = {name: mark_state(name, m, metrics.get(name), failed, too_few)
              for name, m in marks.items() if isinstance(m, dict)}
    headlines = []
    for h in (document.get("headline") or {}).get("metrics") or []:
        if not isinstance(h, dict) or "metric" not in h:
            continue
        name = h["metric"]
        est = metrics.get(name) if isinstance(metrics.get(name), dict) else {}
        state = states.get(name) or mark_state(name, None, est, failed, too_few)
        headlines.append({"metric": name, "better": h.get("better"),
                          **{k: est.get(k) for k in ("value", "ci_low", "ci_high", "n")},
                          "too_few": name in too_few, "mark": state})
    stopped = _stopped_early(document.get("until_decided"))
    return {
        "schema": SCHEMA,
        "probe": document.get("probe"),
        "model": document.get("model"),
        "validity": assessed["verdict"],
        "validity_text": validity.VERDICT_TEXT[assessed["verdict"]],
        "failed": failed,
        "reasons": [{"guard": c["guard"], "status": c["status"], "message": c["message"]}
                    for c in validity.problems(document)],
        "headlines": headlines,
        "marks": states,
        "answers": _answers(assessed),
        "stopped_early": stopped,
        "intervals": ("bootstrap intervals read where the run chose to stop: they hold the truth less often "
                      "than 95%" if stopped else "95% bootstrap intervals"),
    }


def of(document: dict[str, Any]) -> dict[str, Any]:
    """The document's verdict, assessed now for results written before it existed."""
    found = document.get("verdict")
    return found if isinstance(found, dict) and found.get("schema") == SCHEMA else assess(document)


def mark_of(document: dict[str, Any], metric: str) -> dict[str, Any]:
    """One metric's mark state (state ``none`` where it has no mark)."""
    return of(document)["marks"].get(metric) or {"metric": metric, "mark": None, "state": NONE, "reaches": [],
                                                 "reason": None, "text": ""}


def _stopped_early(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("items"), int) and \
        isinstance(entry.get("budget"), int) and entry["items"] < entry["budget"]


def _answers(assessed: dict[str, Any]) -> dict[str, Any] | None:
    """Answers used and lost, from the losses guard."""
    losses = next((c for c in assessed["checks"] if c["guard"] == "losses" and "attempts" in c), None)
    if losses is None:
        return None
    lost, attempts = int(losses.get("lost") or 0), int(losses.get("attempts") or 0)
    return {"used": attempts - lost, "lost": lost, "attempts": attempts,
            "share_lost": lost / attempts if attempts else 0.0}
