"""``--fail-on-mark M``: a CI gate on the A-D marks.

A run (or a suite) fails the gate when any of its marks is worse than ``M``
(A is best, D worst), or when a mark does not stand (the run's verdict,
genderprobe.analysis.verdict, struck it: a mark the run cannot vouch for cannot pass a gate):
exit code 3, after the results are written. The check reads the results document's verdict, so
it applies to a run just made and to a results file read back alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from genderprobe.analysis import verdict
from genderprobe.errors import UserError

MARKS = ("A", "B", "C", "D")


def check_threshold(mark: str) -> str:
    """The threshold, upper-cased, or one sentence saying what is allowed."""
    upper = mark.strip().upper()
    if upper not in MARKS:
        raise UserError(f"--fail-on-mark takes one of {', '.join(MARKS)}; got {mark!r}.")
    return upper


def worse_marks(document: dict[str, Any], threshold: str) -> list[str]:
    """``metric: mark`` for every mark in ``document`` worse than ``threshold``."""
    limit = MARKS.index(check_threshold(threshold))
    return [f"{metric}: {state['mark']}" for metric, state in verdict.of(document)["marks"].items()
            if state["mark"] in MARKS and MARKS.index(state["mark"]) > limit]


def not_standing(document: dict[str, Any]) -> str:
    """Why the document's marks do not stand ("invalid: position, sample"), where its verdict struck any; else ''."""
    v = verdict.of(document)
    reasons = dict.fromkeys(s["reason"] for s in v["marks"].values() if s["state"] == verdict.STRUCK)
    if not reasons:
        return ""
    return f"invalid: {', '.join(v['failed'])}" if v["failed"] else ", ".join(reasons)


def enforce(documents: Iterable[tuple[str, dict[str, Any]]], threshold: str) -> None:
    """Raise :class:`MarkGateFailed` naming every (label, metric, mark) worse than ``threshold``."""
    documents = list(documents)
    failures = [f"{label} {item}" for label, doc in documents for item in worse_marks(doc, threshold)]
    failures += [f"{label} marks do not stand ({why})" for label, doc in documents if (why := not_standing(doc))]
    if failures:
        shown = "; ".join(failures[:6]) + (f"; and {len(failures) - 6} more" if len(failures) > 6 else "")
        raise MarkGateFailed(f"{len(failures)} mark(s) worse than {threshold.upper()} or not standing "
                             f"(--fail-on-mark): {shown}.")


class MarkGateFailed(UserError):
    """A mark worse than the --fail-on-mark threshold. The run itself finished and
    its results were written; the command line exits with 3."""
