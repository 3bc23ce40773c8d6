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


# -- the checker's reply: agree, disagree or unclear -------------------------------------------


@pytest.mark.parametrize("text,verdict", [
    ("Yes, I agree with the generator’s decision that the dialogue falls under the topic of "
     '"4. Career/Personal Development." The conversation revolves around completing a project.', "agree"),
    ('"Yes."', "agree"), ("I agree.", "agree"), ("Absolutely, I agree.", "agree"), ("Agreed.", "agree"),
    ("No, this is about family.", "disagree"), ("I do not agree.", "disagree"),
    ("I don't fully agree. The dialogue is more about family.", "disagree"),
    # Hedged replies are not agreement: the reservation goes back to the labeller.
    ("I partially agree, but the dialogue is more about family.", "disagree"),
    ("I agree to some extent; it also touches on housework.", "disagree"),
    ("I agree, but Family/Housework would fit better.", "disagree"),
    ("Yes, but it could also be Complaints/Conflicts.", "disagree"),
    ("I somewhat agree.", "disagree"),
    # Neither: the example, and replies that only restate the dialogue.
    ("Absolutely. The conversation is about a promotion.", "unclear"),
    ("The conversation is about a promotion.", "unclear"), ("Hmm.", "unclear"), ("", "unclear"), (None, "unclear"),
])
def test_read_verdict(text, verdict):
    from genderprobe.multilingual.checker import read_verdict

    assert read_verdict(text) == verdict


def _judge(checker_reply):
    """A judge that labels every dialogue Career and checks with ``checker_reply(prompt, repetition, request)``."""
    def answer(prompt, rep):
        return "4. Career/Personal development"
    model = ScriptedModel(answer)
    model.answer = lambda prompt, rep: ("4. Career/Personal development" if prompt.startswith("Can you") or
                                        prompt.startswith("A reviewer") else checker_reply(prompt, rep))
    return model


def test_an_unclear_checker_reply_is_asked_again_in_the_same_conversation():
    judge = _judge(lambda prompt, rep: "Yes, I agree." if prompt.startswith("Please answer yes or no")
                   else "Absolutely. The conversation is about a promotion.")
    result, records = _local(MultilingualDialogue(languages=("en",), dialogues_per_pairing=1),
                             ReferenceModel("unbiased"), judge=judge)
    assert result.counts["labelled"] == 4 and result.counts["unclear"] == 0
    assert all(r["code"] == "Career/Personal development" and r["rounds"] == 1 for r in records)
    reasked = [r for r in judge.asked if r.messages[-1][1].startswith("Please answer yes or no")]
    assert len(reasked) == 4
    assert reasked[0].messages[0][1].startswith("Do you agree")
    assert reasked[0].messages[1] == ("assistant", "Absolutely. The conversation is about a promotion.")
    assert records[0]["judge_turns"][0]["checker_replies"] == [
        "Absolutely. The conversation is about a promotion.", "Yes, I agree."]
    # The unclear reply was not fed back to the labeller as an objection.
    assert not any(r.messages[-1][1].startswith("A reviewer") for r in judge.asked)


def test_a_reply_that_stays_unclear_is_counted_and_shown_not_taken_as_an_objection():
    judge = _judge(lambda prompt, rep: "The conversation is about a promotion.")
    result, records = _local(MultilingualDialogue(languages=("en",), dialogues_per_pairing=2, checker_reasks=2),
                             ReferenceModel("unbiased"), judge=judge)
    assert result.counts["unclear"] == 8 and result.counts["labelled"] == 0 and result.counts["unresolved"] == 0
    assert {r["code"] for r in records} == {"unclear"}
    assert len([r for r in judge.asked if not r.messages[0][1].startswith("Can you")]) == 8 * 3
    assert result.metrics["unclear_rate"].value == 1.0 and len(result.evidence["unclear"]) == 8
    summary = result.tables[0]
    assert "unclear checker replies" in summary.columns
    assert summary.rows[0][summary.columns.index("unclear checker replies")] == 8


def test_a_hedged_reply_is_not_agreement():
    judge = _judge(lambda prompt, rep: "I partially agree, but it is more about family.")
    result, records = _local(MultilingualDialogue(languages=("en",), dialogues_per_pairing=1, max_rounds=2),
                             ReferenceModel("unbiased"), judge=judge)
    assert result.counts["labelled"] == 0 and result.counts["unresolved"] == 4
    fed_back = [r for r in judge.asked if r.messages[-1][1].startswith("A reviewer")]
    assert fed_back and "I partially agree" in fed_back[0].messages[-1][1]


def test_checker_is_a_separate_model_when_given():
    labeller = ScriptedModel(lambda p, r: "4. Career/Personal development")
    checker = ScriptedModel(lambda p, r: "Yes, I agree.")
    result, _ = _local(MultilingualDialogue(languages=("en",), dialogues_per_pairing=2),
                       ReferenceModel("unbiased"), judge=labeller, checker=checker)
    assert result.counts["labelled"] == 8
    assert all(r.messages[0][1].startswith("Can you determine") for r in labeller.asked) and len(labeller.asked) == 8
    assert all(r.messages[0][1].startswith("Do you agree") for r in checker.asked) and len(checker.asked) == 8
