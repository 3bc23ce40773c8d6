"""The three multilingual probes end to end: calibration, hand-computed metrics, judge loop, CLI."""

import json

import pytest
from click.testing import CliRunner
from instruments import ScriptedModel

from genderprobe.contract import ListSink, RunContext
from genderprobe.engine.runner import Runner
from genderprobe.errors import UserError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.models.reference import ReferenceModel
from genderprobe.studies.multilingual.dataset import LANGUAGES, WORD_CLASSES, word_list
from genderprobe.studies.multilingual.dialogue_probe import MultilingualDialogue
from genderprobe.studies.multilingual.pronouns_probe import MultilingualPronouns
from genderprobe.studies.multilingual.topics import REJECTED_AGAIN, REPEATED, TOPICS
from genderprobe.studies.multilingual.words_probe import MultilingualWords

RESAMPLES = 200


def _run(probe, model, judge=None, **params):
    config = RunConfig(model=model, judge=judge, n_resamples=RESAMPLES, use_cache=False)
    return run_probe(probe, model, config=config, **params)


def _local(probe, model, judge=None):
    sink = ListSink()
    ctx = RunContext(ask=Runner(model), records=sink, judge=Runner(judge) if judge else None,
                     n_resamples=RESAMPLES)
    return probe.run(ctx), sink.records


def _contains_one(est):
    return est.value is not None and est.ci_low <= 1.0 <= est.ci_high


# -- descriptive words -------------------------------------------------------------------


@pytest.fixture(scope="module")
def words_runs():
    return {p: _run("multilingual-words", f"reference:{p}") for p in ("unbiased", "biased", "biased-female")}


def test_words_unbiased_gives_parity_for_every_word_and_class(words_runs):
    out = words_runs["unbiased"]
    assert out.result.counts["prompts"] == 360 * 6 and out.result.counts["undetected"] == 0
    for lang in LANGUAGES:
        per_word = out.result.breakdowns[f"di_word_{lang}"]
        assert len(per_word) == len(word_list(lang).words)
        assert all(e.value == 1.0 and _contains_one(e) for e in per_word.values())
        for c in WORD_CLASSES:
            assert out.result.metrics[f"di_{c}_{lang}"].value == pytest.approx(1.0)
            assert _contains_one(out.result.metrics[f"di_{c}_{lang}"])
    assert all(_contains_one(out.result.metrics[f"di_{c}"]) for c in WORD_CLASSES)


@pytest.mark.parametrize("persona,communal,standout", [("biased", 3.0, 1 / 3), ("biased-female", 1 / 3, 3.0)])
def test_words_biased_personas_lean_the_expected_way(words_runs, persona, communal, standout):
    metrics = words_runs[persona].result.metrics
    for suffix in [f"_{lang}" for lang in LANGUAGES] + [""]:
        assert metrics[f"di_communal{suffix}"].value == pytest.approx(communal)
        assert metrics[f"di_standout{suffix}"].value == pytest.approx(standout)
        assert not _contains_one(metrics[f"di_communal{suffix}"])
        assert not _contains_one(metrics[f"di_standout{suffix}"])
        for c in ("personality_quality", "outlook", "imaginative"):
            assert _contains_one(metrics[f"di_{c}{suffix}"])


def test_words_charts_and_tables(words_runs):
    result = words_runs["biased"].result
    heatmap = next(c for c in result.charts if c["type"] == "heatmap")
    assert heatmap["center"] == 1.0 and heatmap["rows"] == list(WORD_CLASSES)
    assert heatmap["columns"][-1] == "all languages" and len(heatmap["columns"]) == 7
    assert heatmap["values"][WORD_CLASSES.index("communal")][0] == pytest.approx(3.0)
    titles = [t.title for t in result.tables]
    assert any("English: the 10 words furthest from parity" in t for t in titles)


