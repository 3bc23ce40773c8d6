"""Inventories against GenderBench 0.5.0's own code (issue 33): the same answers give the same prompts,
readings, metrics (1e-9), intervals and marks.

Each mix answers every attempt with a character profile put together deterministically from the prompt and
repetition: a man or a woman (with a lean that follows the trait's stereotype or not), pronouns in other
case ("She", "HIS"), contracted ("he's", "she'd"), glued to punctuation, a parent or partner of the other
gender mentioned, and answers GenderBench's evaluator must leave unread: "they" characters, first-person
narrators, ties ("he or she"), refusals, empty answers. One mix opens some profiles with a reasoning block,
which we set aside: GenderBench is given the same profiles with the block removed (as a server that sends
reasoning separately gives them). GenderBench runs in its own environment (tests/genderbench_parity.py).
"""

from __future__ import annotations

import hashlib
from functools import cache

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, ours_of, prompt_key

from genderprobe.reading.reasoning import answer_text
from genderprobe.studies.inventories import probe as inv
from genderprobe.studies.inventories.dataset import SOURCES, items

PROBE = "InventoriesProbe"
_HONEST = inv.inventories_metrics

READ_SHAPES = (
    "**Name:** {Name}\n\n**Backstory:** {P} grew up in a mining town. {Q} father worked nights, and {p} learned "
    "early to look after {o}self.",
    "{Name} was born in Lisbon. {P}'s the eldest of three; {q} mother, a nurse, raised {o} alone. {P} never "
    "forgot it.",
    "Character Profile: {NAME}\n\nAge: 34\n\n{P} is a lawyer. When {x} left {o}, {p} moved to the coast. "
    "{Q} work is {q} life.",
    "{P.upper()} IS A FORMER SOLDIER. {Q.upper()} SCARS TELL THE STORY.",
    "{Name} ({q} friends call {o} by a nickname) grew up poor; {p}'d steal bread for {q} siblings.",
    "Meet {Name}. {P} is quiet, but {q} eyes miss nothing.\n\n### Early life\n{P} lost {q} mother at ten.",
)
UNREAD_SHAPES = (
    "They grew up in a small town. Their parents ran a bakery, and they learned patience early.",
    "I was born in Leeds. My father taught me to fight, and I never stopped.",
    "A character who is {trait} could have many backstories: perhaps they were raised by strict parents.",
    "Whether he or she is the hero, the character's past should shape the plot.",
    "I'm sorry, but I can't help with that request.",
    "",
)
REASONING = "<think>Should the character be a man? He could be. Or she could be a woman. His or her past...</think>\n\n"
MEN = ("Daniel", "Tomas", "Arjun", "Kwame")
WOMEN = ("Maria", "Aiko", "Fatima", "Elena")


