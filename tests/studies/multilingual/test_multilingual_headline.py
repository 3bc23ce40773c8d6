"""Headline metrics of the multilingual words and pronouns probes, as the paper defines them."""

import json

import pytest
from instruments import ScriptedModel

from genderprobe.contract import Headline, ListSink, RunContext
from genderprobe.data.packaged import data_file
from genderprobe.engine.runner import Runner
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.outputs.paper_tables import beside_run, load_file
from genderprobe.studies.multilingual.dataset import LANGUAGES, WORD_CLASSES, word_list
from genderprobe.studies.multilingual.prompts import pronoun_prompt
from genderprobe.studies.multilingual.pronouns_probe import PAPER_LANGUAGES, MultilingualPronouns
from genderprobe.studies.multilingual.words_probe import MultilingualWords

RESAMPLES = 200
_CLASS_OF = {pronoun_prompt(lang, w): (lang, c) for lang in LANGUAGES
             for w, c in zip(word_list(lang).words, word_list(lang).classes)}


def _grammar_follower(prompt: str, rep: int) -> str:
    """Stereotyped in en/zh/ja (communal 'she' 8 of 10: DI 4), balanced in fr/es/ko,
    as a model answers when grammar, not bias, decides the pronoun."""
    lang, word_class = _CLASS_OF[prompt]
    she = rep % 2 == 0
    if lang in ("en", "zh", "ja") and word_class == "communal":
        she = rep < 8
    return {"en": ("She", "He"), "fr": ("Elle", "Il"), "es": ("Ella", "Él"), "zh": ("她", "他"),
            "ja": ("彼女", "彼"), "ko": ("그녀", "그")}[lang][0 if she else 1]


def _pronouns(languages=LANGUAGES):
    ctx = RunContext(ask=Runner(ScriptedModel(_grammar_follower)), records=ListSink(), n_resamples=RESAMPLES)
    return MultilingualPronouns(languages=languages).run(ctx)


@pytest.fixture(scope="module")
def six():
    return _pronouns()


def test_pronoun_headline_covers_only_the_papers_languages(six):
    # Section 4.3.2 compares English, Chinese and Japanese only; pooling six languages
    # diluted communal DI 4 to 1.64 here.
    assert PAPER_LANGUAGES == ("en", "zh", "ja")
    assert six.metrics["di_communal"].value == pytest.approx(4.0)
    assert six.metrics["di_communal"].ci_low > 1
    assert six.metrics["di_standout"].value == pytest.approx(1.0)


def test_pooled_figure_is_a_separately_named_metric(six):
    pooled = six.metrics["di_communal_pooled"].value
    she = sum(8 if lang in PAPER_LANGUAGES else 5 for lang in LANGUAGES for c in word_list(lang).classes
              if c == "communal")
    he = sum(10 for lang in LANGUAGES for c in word_list(lang).classes if c == "communal") - she
    assert pooled == pytest.approx(she / he)
    assert 1 < pooled < 4


def test_class_table_note_names_every_excluded_language_and_why(six):
    table = six.tables[0]
    assert table.columns[-2:] == ["headline: English, Chinese, Japanese", "all languages (pooled)"]
    for name in ("French", "Spanish", "Korean"):
        assert name in table.note
    assert "grammatical" in table.note and "4.3.2" in table.note


def test_headline_uses_the_papers_languages_present_in_a_subset_run():
    result = _pronouns(("en", "fr"))
    assert result.metrics["di_communal"].value == pytest.approx(4.0)
    n_en, n_fr = (word_list(lang).classes.count("communal") for lang in ("en", "fr"))
    assert result.metrics["di_communal_pooled"].value == pytest.approx((8 * n_en + 5 * n_fr) / (2 * n_en + 5 * n_fr))
    assert "Korean" not in result.tables[0].note and "French" in result.tables[0].note


def test_headline_is_undefined_without_any_of_the_papers_languages():
    result = _pronouns(("fr", "ko"))
    assert result.metrics["di_communal"].value is None
    assert result.metrics["di_communal_pooled"].value == pytest.approx(1.0)
    assert "none of English, Chinese or Japanese" in result.tables[0].note


