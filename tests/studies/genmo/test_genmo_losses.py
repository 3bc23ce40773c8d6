"""GenMO counts its lost answers (refusals and unread stances) by the story's gender, per template."""

from collections.abc import Sequence

import pytest

from genderprobe.contract import ListSink, RunContext
from genderprobe.engine.runner import Runner
from genderprobe.models.base import Request, Response, SyncBatchModel
from genderprobe.studies.genmo.probe import Genmo
from genderprobe.studies.genmo.stance import TEMPLATES

REFUSAL = "I'm sorry, but I can't make moral judgements about people."
UNREAD = "That depends on the situation."


class _GenderedModel(SyncBatchModel):
    """Refuses every woman's story and fails to answer one in three men's stories
    readably under CoT; under non-CoT it refuses nothing and reads everything;
    requests for pairs whose index is a multiple of 10 fail outright."""

    spec = "scripted:genmo-losses"
    cacheable = False

    def __init__(self, stories: dict[str, tuple[int, str]]):
        self.stories = stories

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            prompt = r.messages[-1][1]
            story, template = next((prompt[: -len(t) - 1], n) for n, t in TEMPLATES.items() if prompt.endswith(t))
            pair, gender = self.stories[story]
            if pair % 10 == 0:
                out.append(Response.failure("server", "boom"))
            elif template == "noncot":
                out.append(Response(text="B. Immoral"))
            elif gender == "female":
                out.append(Response(text=REFUSAL))
            elif pair % 3 == 0:
                out.append(Response(text=UNREAD))
            else:
                out.append(Response(text="STANCE: A. Moral\nEXPLANATION: kind."))
        return out


def _run(template: str):
    probe = Genmo(sample_k=60, template=template)
    pairs = probe.selected_pairs(0)
    stories = {p.story(g): (p.index, g) for p in pairs for g in ("male", "female")}
    sink = ListSink()
    runner = Runner(_GenderedModel(stories), max_error_rate=None, max_retries=0)
    try:
        result = probe.run(RunContext(ask=runner, records=sink, n_resamples=50))
    finally:
        runner.close()
    answered = [p for p in pairs if p.index % 10]
    return result, sink.records, answered


def test_refusals_and_unread_answers_are_counted_by_gender():
    result, records, answered = _run("cot")
    n = len(answered)
    unread_men = sum(p.index % 3 == 0 for p in answered)
    m = result.metrics
    assert m["refusal_rate_female"].value == 1.0 and m["refusal_rate_female"].n == n  # errors left out
    assert m["refusal_rate_male"].value == 0.0
    assert m["undetected_rate_male"].value == pytest.approx(unread_men / n)
    assert m["undetected_rate_female"].value == 0.0  # a refusal is not counted twice
    kinds = result.losses["kinds"]
    assert kinds["refusal"]["test"]["p_value"] < 1e-6
    assert kinds["refusal"]["groups"]["female"]["lost"] == n
    assert result.counts["refusals"] == n
    assert sum(r.get("refusal", False) for r in records) == n
    assert any(t.title.startswith("Lost answers by gender") and "(CoT)" in t.title for t in result.tables)


def test_each_template_has_its_own_losses_and_the_primary_is_the_results_losses():
    result, _, answered = _run("both")
    m = result.metrics
    assert m["noncot_refusal_rate_female"].value == 0.0 and m["noncot_undetected_rate_male"].value == 0.0
    assert m["refusal_rate_female"].value == 1.0  # unprefixed: CoT, the primary template
    assert result.losses == result.extra["losses_by_template"]["cot"]
    assert set(result.extra["losses_by_template"]) == {"noncot", "cot"}
    titles = [t.title for t in result.tables if t.title.startswith("Lost answers")]
    assert len(titles) == 2 and "(Non-CoT)" in titles[0] and "(CoT)" in titles[1]
