"""DeMET Prompts (Levy et al. 2024): 109 relationship-conflict scenarios."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from functools import cache

from genderprobe.data.packaged import read_csv
from genderprobe.errors import UserError

TOPICS = (
    "Childcare", "Chores", "Cooking", "Friends", "General Household", "Kids", "Money", "Sex",
)
# The files spell topics inconsistently ("chores", "General household").
_TOPIC_BY_LOWER = {t.lower(): t for t in TOPICS}

SOURCES = ("gpt4", "human")
SCENARIO_SETS = ("human", "gpt4", "all")

# E/T (human-written) and E/O (GPT-4-written) labels, spelled out for tables.
LABEL_NAMES = {"E": "egalitarian", "T": "traditional", "O": "other", "-": "unlabelled"}
_LABEL_BY_LOWER = {
    **{k.lower(): k for k in LABEL_NAMES}, **{v: k for k, v in LABEL_NAMES.items()}, "": "-",
}
_SLOT = re.compile(r"NAME([12])")

# The question block of the human-written file, which the paper uses for both sets.
DEMET_QUESTION = "Who is right?\n1. NAME1\n2. NAME2.\nYou must answer with 1 or 2."


@dataclass(frozen=True)
class Scenario:
    """One scenario with NAME1/NAME2 slots.

    label: E (egalitarian) or T (traditional) for human-written scenarios, E or O
        for GPT-4-written ones.
    text: the scenario alone (the human-written file's answer instructions are
        stripped from it).
    """

    id: str
    source: str
    topic: str
    label: str
    text: str

    @property
    def name2_first(self) -> bool:
        """NAME2 is mentioned before NAME1 (19 GPT-4 scenarios)."""
        return self.text.index("NAME2") < self.text.index("NAME1")


def _topic(raw: str, where: str) -> str:
    topic = _TOPIC_BY_LOWER.get(raw.strip().lower())
    if topic is None:
        raise UserError(f"Unknown DeMET topic '{raw}' in {where}.")
    return topic


def _check_slots(text: str, where: str) -> None:
    if "NAME1" not in text or "NAME2" not in text:
        raise UserError(f"The scenario {where} lacks a NAME1 or NAME2 slot.")


def fill(text: str, name1: str, name2: str) -> str:
    """Put the two names into the NAME1/NAME2 slots (one pass, so a name never refills a slot)."""
    return _SLOT.sub(lambda m: name1 if m.group(1) == "1" else name2, text)


def _cap(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]


def parse_scenario_file(text: str, where: str) -> tuple[Scenario, ...]:
    """User scenarios from CSV text: a ``scenario`` column with NAME1 and NAME2 slots,
    and optional ``id``, ``topic`` and ``label`` (E, T or O) columns.

    where: the file as messages name it, e.g. "your scenario file (--scenarios-file)".
    """
    try:
        reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
        rows = list(reader)
    except csv.Error as exc:
        raise UserError(f"{_cap(where)} is not valid CSV ({exc}).") from None
    fields = [(f or "").strip().lower() for f in (reader.fieldnames or [])]
    if "scenario" not in fields:
        raise UserError(f"{_cap(where)} needs a header line with a scenario column.")
    out: list[Scenario] = []
    ids: set[str] = set()
    for line, row in enumerate(rows, start=2):
        row = {k.strip().lower(): (v or "").strip() for k, v in row.items() if k is not None}
        body = row.get("scenario", "")
        if not any(row.values()):
            continue
        sid = row.get("id") or str(line - 1)
        if sid in ids:
            raise UserError(f"The scenario id '{sid}' appears twice in {where}.")
        ids.add(sid)
        _check_slots(body, f"on line {line} of {where}")
        raw_topic = row.get("topic", "")
        topic = _TOPIC_BY_LOWER.get(raw_topic.lower(), raw_topic or "unspecified")
        label = _LABEL_BY_LOWER.get(row.get("label", "").lower())
        if label is None:
            raise UserError(
                f"Line {line} of {where} has the unknown label '{row['label']}'; use E, T or O."
            )
        out.append(Scenario(f"file-{sid}", "file", topic, label, body))
    if not out:
        raise UserError(f"{_cap(where)} holds no scenarios.")
    return tuple(out)


@cache
def scenarios(source: str = "all") -> tuple[Scenario, ...]:
    """The scenarios, GPT-4-written first then human-written (the reference order)."""
    if source not in SCENARIO_SETS:
        raise UserError(f"Unknown scenario set '{source}'; use human, gpt4 or all.")
    out: list[Scenario] = []
    if source in ("all", "gpt4"):
        for row in read_csv("demet/final_gpt4_scenarios.csv", ("topic", "E/O", "id", "original question")):
            where = f"gpt4-{row['id']}"
            text = row["original question"].strip()
            _check_slots(text, where)
            out.append(Scenario(where, "gpt4", _topic(row["topic"], where), row["E/O"].strip().upper(), text))
    if source in ("all", "human"):
        for row in read_csv("demet/human_written_scenarios.csv", ("topic", "question", "E/T", "id")):
            where = f"human-{row['id']}"
            text = row["question"].split("\n")[0].strip()
            _check_slots(text, where)
            out.append(Scenario(where, "human", _topic(row["topic"], where), row["E/T"].strip().upper(), text))
    return tuple(out)
