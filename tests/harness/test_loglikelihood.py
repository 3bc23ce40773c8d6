"""Raw-text log-likelihoods (Request.raw_text, genderprobe.models.loglikelihood) on hf: tiny random-weight
models: lm-eval's tokens, exact sums, batched equal to alone, the store paying once, and backends
without them refused in one sentence. lm-eval's own code on a real model: test_lm_eval_parity.py."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from click.testing import CliRunner  # noqa: E402

from genderprobe.errors import UserError  # noqa: E402
from genderprobe.interfaces.cli import main  # noqa: E402
from genderprobe.models import get_model  # noqa: E402
from genderprobe.models.loglikelihood import encode_pair, loglikelihood_request  # noqa: E402
from genderprobe.testing.tiny_models import build_tiny_model  # noqa: E402

TEXTS = [
    ("The nurse told the doctor that she was late. 'She' refers to the", (" nurse", " doctor")),
    ("", ("Women are bad at maths.", "Men are bad at maths.")),  # CrowS-Pairs: whole sentences, no context
    ("A context that ends with a space ", ("word", "other words here")),  # lm-eval moves the space over
]


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def model(request, tmp_path_factory):
    folder = build_tiny_model(tmp_path_factory.mktemp(request.param), architecture=request.param,
                              chat_template=request.param == "llama", seed=2)
    return get_model(f"hf:{folder}?max_batch_tokens=40&threads=1&dtype=float32")


def test_tokens_are_lm_evals(model):
    """lm-eval's HFLM.tok_encode with its defaults: the tokenizer's own special tokens (the tiny Llama's BOS)."""
    tok = model.tokenizer
    head, tail = encode_pair(tok, "A context that ends with a space ", "word")
    assert head == tok.encode("A context that ends with a space")
    assert head + tail == tok.encode("A context that ends with a space word")
    sentence = tok.encode("Hi there.", add_special_tokens=False)
    assert encode_pair(tok, "", "Hi there.") == ([tok.bos_token_id], sentence)
    assert encode_pair(tok, "", tok.bos_token + "Hi there.") == ([tok.bos_token_id], sentence)


def test_scores_are_the_exact_sums_and_batched_equals_alone(model):
    import torch

    requests = [loglikelihood_request(context, options) for context, options in TEXTS]
    batched = model.generate_batch(requests)
    for request, response in zip(requests, batched):
        assert response.ok and len(response.option_logprobs) == len(request.options)
        assert response.option_logprobs == pytest.approx(model.generate_batch([request])[0].option_logprobs, abs=1e-4)
        for k, option in enumerate(request.options):
            head, tail = encode_pair(model.tokenizer, request.prompt, option)
            with torch.no_grad():
                logits = model.model(input_ids=torch.tensor([head + tail])).logits[0].float()
            lp = torch.log_softmax(logits, -1)
            expected = sum(float(lp[len(head) - 1 + t, token]) for t, token in enumerate(tail))
            assert response.option_logprobs[k] == pytest.approx(expected, abs=1e-4)
        assert response.text == request.options[max(range(len(request.options)),
                                                     key=lambda k: response.option_logprobs[k])]


def test_raw_text_is_its_own_cache_key():
    plain = loglikelihood_request("Some text", (" a", " b"))
    assert plain.cache_identity()["raw_text"] is True
    assert "raw_text" not in type(plain)(plain.messages, options=plain.options, score_options=True).cache_identity()
    with pytest.raises(UserError, match="none of them empty"):
        loglikelihood_request("Some text", (" a", ""))


def test_a_run_scores_once_then_answers_from_the_store(model, tmp_path):
    args = ["run", "crows-pairs", "--model", model.spec, "--sample-k", "3", "--resamples", "20", "--json",
            "--cache-dir", str(tmp_path / "c")]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    doc = json.loads(first.output)
    assert doc["run"]["sent"] == 3 and doc["metrics"]["likelihood_diff"]["value"] > 0
    again = json.loads(CliRunner().invoke(main, args).output)
    assert again["run"]["sent"] == 0 and again["run"]["cached"] == 3
    assert again["metrics"] == doc["metrics"]


def test_a_backend_without_log_likelihoods_is_refused_in_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    result = CliRunner().invoke(main, ["run", "winogender", "--model", "openai:some-model", "--base-url",
                                       "http://127.0.0.1:9/v1", "--out", str(tmp_path / "o")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "cannot give" in result.output and "--method generation" in result.output