def test_words_hand_computed_disparate_impact():
    def answer(prompt, rep):
        if " female " in prompt:
            return "1. Caring\n2. Witty\n3. brave"
        if "James" in prompt and "nurse" in prompt:
            return "No."  # no list word: undetected, left out
        return "caring, witty" if "Joseph" in prompt else "witty"

    probe = MultilingualWords(languages=("en",), ages=(20,))
    result, records = _local(probe, ScriptedModel(answer))
    assert len(records) == 120 and result.counts["undetected"] == 1
    # caring: every woman, 20 of the 59 answered men -> (60/60) / (20/59).
    caring = result.breakdowns["di_word_en"]["caring"]
    assert caring.value == pytest.approx(59 / 20)
    assert result.breakdowns["di_word_en"]["witty"].value == pytest.approx(1.0)
    assert result.breakdowns["di_word_en"]["loving"].value is None  # never chosen
    assert result.metrics["di_communal_en"].value == pytest.approx(59 / 20)
    assert result.metrics["di_standout_en"].value == pytest.approx(1.0)
    # A short answer that names no list word is itself shown as unmatched.
    assert result.counts["words_unmatched"] == 61
    assert result.extra["unmatched_words"]["en"] == {"brave": 60, "No": 1}
    assert caring.ci_low < caring.value < caring.ci_high


# -- pronouns ---------------------------------------------------------------------------------


def test_pronouns_calibration():
    unbiased = _run("multilingual-pronouns", "reference:unbiased").result
    biased = _run("multilingual-pronouns", "reference:biased").result
    assert unbiased.counts["undetected"] == 0 and unbiased.counts["attempts"] == 10 * sum(
        len(word_list(lang).words) for lang in LANGUAGES)
    for lang in LANGUAGES:
        assert all(e.value == 1.0 and _contains_one(e) for e in unbiased.breakdowns[f"di_word_{lang}"].values())
        for c in WORD_CLASSES:
            assert _contains_one(unbiased.metrics[f"di_{c}_{lang}"])
        assert biased.metrics[f"di_communal_{lang}"].value == pytest.approx(4.0)
        assert biased.metrics[f"di_standout_{lang}"].value == pytest.approx(0.25)
        assert biased.metrics[f"di_communal_{lang}"].ci_low > 1 > biased.metrics[f"di_standout_{lang}"].ci_high
    assert biased.metrics["undetected_rate"].value == 0.0


def test_pronouns_words_k_spreads_a_quick_run_over_every_class():
    probe = MultilingualPronouns(languages=("en", "zh"), num_repetitions=1, words_k=10)
    for lang in ("en", "zh"):
        full, quick = word_list(lang), probe.words(lang)
        assert len(quick.words) == 10 and set(quick.words) <= set(full.words)
        assert quick.words[0] == full.words[0] and quick.words[-1] == full.words[-1]
        assert set(quick.classes) == set(WORD_CLASSES)
    result, records = _local(probe, ScriptedModel(lambda prompt, rep: "She"))
    assert len(records) == 20 and {r["word"] for r in records} == set(probe.words("en").words + probe.words("zh").words)
    assert set(result.breakdowns["di_word_en"]) == set(probe.words("en").words)
    # More words than the list holds is the whole list.
    assert MultilingualPronouns(languages=("en",), words_k=1000).words("en") == word_list("en")


def test_pronouns_hand_computed_with_undetected_answers():
    def answer(prompt, rep):
        if "most caring person" in prompt:
            return ["She is the most caring person I have ever seen.", "she", "He", "He or she."][rep]
        return "She" if rep % 2 else "he"

    result, records = _local(MultilingualPronouns(languages=("en",), num_repetitions=4), ScriptedModel(answer))
    assert len(records) == 4 * 98
    assert result.breakdowns["di_word_en"]["caring"].value == pytest.approx(2.0)
    assert result.counts["undetected"] == 1 and result.counts["she"] == 2 + 2 * 97
    # communal: 24 words, she 2 + 23*2, he 1 + 23*2
    assert result.metrics["di_communal_en"].value == pytest.approx(48 / 47)
    assert result.metrics["undetected_rate_en"].value == pytest.approx(1 / (4 * 98))
    assert any(c["id"] == "di_word_en" and c["type"] == "forest" for c in result.charts)


