"""StereoSet by the paper's own way (--method loglikelihood, the default): each intrasentence context's three
filled sentences scored by their mean log-likelihood per token, counted as the paper counts scores; the
calibration extreme, the exact per-token means on a tiny random-weight hf: model, and what it refuses."""

from __future__ import annotations

import pytest

from genderprobe.contract import ListSink, RunContext
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models.base import Response
from genderprobe.studies.stereoset import probe as ss
from genderprobe.studies.stereoset.dataset import LABELS

CONFIG = RunConfig(keep_records=False, seed=123)


def test_the_paper_way_is_the_default_and_asks_raw_sentences_per_token():
    asked, sink = [], ListSink()

    def ask(requests):  # the unrelated sentence most likely, then the anti-stereotypical one
        asked.extend(requests)
        return [Response(text=r.options[2], option_logprobs=(-3.0, -2.0, -1.0)) for r in requests]

    probe = ss.StereoSet(sample_k=12)
    assert probe.params.task == "intrasentence" and probe.asks_loglikelihood() and probe.expected_records() == 12
    result = probe.run(RunContext(ask=ask, records=sink, seed=4, n_resamples=50))
    item = next(i for i in ss.items() if i.row == sink.records[0]["row"])
    first = asked[0]
    assert (first.raw_text, first.per_token, first.prompt, first.options) == (True, True, "", item.sentences)
    assert {r["task"] for r in sink.records} == {"intrasentence"}
    assert sink.records[0]["scores"] == (-3.0, -2.0, -1.0) and sink.records[0]["chosen"] == "unrelated"
    # The paper's counting: the anti-stereotypical sentence always wins (ss 0), the unrelated one beats both (lms 0).
    assert (result.metrics["ss"].value, result.metrics["lm_score"].value) == (0.0, 0.0)
    assert result.extra["way"] == "sentence log-likelihood per token" and result.position is None
    assert not any(name.startswith("inspect_") for name in result.metrics)


def test_calibration_reaches_the_stereotyped_extreme():
    result = run_probe("stereoset", "reference:biased", config=CONFIG).result
    # The calibration model scores its sentence 0 and the other two alike: a tie is no preference in the
    # paper's counting, so only the stereotypical sentence beats the unrelated one (lms 50).
    assert (result.metrics["ss"].value, result.metrics["icat"].value, result.metrics["lm_score"].value) == (
        100.0, 0.0, 50.0)
    assert result.counts["attempts"] == 255
    mirror = run_probe("stereoset", "reference:biased-female", config=CONFIG, sample_k=60).result
    assert mirror.metrics["ss"].value == 0.0


def test_on_local_weights_each_score_is_the_sentences_mean_token_log_likelihood(tmp_path):
    pytest.importorskip("transformers")
    import torch

    from genderprobe.models import get_model
    from genderprobe.models.loglikelihood import encode_pair
    from genderprobe.testing.tiny_models import build_tiny_model

    model = get_model(f"hf:{build_tiny_model(tmp_path / 'gpt2', architecture='gpt2', seed=3)}?threads=1")
    sink = ListSink()
    result = ss.StereoSet(sample_k=4).run(RunContext(ask=model.generate_batch, records=sink, seed=2, n_resamples=20))
    assert result.counts["errors"] == 0
    for record in sink.records:
        for sentence, score in zip(record["sentences"], record["scores"]):
            head, tail = encode_pair(model.tokenizer, "", sentence)  # the start-of-text token, then the sentence
            with torch.no_grad():
                logp = torch.log_softmax(model.model(input_ids=torch.tensor([head + tail])).logits[0].float(), -1)
            mean = sum(float(logp[t, token]) for t, token in enumerate(tail)) / len(tail)
            assert score == pytest.approx(mean, abs=1e-4)
        assert record["chosen"] == LABELS[max(range(3), key=lambda k: record["scores"][k])]


def test_a_chat_model_is_told_to_ask_by_generation(tmp_path):
    from click.testing import CliRunner

    from genderprobe.interfaces.cli import main

    both = CliRunner().invoke(main, ["run", "stereoset", "--model", "reference:biased", "--task", "both",
                                     "--out", str(tmp_path / "a")])
    assert both.exit_code != 0 and "Traceback" not in both.output and "--method generation" in both.output
