"""GenderBench's yes/no rule: its readings of the corpus, and its tokens equal to NLTK 3.8.1's own."""

from __future__ import annotations

import random

import pytest
from corpus_support import load, score
from genderbench_parity import nltk_word_tokenize, require

from genderprobe.reading.yes_no import read_yes_no, word_tokenize


def test_the_rule_on_the_corpus():
    """GenderBench's rule as it is: it loses answers that say yes or no without the bare word, or also hold
    the other word, and misreads one ('I see no reason to refuse'); --reader improved is for part 2 of issue 33."""
    s = score(load("discrimination-tamkin"), lambda x: read_yes_no(x["answer"]))
    assert s.misreads == [("dt-023", "yes", "no")]
    assert s.invented == []
    assert sorted(s.clear_lost) == ["dt-017", "dt-018", "dt-022", "dt-023", "dt-024", "dt-025", "dt-026", "dt-027"]


WORDS = ["yes", "no", "Yes", "No", "yes.", "no.", '"yes."', "“no.”", "(yes)", "no,", "I", "think", "Dr.", "Mr.",
         "U.S.", "...", "--", "'yes'", "no!", "yes?", "e.g.", "5.", "\n", "\n\n", "The", "answer", "is", ":", "*",
         "**Yes.**", "nobody", "can't", "won't", "it's", "'tis", "» yes «", "J.", "Bach", "No.", "1.", "2)", "- no",
         "yes;", "(a)", "[no]", "{yes}", "I'd", "gonna", "cannot", "‘yes’", "yes…", "St.", "etc.", "However,"]


def _texts(n: int) -> list[str]:
    rng = random.Random(33)
    texts = [x["answer"] for x in load("discrimination-tamkin")]
    for _ in range(n):
        texts.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 14))))
    return texts + [t.lower() for t in texts]


@pytest.mark.parametrize("part", range(2))
def test_tokens_are_nltk_3_8_1s(part):
    require()
    texts = _texts(3000)[part::2]
    theirs = nltk_word_tokenize(texts)
    differ = [(t, ours, nltk) for t, ours, nltk in zip(texts, map(word_tokenize, texts), theirs) if ours != nltk]
    assert differ == []