# -- dialogues ---------------------------------------------------------------------------------


def test_dialogue_calibration_unbiased_is_not_significant():
    result = _run("multilingual-dialogue", "reference:unbiased", judge="reference:unbiased",
                  dialogues_per_pairing=14).result
    assert result.counts == {"dialogues": 336, "answered": 336, "errors": 0, "refusals": 0, "wrong_language": 0,
                             "labelled": 336, "unresolved": 0, "unclear": 0, "judge_errors": 0,
                             "stopped_early": 0}
    for lang in LANGUAGES:
        test = result.extra["independence_tests"][lang]
        assert test["p_value"] == pytest.approx(1.0) and not test["significant"]
        shares = result.breakdowns[f"topics_{lang}"]
        assert all(e.value == pytest.approx(1 / 7) for e in shares.values())


@pytest.mark.parametrize("persona,expected", [
    ("biased", {"FF": "Appearance", "FM": "Complaints/Conflicts", "MF": "Express affection/goodwill",
                "MM": "Career/Personal development"}),
    ("biased-female", {"FF": "Career/Personal development", "FM": "Express affection/goodwill",
                       "MF": "Complaints/Conflicts", "MM": "Appearance"}),
])
def test_dialogue_calibration_biased_is_significant_in_the_expected_cells(persona, expected):
    result = _run("multilingual-dialogue", f"reference:{persona}", judge="reference:unbiased",
                  dialogues_per_pairing=10).result
    for lang in LANGUAGES:
        test = result.extra["independence_tests"][lang]
        # 10 dialogues a pairing: expected counts of 2.5, so a Monte Carlo exact test, whose 9,999 tables
        # say p <= 1e-4 (Holm over the six languages: 6e-4).
        assert test["significant"] and test["p_value"] == 1 / 10_000 and test["p_holm"] < 0.001
        for pairing, topic in expected.items():
            assert result.breakdowns[f"topics_{lang}"][f"{pairing} {topic}"].value == 1.0
        called = {d["topic"]: d["highest"] for d in test["largest_differences"]}
        assert called and all(expected[p] == t for t, p in called.items())
    bars = [c for c in result.charts if c["type"] == "bar"]
    assert len(bars) == 6 and bars[0]["categories"] == list(TOPICS)


def test_dialogue_with_the_random_judge_counts_unresolved():
    out = _run("multilingual-dialogue", "reference:unbiased", judge="reference:random",
               languages=("en", "ko"), dialogues_per_pairing=7, max_rounds=2)
    result = out.result
    assert result.counts["labelled"] + result.counts["unresolved"] == 56
    assert 0 < result.counts["unresolved"] < 56
    unresolved = [r for r in out.records if r["code"] == "unresolved"]
    assert all(r["rounds"] == 2 and len(r["judge_turns"]) == 2 for r in unresolved)


def test_wrong_language_dialogues_are_excluded_and_their_rate_reported():
    chinese = "“你今天过得怎么样？”\n“还不错，谢谢。”"
    english = '"How was your day?"\n"Good, thanks, and you?"'
    model = ScriptedModel(lambda prompt, rep: english if rep % 4 == 0 else chinese)
    probe = MultilingualDialogue(languages=("zh",), dialogues_per_pairing=8)
    result, records = _local(probe, model, judge=ReferenceModel("unbiased"))
    assert result.counts["wrong_language"] == 8 and result.counts["labelled"] == 24
    assert result.metrics["wrong_language_rate_zh"].value == pytest.approx(0.25)
    assert {r["detected_language"] for r in records if r["code"] == "wrong_language"} == {"en"}
    assert len(result.evidence["wrong_language"]) == 8
    # An unknown dialogue is General/Greetings to the reference judge: one topic, no test.
    assert result.extra["independence_tests"]["zh"]["p_value"] is None


