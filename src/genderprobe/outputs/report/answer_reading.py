"""How one record reads in the answer browser: what it was read as, by what, and whom its prompt puts first.

Records differ by study; this module knows them by their fields, not by the
probe's name, so a new probe whose records use these fields is read the same
way, and any other record still shows, under its ``code`` (or ``stance``,
``vote``):

* the reading: the option the answer was read as (``(a)``/``(b)`` for a
  two-person record that names the man's option, ``1``/``2`` for ``name1``/
  ``name2``, else the code as written), or ``undetected``, ``refusal``, ``error``;
* read by: ``rules``, or ``judge`` where the reader judge read an answer the
  rules could not (the record holds the judge's reply under ``reader_judge``);
* gender: who the prompt names first where it names two people (``female
  first``, from ``man_option``, a ``W-M`` pair ``type`` or an ``FM`` ``pairing``),
  the person's gender where it names one (``gender``, or a ``list`` of women's
  names), or the couple of a null item (``two men``);
* chose: what a read answer means, where the record says whose option it was:
  ``the man``/``the woman``/``neither`` from a ``code`` of male/female/neither
  (who is in the right, who a sentence is about, whom a story or a hiring
  picks), the person of a mixed DeMET pair, or BBQ's ``chosen`` (the
  stereotyped person, the other person, unknown);
* readers: both readers' readings where the record says they differ
  (``readers``, written by genderprobe.reading.two_readers).

:func:`groups` picks the record's other short fields (topic, source, label,
race, language ...) as its breakdown groups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from genderprobe.reading.reasoning import split_reasoning

UNDETECTED, REFUSAL, ERROR = "undetected", "refusal", "error"
RULES, JUDGE = "rules", "judge"
# Codes that say the answer was not read (a dialogue's topic the judges could not settle, ...).
_UNREAD = {UNDETECTED, "unresolved", "unclear", "unread", "undecided"}
_REFUSED = {REFUSAL, "refused"}
_OTHER_OPTION = {"(a)": "(b)", "(b)": "(a)"}
# A two-person record: the field holding one person's option, and the codes meaning "chose that person" or the other.
_PERSON_OPTION = (("man_option", "male", "female"), ("x_option", "x", "y"))
_NAMED = {"name1": "1", "name2": "2"}
_PAIR_TYPE = re.compile(r"[WMN]-[WMN]")
_PAIRING = re.compile(r"[FM][FM]")
_LETTER_GENDER = {"W": "female", "F": "female", "M": "male", "N": "neutral"}
_LIST_GENDER = {"women": "female", "men": "male", "neutral": "neutral"}

# Fields that are the answer, its reading, its cost or its identity, never a breakdown group.
NOT_GROUPS = frozenset({
    "prompt", "answer", "reasoning", "code", "stance", "vote", "error", "refusal", "reader_judge", "read_by",
    "cached", "prompt_tokens", "completion_tokens", "finish_reason", "cut_from", "option_logprobs", "judge_turns",
    "examples", "chosen", "unmatched", "story", "score", "human_score", "p_she", "item", "uid", "pair",
    "repetition", "run", "slot", "man_option", "x_option", "gender", "list", "null", "rounds", "stopped",
    "undetected_reason", "temperature", "null_for", "prompt_index", "readers",
    "name", "name1", "name2", "man", "woman", "x", "y",  # people's names: the prompt shows them
})
# Where a record's place in the run is (shown on each answer, so it can be found in the records file).
ID_FIELDS = ("item", "pair", "uid", "name")


# What a read answer chose, in the order the browser lists the values.
MAN, WOMAN = "the man", "the woman"
_CODE_MEANING = {"male": MAN, "female": WOMAN, "neither": "neither"}
_PAIR_PERSON = {"W": WOMAN, "M": MAN, "N": "the neutral name"}
_CHOSEN_KIND = {"stereotypical": "the stereotyped person", "anti-stereotypical": "the other person",
                "unknown": "unknown"}
MEANINGS = (MAN, WOMAN, "neither", "the neutral name", *_CHOSEN_KIND.values())


@dataclass(frozen=True)
class Reading:
    reading: str
    read_by: str | None  # RULES or JUDGE for an answer that was read; None for one that was not
    gender: str | None
    chose: str | None = None  # what the answer means (MEANINGS), where the record says
    readers: tuple[tuple[str, str], ...] | None = None  # (reader, its reading) of each, where they differ


def code_of(record: dict[str, Any]) -> str | None:
    for key in ("code", "stance", "vote"):
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def read(record: dict[str, Any]) -> Reading:
    code = code_of(record)
    gender = gender_of(record)
    if record.get("error") or code == ERROR:
        return Reading(ERROR, None, gender)
    both = readers_of(record)
    if record.get("refusal") is True or code in _REFUSED:
        return Reading(REFUSAL, None, gender, readers=both)
    if code is None or code in _UNREAD:
        return Reading(UNDETECTED, None, gender, readers=both)
    judged = record.get("read_by") == JUDGE or isinstance(record.get("reader_judge"), str)
    return Reading(_option(record, code), JUDGE if judged else RULES, gender, meaning(record), both)


def meaning(record: dict[str, Any]) -> str | None:
    """What a read answer chose (MEANINGS), where the record says whose option it was; else None."""
    chosen = record.get("chosen")
    if isinstance(chosen, str):
        return _CHOSEN_KIND.get(chosen)
    code = record.get("code")  # a vote or a stance names no person
    if code in _CODE_MEANING:
        return _CODE_MEANING[code]
    pair = record.get("type")
    if code in _NAMED and isinstance(pair, str) and _PAIR_TYPE.fullmatch(pair) and pair[0] != pair[2]:
        return _PAIR_PERSON[pair[0] if code == "name1" else pair[2]]
    return None


def readers_of(record: dict[str, Any]) -> tuple[tuple[str, str], ...] | None:
    """Each reader's reading where the two differ (the record's ``readers``); None where they agree."""
    both = record.get("readers")
    if isinstance(both, dict) and len(both) == 2 and all(isinstance(v, str) for v in both.values()):
        return tuple((str(k), v) for k, v in both.items())
    return None


def _option(record: dict[str, Any], code: str) -> str:
    """The option the answer chose, where the record says which option was whose; else the code."""
    for field, chose, other in _PERSON_OPTION:
        option = record.get(field)
        if option in _OTHER_OPTION and code in (chose, other):
            return option if code == chose else _OTHER_OPTION[option]
    return _NAMED.get(code, code)


def gender_of(record: dict[str, Any]) -> str | None:
    null = record.get("null")
    if isinstance(null, str) and null:
        return null  # a null item's couple: "two men", "two women"
    if record.get("man_option") in _OTHER_OPTION:
        return "male first" if record["man_option"] == "(a)" else "female first"
    for field, pattern in (("type", _PAIR_TYPE), ("pairing", _PAIRING)):
        value = record.get(field)
        if isinstance(value, str) and pattern.fullmatch(value):
            return f"{_LETTER_GENDER[value[0]]} first"
    gender = record.get("gender")
    if isinstance(gender, str) and gender:
        return gender
    listed = record.get("list")
    return _LIST_GENDER.get(listed) if isinstance(listed, str) else None


def groups(record: dict[str, Any]) -> dict[str, str]:
    """The record's short fields that may be breakdown groups (which of them are is decided over a run)."""
    return {k: str(v) for k, v in record.items()
            if k not in NOT_GROUPS and isinstance(v, (str, int)) and not isinstance(v, bool) and len(str(v)) <= 60}


def place(record: dict[str, Any]) -> str:
    """"item 12, repetition 1": where the answer is in the run."""
    parts = [f"{k} {record[k]}" for k in ID_FIELDS if k in record]
    parts += [f"{k} {record[k]}" for k in ("repetition", "run") if record.get(k)]
    return ", ".join(parts)


def answer_and_reasoning(record: dict[str, Any]) -> tuple[str, str]:
    """The answer with a reasoning model's thinking set aside, and that thinking (sent apart, or inline)."""
    raw = record.get("answer")
    answer, inline = split_reasoning(raw if isinstance(raw, str) else "")
    sent = record.get("reasoning")
    return answer, "\n\n".join(t for t in (sent if isinstance(sent, str) else "", inline) if t)
