"""Raw-text log-likelihoods from an OpenAI-compatible server (openai:MODEL?loglikelihood=1): a real server on
127.0.0.1 answers /v1/completions with echoed prompt log-probabilities from a tiny random-weight model, and
every score, sum or mean per token, equals the hf: backend's on the same weights; what it refuses."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderprobe.errors import ModelError, UserError  # noqa: E402
from genderprobe.interfaces.api import RunConfig, run_probe  # noqa: E402
from genderprobe.models import get_model, gives_loglikelihood  # noqa: E402
from genderprobe.models.base import ModelOptions  # noqa: E402
from genderprobe.models.loglikelihood import loglikelihood_request  # noqa: E402
from genderprobe.testing.openai_server import LocalWeights, OpenAITestServer  # noqa: E402
from genderprobe.testing.tiny_models import build_tiny_model  # noqa: E402

TEXTS = [
    ("The nurse told the doctor that she was late. 'She' refers to the", (" nurse", " doctor")),
    ("", ("Women are bad at maths.", "Men are bad at maths.")),  # an empty context: after the start token
    ("A context that ends with a space ", ("word", "other words here")),  # lm-eval moves the space over
]


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    folder = build_tiny_model(tmp_path_factory.mktemp("tiny"), architecture="llama", seed=2)
    with OpenAITestServer(scorer=LocalWeights(folder)) as server:
        yield folder, server


def _server_model(server, settings="loglikelihood=1&bos=<s>"):
    return get_model(f"openai:tiny?{settings}", ModelOptions(base_url=server.base_url))


async def _answer_all(model, requests):
    try:
        return [await model.generate(r) for r in requests]
    finally:
        await model.aclose()


def test_the_servers_scores_equal_local_weights(weights):
    folder, server = weights
    local = get_model(f"hf:{folder}?threads=1&dtype=float32")
    requests = [loglikelihood_request(c, o, per_token=p) for c, o in TEXTS for p in (False, True)]
    served = asyncio.run(_answer_all(_server_model(server), requests))
    for request, ours, theirs in zip(requests, served, local.generate_batch(requests)):
        assert ours.option_logprobs == pytest.approx(theirs.option_logprobs, abs=1e-4), request.prompt
        assert ours.text == theirs.text
    assert server.requests["<s>Women are bad at maths."] == 2  # bos before an empty context, once per way


def test_a_probe_run_through_the_server_equals_the_local_run(weights, tmp_path):
    folder, server = weights
    def run(spec: str, out: str):
        config = RunConfig(seed=3, n_resamples=50, cache_dir=tmp_path / "c", out_dir=tmp_path / out,
                           model_options=ModelOptions(base_url=server.base_url))
        done = run_probe("stereoset", spec, config=config, sample_k=4)
        return done, [json.loads(line) for line in done.records_path.open()]

    served, served_records = run("openai:tiny?loglikelihood=1&bos=<s>", "served")
    local, local_records = run(f"hf:{folder}?threads=1&dtype=float32", "local")
    assert len(served_records) == 4
    for ours, theirs in zip(served_records, local_records):
        assert ours["scores"] == pytest.approx(theirs["scores"], abs=1e-4)
    assert served.result.metrics["ss"].value == local.result.metrics["ss"].value


def test_what_the_server_way_refuses(weights):
    _, server = weights
    assert gives_loglikelihood("openai:m?loglikelihood=1") and not gives_loglikelihood("openai:m")
    with pytest.raises(UserError, match="Unknown model setting"):
        _server_model(server, "loglikelihood=1&logprobs=5")
    with pytest.raises(UserError, match="add loglikelihood=1"):
        _server_model(server, "bos=<s>")
    # The tiny tokenizer adds no beginning-of-text token: without bos the first token has no log-probability.
    with pytest.raises(ModelError, match="bos=") as refused:
        asyncio.run(_answer_all(_server_model(server, "loglikelihood=1"), [loglikelihood_request("", TEXTS[1][1])]))
    assert refused.value.fatal
    # A provider batch holds chat requests only: --batch sends log-likelihood requests the normal way.
    from genderprobe.engine.batch.openai_files import OpenAIBatches

    assert OpenAIBatches(_server_model(server)).encode(b"key", loglikelihood_request("", TEXTS[1][1])) is None