def test_judge_loop_feeds_the_objection_back_and_stops_after_max_rounds():
    def judge_answer(prompt, rep):
        if prompt.startswith("Do you agree"):
            return "No, I disagree: it is about family." if rep == 0 else "Yes, I agree."
        return "5. Complaints/Conflicts" if rep == 0 else "7. Family/Housework"

    judge = ScriptedModel(judge_answer)
    probe = MultilingualDialogue(languages=("en",), dialogues_per_pairing=2, max_rounds=3)
    result, records = _local(probe, ReferenceModel("unbiased"), judge=judge)
    assert result.counts["labelled"] == 8 and all(r["code"] == "Family/Housework" for r in records)
    second = [r for r in judge.asked if r.repetition == 1 and r.messages[-1][1].startswith("A reviewer")]
    assert second and second[0].messages[1] == ("assistant", "5. Complaints/Conflicts")
    assert "No, I disagree: it is about family." in second[0].messages[2][1]

    # Sampling judges may change their minds: every round is asked.
    stubborn = ScriptedModel(lambda p, r: "No." if p.startswith("Do you agree") else "2. Appearance")
    result, records = _local(MultilingualDialogue(languages=("en",), dialogues_per_pairing=1, max_rounds=3,
                                                  judge_temperature=0.7),
                             ReferenceModel("unbiased"), judge=stubborn)
    assert result.counts["unresolved"] == 4 and len(stubborn.asked) == 4 * 3 * 2
    assert result.counts["stopped_early"] == 0 and "warnings" not in result.extra


def test_a_greedy_judge_that_repeats_itself_stops_early_and_says_so():
    """Issue 30: at temperature 0 the labeller repeated the same reply five rounds. A reply repeated
    word for word, or a topic the checker already rejected (the same question gets the same answer),
    ends the loop: the dialogue is unresolved, with the reason in its record and a warning."""
    stubborn = ScriptedModel(lambda p, r: "No." if p.startswith("Do you agree") else "2. Appearance")
    result, records = _local(MultilingualDialogue(languages=("en",), dialogues_per_pairing=1, max_rounds=5),
                             ReferenceModel("unbiased"), judge=stubborn)
    # round 1: labeller and checker; round 2: the labeller repeats itself, and nothing more is asked
    assert len(stubborn.asked) == 4 * 3 and result.counts["unresolved"] == 4
    assert all(r["code"] == "unresolved" and r["rounds"] == 2 and r["stopped"] == REPEATED for r in records)
    assert result.counts["stopped_early"] == 4 and "stopped early for 4 dialogue(s)" in result.extra["warnings"][0]

    reworded = ScriptedModel(lambda p, r: "No." if p.startswith("Do you agree")
                             else ("2. Appearance", "The topic is 2. Appearance.", "3. Hobby/Activities")[r])
    result, records = _local(MultilingualDialogue(languages=("en",), dialogues_per_pairing=1, max_rounds=5),
                             ReferenceModel("unbiased"), judge=reworded)
    assert all(r["stopped"] == REJECTED_AGAIN and r["rounds"] == 2 for r in records)
    assert sum(p.messages[0][1].startswith("Do you agree") for p in reworded.asked) == 4  # round 1's only


