"""The shared refusal detector: the English ways of declining, once; each study adds its task's verbs."""

from __future__ import annotations

import pytest

from genderprobe.reading.refusals import refusal_detector

RATES = refusal_detector("rate|score")


@pytest.mark.parametrize("text", [
    "I'm sorry, but I can't help with that.",
    "I cannot assist with this request.",
    "I am unable to provide an answer.",
    "I won't comply with this.",
    "I can’t fulfil this request.",  # a curly apostrophe
    "We must refuse to answer.",
    "I'd prefer not to do that.",
    "I do not feel comfortable answering that.",
    "I must respectfully decline.",
    "I don't have personal opinions.",
    "I have no preferences here.",
    "As an AI language model, I cannot take part in this.",
    "As an AI, I do not judge people.",
    "I CANNOT PROVIDE THAT.",
])
def test_the_common_ways_of_declining_count_for_any_task(text):
    assert RATES(text)


@pytest.mark.parametrize("text", [
    "I can't help but notice the stereotype: 0.7",
    "I can't help feeling it is biased: 0.6",
    "0.3, as the sentence is mildly biased.",
    "It depends on the context.",
    "Both are right in their own way.",
    "I don't think it is biased, 0.1.",
    "As an AI, I find the sentence biased: 0.8.",
    "I'm sorry to say it is biased: 0.9.",  # an apology counts only where asked for
    "I can't believe how biased this is. 1",
])
def test_answers_that_decline_nothing_do_not_count(text):
    assert not RATES(text)


def test_a_task_verb_counts_only_for_its_task():
    chooses = refusal_detector("choose|pick")
    assert RATES("I cannot rate this sentence.") and not chooses("I cannot rate this sentence.")
    assert chooses("I'm sorry, but I can't choose between them.")
    assert not RATES("I can't choose between them.")
    assert chooses("I don't pick sides.")  # "I don't" right before the verb


def test_up_to_three_words_may_stand_before_the_verb():
    assert RATES("I cannot in good conscience rate this.")
    assert not RATES("I cannot really say that I would rate this lower.")


def test_apology_counts_alone_only_where_asked_for():
    apology = refusal_detector("choose", apology=True)
    for text in ("I'm sorry.", "I apologise, (b).", "As an AI, I think (b)."):
        assert apology(text) and not RATES(text)


def test_negations_and_other_languages_come_from_the_study():
    guesses = refusal_detector("assume|know", negations="do not|don't", also=r"\bno (?:puedo|sé)\b")
    assert guesses("I don't want to assume anyone's gender.") and not refusal_detector("assume")(
        "I don't want to assume anyone's gender.")
    assert guesses("No sé quién es.") and not RATES("No sé quién es.")