def _digest(key: str, salt: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")


def _fill(shape: str, male: bool, name: str, trait: str) -> str:
    p, q, o = ("he", "his", "him") if male else ("she", "her", "her")
    x = "she" if male else "he"  # a partner of the other gender
    out = shape.replace("{P.upper()}", p.upper()).replace("{Q.upper()}", q.upper())
    return out.format(P=p.capitalize(), p=p, Q=q.capitalize(), q=q, o=o, x=x, Name=name, NAME=name.upper(),
                      trait=trait)


def _profile(item, key: str, salt: str, lean: float, unread: float, reasoning: float) -> str:
    d = _digest(key, salt)
    u = (d % 10_000) / 10_000
    if u < unread:
        text = _fill(UNREAD_SHAPES[d // 10_000 % len(UNREAD_SHAPES)], True, "", item.description[3:])
    else:
        stereotyped = (d // 10 ** 5 % 1000) / 1000 < lean
        male = (item.gender == "male") == stereotyped
        name = (MEN if male else WOMEN)[d // 10 ** 8 % 4]
        text = _fill(READ_SHAPES[d // 10 ** 9 % len(READ_SHAPES)], male, name, item.description)
    if text and (d // 10 ** 11 % 1000) / 1000 < reasoning:
        text = REASONING + text
    return text


MIXES = {
    # name: (lean, unread, reasoning, probe parameters, seed, bootstrap cycles)
    "stereotyped, 60 traits, five attempts": (0.75, 0.15, 0.05, {"sample_k": 60, "num_repetitions": 5}, 123, 200),
    "against the stereotype, mostly unread, 25 traits": (0.3, 0.7, 0.0,
                                                         {"sample_k": 25, "num_repetitions": 2}, 7, 200),
}


@cache
def _answers(mix: str) -> dict[str, tuple[str, str]]:
    lean, unread, reasoning, params, seed, cycles = MIXES[mix]
    out = {}
    for item in items():
        for r in range(params.get("num_repetitions", inv.NUM_REPETITIONS)):
            key = prompt_key(item.prompt, r)
            text = _profile(item, key, mix, lean, unread, reasoning)
            out[key] = (text, answer_text(text) if text.startswith("<think>") else text)
    return out


_OURS: dict[str, tuple] = {}


def run_ours(mix: str):
    if inv.inventories_metrics is not _HONEST:
        return _run_ours(mix)
    if mix not in _OURS:
        _OURS[mix] = _run_ours(mix)
    return _OURS[mix]


def _run_ours(mix: str):
    lean, unread, reasoning, params, seed, cycles = MIXES[mix]
    answers = _answers(mix)
    return parity.run_probe(inv.Inventories(**params), lambda r: answers[prompt_key(r.prompt, r.repetition)][0],
                            seed=seed, cycles=cycles)


_GB = parity.GenderBenchRuns(PROBE)


def genderbench(mix: str):
    lean, unread, reasoning, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: {k: theirs for k, (_, theirs) in _answers(mix).items()}, seed=seed,
                   cycles=cycles, params=params)


venv = parity.venv_fixture(PROBE)


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    ours = run_ours(mix)
    theirs = genderbench(mix)
    parity.assert_same(ours, theirs)
    assert set(theirs.marks) == {m.metric for m in inv.MARKS}
    assert {"masculine_rate", "disparity", "stereotype_rate", "undetected_rate_items",
            "undetected_rate_attempts"} <= set(theirs.metrics)
    assert set(theirs.metrics) <= {f"{k}_{s}" for k in ("masculine_rate", "stereotype_rate") for s in SOURCES} | {
        "masculine_rate", "disparity", "stereotype_rate", "undetected_rate_items", "undetected_rate_attempts"}


def test_the_mixes_reach_what_they_are_for(venv):
    """Unread answers, reasoning blocks, marks other than A, undetected items."""
    full, sparse = (genderbench(m) for m in MIXES)
    _, _, records = run_ours(list(MIXES)[0])
    assert full.evaluations.count(None) > 50
    assert sum(r["answer"].startswith("<think>") for r in records) > 10
    assert sum(bool(r.get("refusal")) for r in records) > 5
    assert full.marks["stereotype_rate"] >= 2
    # Few traits read: inventories with one gender's traits only (stereotype_rate NaN, its mark none), and
    # resamples without an inventory's read traits (GenderBench has no metric of it there).
    assert sparse.metrics["undetected_rate_items"] > 0.2
    assert sparse.metrics["stereotype_rate"] is None and sparse.marks["stereotype_rate"] is None
    assert sparse.metrics["masculine_rate"] is not None


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = list(MIXES)[0]

    def planted(*args):
        metrics = _HONEST(*args)

        def changed(s):
            out = metrics(s)
            out["stereotype_rate"] = out["stereotype_rate"] + 1e-7
            return out

        return changed

    monkeypatch.setattr(inv, "inventories_metrics", planted)
    result, _, _ = run_ours(mix)
    found = differences(ours_of(result), genderbench(mix))
    assert found and all("stereotype_rate" in line for line in found), found
    assert any(line.startswith("metric stereotype_rate") for line in found)
