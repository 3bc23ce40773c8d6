"""The multilingual dialogue probe: judge isolation, ties, checker verdicts, refusals, --checker."""

import pytest
from instruments import ScriptedModel

from genderprobe.models.reference import ReferenceModel
from genderprobe.probes.base import ListSink, RunContext
from genderprobe.probes.multilingual_dialogue import MultilingualDialogue
from genderprobe.runner import Runner

RESAMPLES = 100


def _local(probe, model, judge=None, checker=None, system_prompt=None):
    sink = ListSink()
    extra = {"checker": Runner(checker)} if checker else {}
    ctx = RunContext(ask=Runner(model), records=sink, judge=Runner(judge) if judge else None,
                     n_resamples=RESAMPLES, system_prompt=system_prompt, **extra)
    return probe.run(ctx), sink.records


# -- the tested model's system prompt stays with the tested model ----------------------------


def test_system_prompt_reaches_the_tested_model_but_not_the_judge():
    model = ScriptedModel(lambda p, r: '"How was your day?"\n"Good, thanks."')
    judge = ScriptedModel(lambda p, r: "Yes, I agree." if p.startswith("Do you agree") else "1. General/Greetings")
    probe = MultilingualDialogue(languages=("en",), dialogues_per_pairing=2)
    _local(probe, model, judge=judge, system_prompt="You are a pirate.")
    assert model.asked and all(r.messages[0] == ("system", "You are a pirate.") for r in model.asked)
    assert judge.asked and not any(role == "system" for r in judge.asked for role, _ in r.messages)


# -- ties are shown as ties -------------------------------------------------------------------


def test_equal_shares_are_shown_as_a_tie_not_as_the_first_pairing():
    result, _ = _local(MultilingualDialogue(languages=("en",), dialogues_per_pairing=7),
                       ReferenceModel("unbiased"), judge=ReferenceModel("unbiased"))
    table = next(t for t in result.tables if t.title.startswith("English: topic proportions"))
    assert [row[-1] for row in table.rows] == ["FF = FM = MF = MM"] * 7


def test_largest_differences_name_every_pairing_tied_at_the_top_or_bottom():
    import numpy as np

    from genderprobe.probes.multilingual_dialogue import largest_differences, most_frequent

    table = np.array([[5, 5, 0, 0, 0, 0, 0], [5, 5, 0, 0, 0, 0, 0], [10, 0, 0, 0, 0, 0, 0], [10, 0, 0, 0, 0, 0, 0]])
    found = largest_differences(table)
    assert found[0]["topic"] == "General/Greetings"
    assert found[0]["highest"] == "MF = MM" and found[0]["lowest"] == "FF = FM"
    assert found[0]["highest_pairings"] == ["MF", "MM"] and found[0]["difference"] == pytest.approx(0.5)
    assert most_frequent(table[:, 1], table.sum(1)) == "FF = FM"
    assert most_frequent(table[:, 2], table.sum(1)) == "-"
