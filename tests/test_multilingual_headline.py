"""Headline metrics of the multilingual words and pronouns probes, as the paper defines them."""

import pytest
from instruments import ScriptedModel

from genderprobe.datasets.multilingual import LANGUAGES, WORD_CLASSES, word_list
from genderprobe.multilingual.prompts import pronoun_prompt
from genderprobe.probes.base import Headline, ListSink, RunContext
from genderprobe.probes.multilingual_pronouns import PAPER_LANGUAGES, MultilingualPronouns
from genderprobe.probes.multilingual_words import MultilingualWords
from genderprobe.runner import Runner

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
