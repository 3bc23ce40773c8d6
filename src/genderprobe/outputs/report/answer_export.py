"""Every answer of a run as the answer browser reads it, filtered as the browser filters (``genderprobe answers``).

A report holds a sample of a large run's answers; this is the rest. Each
record is written as it is in the run's records file, with what the browser
shows of it under ``read``: ``{"reading": "(a)", "by": "rules", "gender":
"female first", "chose": "the woman", "readers": "agree"}`` (:mod:`answer_reading`).
The filters are the browser's: a reading, a reader, a gender, what the answer
chose, whether the two readers agree, group values and words searched for in
the prompt, the answer and its reasoning, upper or lower case alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genderprobe.errors import UserError
from genderprobe.outputs.records import read_records
from genderprobe.outputs.report.answer_reading import Reading, answer_and_reasoning, read


@dataclass
class AnswerFilter:
    reading: str | None = None
    read_by: str | None = None
    gender: str | None = None
    groups: dict[str, str] = field(default_factory=dict)  # field -> value, as the records hold it
    search: str | None = None
    chose: str | None = None  # "the man", "the woman", ... (answer_reading.MEANINGS)
    readers: str | None = None  # "agree" or "disagree"

    def __call__(self, record: dict[str, Any], reading: Reading) -> bool:
        if self.reading is not None and reading.reading != self.reading:
            return False
        if self.read_by is not None and reading.read_by != self.read_by:
            return False
        if self.gender is not None and reading.gender != self.gender:
            return False
        if self.chose is not None and reading.chose != self.chose:
            return False
        if self.readers is not None and agreement(reading) != self.readers:
            return False
        if any(str(record.get(name)) != value for name, value in self.groups.items()):
            return False
        return not self.search or self.search.strip().lower() in searched_text(record)


def agreement(reading: Reading) -> str:
    """"disagree" where the record gives the two readers' different readings, else "agree"."""
    return "disagree" if reading.readers else "agree"


def searched_text(record: dict[str, Any]) -> str:
    """What a search looks in, as the browser's script looks: prompt, answer, then reasoning, in lower case."""
    answer, reasoning = answer_and_reasoning(record)
    return f"{record.get('prompt') or ''}\n{answer}\n{reasoning}".lower()


def group_filter(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--group topic=Money`` as {"topic": "Money"}; a pair without '=' is one sentence."""
    out = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise UserError(f"--group takes FIELD=VALUE, such as topic=Money; got {pair!r}.")
        out[name.strip().replace(" ", "_")] = value
    return out


def answers(records: Path, doc: dict[str, Any], keep: AnswerFilter) -> Iterator[dict[str, Any]]:
    """The run's records that ``keep`` keeps, each with its reading under ``read``."""
    for record in read_records(records, prompts=True, results=doc):
        reading = read(record)
        if keep(record, reading):
            yield {**record, "read": {"reading": reading.reading, "by": reading.read_by, "gender": reading.gender,
                                      "chose": reading.chose, "readers": agreement(reading)}}
