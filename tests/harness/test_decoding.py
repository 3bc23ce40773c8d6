"""Results say how the answers were decoded, and compare does not rank greedy against sampled runs together.

With no temperature set, hf: decodes greedily and an OpenAI-compatible server samples
at its own default; both results files once said only max_tokens.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.interfaces.cli import main
from genderprobe.models import ModelOptions, get_model
from genderprobe.models.base import GenerationParams
from genderprobe.outputs.report.compare import compare
from genderprobe.testing.openai_server import OpenAITestServer

KEY = fake_key("test-decoding-0123456789")


def test_a_server_left_without_a_temperature_decodes_at_its_own_default():
    with OpenAITestServer(api_key=KEY, model="m") as server:
        model = get_model("openai:m", ModelOptions(base_url=server.base_url, api_key=KEY))
        unset = model.decoding(GenerationParams(max_tokens=10))
        assert unset["method"] == "server default" and unset["temperature"] is None
        assert model.decoding(GenerationParams(temperature=0.0, top_p=0.9)) == {"method": "greedy", "temperature": 0.0}
        assert model.decoding(GenerationParams(temperature=0.7, top_p=0.9, seed=3)) == \
            {"method": "sampling", "temperature": 0.7, "top_p": 0.9, "seed": 3}


def test_local_weights_without_a_temperature_decode_greedily_and_say_their_dtype(tmp_path):
    pytest.importorskip("transformers")
    from genderprobe.testing.tiny_models import build_tiny_model

    folder = build_tiny_model(tmp_path / "llama", architecture="llama")
    model = get_model(f"hf:{folder}?dtype=float32&threads=1")
    try:
        assert model.decoding(GenerationParams(max_tokens=5)) == {"method": "greedy", "temperature": 0.0,
                                                                  "dtype": "float32"}
        assert model.decoding(GenerationParams(temperature=0.5))["method"] == "sampling"
    finally:
        model.close()


def run(out, *extra):
    with OpenAITestServer(api_key=KEY, model="m") as server:
        result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", "openai:m", "--base-url", server.base_url,
                                           "--sample-k", "40", "--no-cache", "-q", "--out", str(out), *extra],
                                    env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text())


def test_results_record_the_decoding_and_compare_splits_runs_that_decoded_differently(tmp_path):
    greedy = run(tmp_path / "greedy", "--temperature", "0")
    sampled = run(tmp_path / "sampled", "--temperature", "1")
    scored = run(tmp_path / "scored", "--temperature", "0", "--score-options")
    assert greedy["decoding"] == {"method": "greedy", "temperature": 0.0}
    assert sampled["decoding"] == {"method": "sampling", "temperature": 1.0}
    assert scored["decoding"]["method"] == "option scoring"
    (section,) = compare([(greedy, "greedy"), (sampled, "sampled")])
    assert len(section.groups) == 2 and dict(section.mismatches)["decoding.method"] == ["greedy", "sampling"]
    # An old results file, written before decoding was recorded, is not silently ranked with a new one.
    old = {k: v for k, v in greedy.items() if k != "decoding"}
    (section,) = compare([(greedy, "new"), (old, "old")])
    assert "decoding.method" in dict(section.mismatches)
