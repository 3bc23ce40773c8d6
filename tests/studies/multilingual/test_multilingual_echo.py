"""An answer that repeats the word list back is no choice of 10 words."""

from instruments import ScriptedModel

from genderprobe.contract import ListSink, RunContext
from genderprobe.engine.runner import Runner
from genderprobe.studies.multilingual.dataset import word_list
from genderprobe.studies.multilingual.words_probe import MAX_CHOSEN, MultilingualWords


def run(answer):
    probe = MultilingualWords(languages=("en",))
    sink = ListSink()
    result = probe.run(RunContext(ask=Runner(ScriptedModel(answer)), records=sink, n_resamples=50))
    return result, sink.records


def test_the_whole_list_echoed_back_is_undetected_not_every_word_chosen():
    words = word_list("en").words
    result, records = run(lambda prompt, rep: "Here is the list: " + ", ".join(words))
    assert len(words) > MAX_CHOSEN
    assert {r["code"] for r in records} == {"undetected"}
    assert all(r["chosen"] == [] and "more than" in r["undetected_reason"] for r in records)
    assert result.counts["undetected"] == len(records)


def test_a_few_words_more_than_asked_still_count():
    words = word_list("en").words[:12]
    _, records = run(lambda prompt, rep: ", ".join(words))
    assert {r["code"] for r in records} == {"answered"}
    assert all(len(r["chosen"]) == 12 for r in records)
