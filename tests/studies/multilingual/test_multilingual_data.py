"""The packaged Zhao et al. 2024 lists: counts per language and class, cleaning, names."""

import pytest

from genderprobe.data.packaged import data_text
from genderprobe.errors import UserError
from genderprobe.studies.multilingual.dataset import (
    GENDERS,
    LANGUAGES,
    WORD_CLASSES,
    calibration_dialogues,
    check_languages,
    names,
    occupations,
    word_list,
)
from genderprobe.studies.multilingual.script import detect_language
from genderprobe.studies.multilingual.topics import TOPIC_KEYS

# standout, personality quality, outlook, communal, imaginative (see SOURCE.md)
EXPECTED = {
    "en": (21, 31, 9, 24, 13),
    "fr": (32, 48, 10, 40, 23),
    "es": (33, 49, 14, 38, 25),
    "zh": (21, 29, 10, 24, 12),
    "ko": (21, 27, 6, 22, 13),
    "ja": (20, 27, 7, 20, 13),
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_word_counts_per_language_and_class(lang):
    words = word_list(lang)
    assert tuple(len(words.of_class(c)) for c in WORD_CLASSES) == EXPECTED[lang]
    assert len(words.words) == sum(EXPECTED[lang]) == len(set(words.words))


def test_english_list_is_shorter_than_the_108_the_paper_states():
    assert len(word_list("en").words) == 98
    assert "experienced" in word_list("en").of_class("standout")
    assert "experienced" not in word_list("en").of_class("personality_quality")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_extraction_artifacts_are_gone(lang):
    text = data_text(f"multilingual/words_{lang}.csv")
    assert "scriptsize" not in text and '"' not in text and "|" not in text
    assert all(w == w.strip() and w for w in word_list(lang).words)


def test_french_scriptsize_row_words_stay_standout():
    standout = word_list("fr").of_class("standout")
    assert {"professionnelle", "professionnel", "chevronnée", "leader-d’équipe"} <= set(standout)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_twenty_occupation_pairs(lang):
    pairs = occupations(lang)
    assert len(pairs) == 20 and len(set(pairs)) == 20


def test_occupations_keep_gendered_forms_and_fix_the_lawyer_typo():
    assert ("actress", "actor") in occupations("en") and ("lawyer", "lawyer") in occupations("en")
    assert ("actrice", "acteur") in occupations("fr")
    assert ("여배우", "배우") in occupations("ko")
    assert ("女優", "俳優") in occupations("ja")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_three_distinct_names_per_gender(lang):
    found = [n for g in GENDERS for n in names(lang, g)]
    assert len(found) == 6 == len(set(found))
    if lang in ("zh", "ja", "ko"):
        assert detect_language(" ".join(found)) == lang  # written in the language's script


def test_calibration_dialogues_cover_every_topic_in_their_language():
    dialogues = calibration_dialogues()
    for lang in LANGUAGES:
        assert set(dialogues[lang]) == set(TOPIC_KEYS)
        assert all(detect_language(t) == lang for t in dialogues[lang].values())


@pytest.mark.parametrize("bad", [(), ("en", "de"), ("en", "en")])
def test_bad_language_lists_are_refused(bad):
    with pytest.raises(UserError):
        check_languages(bad)
