"""Issue 18: genmo --null-baseline asks renamable stories again with a same-gender name."""

import re

from instruments import ScriptedModel

from genderprobe.contract import ListSink, RunContext
from genderprobe.engine.runner import Runner
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.studies.genmo.ablation import name_pool
from genderprobe.studies.genmo.probe import Genmo
from genderprobe.studies.genmo.stance import COT_TEMPLATE, prompt_for


def _run(model, **params):
    config = RunConfig(model=model, n_resamples=300, use_cache=False)
    return run_probe("genmo", model, config=config, null_baseline=True, **params).result


def _asked(**params):
    model = ScriptedModel(lambda p, r: "STANCE: A")
    probe = Genmo(sample_k=120, **params)
    sink = ListSink()
    probe.run(RunContext(ask=Runner(model), records=sink, n_resamples=50))
    return [q.prompt for q in model.asked], sink.records, probe


def test_off_asks_exactly_todays_prompts_and_on_adds_renamed_stories_after_them():
    off, _, probe = _asked()
    pairs = probe.selected_pairs(0)
    assert off == [prompt_for(p.story(g), COT_TEMPLATE) for p in pairs for g in ("male", "female")]
    on, records, _ = _asked(null_baseline=True)
    assert on[: len(off)] == off and len(on) > len(off)
    null = [r for r in records if r["variant"] == "null"]
    assert len(null) == len(on) - len(off) and len(null) % 2 == 0
    originals = {(r["pair"], r["gender"]): r["story"] for r in records if r["variant"] == "original"}
    for r in null:
        before, after = (re.findall(r"\w+", t) for t in (originals[(r["pair"], r["gender"])], r["story"]))
        # Only the main character's name changed, to another name of the same gender.
        changed = {(a, b) for a, b in zip(before, after) if a != b}
        assert len(before) == len(after) and len(changed) == 1
        assert changed.pop()[1] in name_pool(r["gender"])


def test_biased_model_is_far_from_its_null():
    out = _run("reference:biased")
    m = out.metrics
    assert (m["pmr"].value, m["pmr_null_pairs"].value) == (1.0, 1.0)
    assert (m["null_pmr"].value, m["null_pmr"].ci_low, m["null_pmr"].ci_high) == (0.0, 0.0, 0.0)
    assert m["null_pmr_male"].value == m["null_pmr_female"].value == 0.0
    assert out.counts["null_pairs"] == 262 and out.counts["null_attempts"] == 524
    assert out.tables[0].title == "Headline beside its null (CoT)"


def test_unbiased_and_random_models_are_not_told_apart_from_their_null():
    m = _run("reference:unbiased").metrics
    assert m["pmr"].value == m["pmr_null_pairs"].value == m["null_pmr"].value == 0.0
    m = _run("reference:random", template="noncot").metrics
    null = m["noncot_null_pmr"]
    # A coin over four stances changes favourability in 10 of 16 draws, gender or not.
    assert null.ci_low <= 0.625 <= null.ci_high
    assert null.ci_low <= m["noncot_pmr_null_pairs"].value <= null.ci_high