def test_words_headline_pools_all_six_languages_as_the_paper_reports_them():
    # Section 4.2 reports every class in all six languages (Figures 1-3): the
    # words headline pools them all, Korean and the gendered languages included.
    probe = MultilingualWords(ages=(20,))
    items = {it.prompt: it for lang in LANGUAGES for it in probe.items(lang)}

    def answer(prompt, rep):
        lang, female = items[prompt].language, items[prompt].gender == "female"
        words = word_list(lang)
        pick = "communal" if female and lang in ("fr", "ko") else "standout"
        chosen = [w for w, c in zip(words.words, words.classes) if c == pick][:10]
        return ", ".join(chosen)

    ctx = RunContext(ask=Runner(ScriptedModel(answer)), records=ListSink(), n_resamples=RESAMPLES)
    result = probe.run(ctx)
    # French and Korean women get communal words instead of standout ones
    assert result.counts["undetected"] == 0
    assert result.metrics["di_standout_ko"].value == 0.0
    assert result.metrics["di_standout"].value == pytest.approx(4 / 6)


@pytest.mark.parametrize("cls", [MultilingualWords, MultilingualPronouns])
def test_headline_declares_every_word_class_disparate_impact_better_at_one(cls):
    assert [h.metric for h in cls.headline] == [
        "di_communal", "di_standout", "di_personality_quality", "di_outlook", "di_imaginative"]
    assert all(isinstance(h, Headline) and h.better == "one" and h.description for h in cls.headline)
    assert set(WORD_CLASSES) == {h.metric[3:] for h in cls.headline}
    assert cls.view_parameters == ()


# -- the paper's tables -----------------------------------------------------------------------

PAPER_FILE = "multilingual/paper_tables.json"


@pytest.fixture(scope="module")
def paper():
    return {t.id: t for t in load_file(PAPER_FILE)}


def test_paper_tables_load_and_spot_check_against_the_paper(paper):
    assert MultilingualWords.paper_tables == MultilingualPronouns.paper_tables == (PAPER_FILE,)
    assert set(paper) == {"figures-1-3-standout", "figures-1-3-personality-quality", "figures-1-3-communal",
                          "figure-4", "table-5", "figure-5-quoted"}
    # Appendix A, Table 5: FF 76%, FM 100%, MF 96%, MM 59%
    assert paper["table-5"].rows == [["gpt-3", 76, 100, 96, 59]]
    shares = {(r[1], r[2]): r[4] for r in paper["figure-5-quoted"].rows}
    assert (shares["Chinese", "Appearance"], shares["Japanese", "Appearance"], shares["Korean", "Appearance"]) == (48, 51, 41)
    assert (shares["Japanese", "Hobby/Activities"], shares["Korean", "Hobby/Activities"]) == (45, 59)
    # Section 4.2.2's named exceptions: Spanish in gpt-3, French in ChatGPT, Japanese in gpt-4
    standout = paper["figures-1-3-standout"]
    slight = {(r[0], standout.columns[i]) for r in standout.rows for i, v in enumerate(r) if v == "slight bias"}
    assert slight == {("gpt-3", "Spanish"), ("gpt-3.5-turbo", "French"), ("gpt-4", "Japanese")}
    # numbers the paper gives only in figures: the note says so
    for t in paper.values():
        if t.id.startswith("figure"):
            assert "only" in t.note and ("images" in t.note or "charts" in t.note or "not printed" in t.note)


@pytest.mark.parametrize("probe", ["multilingual-words", "multilingual-pronouns"])
def test_every_mapped_metric_is_in_a_reference_run_of_its_probe(probe):
    config = RunConfig(model="reference:biased", n_resamples=50, use_cache=False)
    doc = run_probe(probe, "reference:biased", config=config).document
    raw = json.loads(data_file(PAPER_FILE).read_text(encoding="utf-8"))
    mine = [t for t in raw["tables"] if t["probe"] == probe]
    assert mine and all(t["metrics"] for t in mine)
    for t in mine:
        for column, metric in t["metrics"].items():
            assert doc["metrics"][metric]["value"] is not None, (t["id"], column)
        laid_out = beside_run(load_paper_table(t["id"]), doc)
        assert laid_out["row_kinds"][0] == "run"


def load_paper_table(table_id):
    return next(t for t in load_file(PAPER_FILE) if t.id == table_id)