def test_dialogue_shares_have_honest_intervals_at_tiny_n():
    """Issue 30: "unresolved 1.000 [1, 1]" stood beside [0.342, 1] for the same dialogues; every
    share of dialogues now has the Wilson interval the lost-answer table uses."""
    stubborn = ScriptedModel(lambda p, r: "No." if p.startswith("Do you agree") else "2. Appearance")
    result, _ = _local(MultilingualDialogue(languages=("en",), dialogues_per_pairing=1, max_rounds=2),
                       ReferenceModel("unbiased"), judge=stubborn)
    unresolved = result.metrics["unresolved_rate"]
    assert unresolved.value == 1.0 and unresolved.n == 4 and unresolved.ci_low == pytest.approx(0.5101, abs=1e-4)
    assert unresolved.ci_high == 1.0
    pairing = result.losses["kinds"]["undetected"]["groups"]["FF"]
    assert (pairing["value"], pairing["ci_low"]) == (1.0, pytest.approx(0.2065, abs=1e-4))
    assert result.metrics["unresolved_rate_en"] == unresolved
    labelled = _run("multilingual-dialogue", "reference:biased", judge="reference:unbiased", languages=("en",),
                    dialogues_per_pairing=2).result.breakdowns["topics_en"]["FF Appearance"]
    assert (labelled.value, labelled.n) == (1.0, 2) and labelled.ci_low == pytest.approx(0.3424, abs=1e-4)


# -- parameters and command line ---------------------------------------------------------------


@pytest.mark.parametrize("cls,kwargs", [
    (MultilingualWords, {"languages": ("en", "de")}),
    (MultilingualWords, {"ages": (0,)}),
    (MultilingualWords, {"ages": ()}),
    (MultilingualPronouns, {"num_repetitions": 0}),
    (MultilingualDialogue, {"dialogues_per_pairing": 0}),
    (MultilingualDialogue, {"max_rounds": 0}),
    (MultilingualDialogue, {"judge_temperature": 5.0}),
])
def test_bad_parameters_are_refused_with_one_sentence(cls, kwargs):
    with pytest.raises(UserError) as err:
        cls(**kwargs)
    assert str(err.value).count(". ") == 0 and str(err.value).endswith(".")


def test_cli_run_writes_results_and_records(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "multilingual-words", "-m", "reference:biased", "--languages",
                                       "en,zh", "--ages", "25", "--resamples", "50", "--out", str(out),
                                       "--details"])  # the tables: --details
    assert result.exit_code == 0, result.output
    assert "Disparate impact by word class" in result.output and "Chinese" in result.output
    doc = json.loads((out / "results.json").read_text())
    assert doc["parameters"]["probe"]["languages"] == ["en", "zh"]
    assert doc["parameters"]["generation"]["temperature"] == 1.0
    assert doc["metrics"]["di_communal_zh"]["value"] == pytest.approx(3.0)
    records = (out / "records.jsonl").read_text().splitlines()
    assert len(records) == 2 * 120 and json.loads(records[0])["language"] == "en"


@pytest.mark.parametrize("args,phrase", [
    (["multilingual-words", "-m", "reference:unbiased", "--languages", "en,xx"], "Unknown language 'xx'"),
    (["multilingual-dialogue", "-m", "reference:unbiased"], "needs a judge"),
    (["multilingual-pronouns", "-m", "reference:unbiased", "--repetitions", "0"], "num_repetitions"),
])
def test_cli_bad_input_exits_2_with_one_sentence(tmp_path, args, phrase):
    result = CliRunner().invoke(main, ["run", *args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and phrase in result.output
    assert "Traceback" not in result.output and not (tmp_path / "o" / "results.json").exists()


def test_occupations_limits_a_words_run_to_the_first_pairs(tmp_path):
    from genderprobe.errors import UserError
    from genderprobe.interfaces.api import RunConfig, run_probe

    config = RunConfig(model="reference:random", use_cache=False, n_resamples=20)
    out = run_probe("multilingual-words", "reference:random", config=config, languages=("en",), ages=(30,),
                    occupation_k=2)
    assert out.document["run"]["requests"] == out.document["counts"]["prompts"] == 12
    assert {r["occupation"] for r in out.records} == {"student", "entrepreneur"}  # the first two pairs of the list
    with pytest.raises(UserError, match="occupation_k"):
        run_probe("multilingual-words", "reference:random", config=config, occupation_k=21)
