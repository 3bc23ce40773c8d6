"""vllm: refuses in one sentence where it cannot run; on a GPU, agrees with hf."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from genderprobe.cli import main
from genderprobe.errors import UserError
from genderprobe.models import get_model
from genderprobe.models.base import GenerationParams, Request
from genderprobe.models.vllm_engine import refusal

pytest.importorskip("torch")
CANNOT_RUN = refusal()


@pytest.mark.skipif(CANNOT_RUN is None, reason="vLLM and a GPU are present")
def test_refuses_in_one_sentence_without_gpu_or_package(tmp_path):
    with pytest.raises(UserError) as err:
        get_model(f"vllm:{tmp_path}")
    message = str(err.value)
    assert message == CANNOT_RUN
    assert "GPU" in message and "hf:PATH" in message
    assert message.endswith(".") and message.count(". ") == 0 and "\n" not in message


@pytest.mark.skipif(CANNOT_RUN is None, reason="vLLM and a GPU are present")
def test_cli_refusal_is_one_line_and_exit_2(tmp_path):
    result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", f"vllm:{tmp_path}", "--sample-k", "2"])
    assert result.exit_code == 2
    assert result.output.strip() == f"Error: {CANNOT_RUN}"


def test_unknown_setting_is_refused_before_anything_loads(tmp_path):
    with pytest.raises(UserError, match="Unknown model setting 'speed'"):
        get_model(f"vllm:{tmp_path}?speed=fast")


@pytest.mark.skipif(CANNOT_RUN is not None, reason=CANNOT_RUN or "")
def test_on_a_gpu_vllm_scores_and_generates_like_hf(tmp_path):
    from genderprobe.testing.tiny_models import build_tiny_model

    path = build_tiny_model(tmp_path / "m")
    prompts = [f"Scenario {i}: who is right, (a) John or (b) Mary? Answer with (a) or (b)." for i in range(16)]
    scoring = [Request.user(p, options=("(a)", "(b)"), score_options=True) for p in prompts]
    vllm = get_model(f"vllm:{path}?dtype=float32&gpu_memory_utilization=0.3&enforce_eager=1")
    hf = get_model(f"hf:{path}?dtype=float32&device=cuda")
    for v, h in zip(vllm.generate_batch(scoring), hf.generate_batch(scoring)):
        assert v.option_logprobs == pytest.approx(h.option_logprobs, abs=2e-2)
    greedy = [Request.user(p, params=GenerationParams(max_tokens=6)) for p in prompts]
    same = sum(v.text == h.text for v, h in zip(vllm.generate_batch(greedy), hf.generate_batch(greedy)))
    assert same >= 12  # float32 kernels differ; near-ties may flip a token
    sampled = [Request.user(p, params=GenerationParams(max_tokens=6, temperature=1.0, seed=3)) for p in prompts]
    assert [r.text for r in vllm.generate_batch(sampled)] == [r.text for r in vllm.generate_batch(sampled[::-1])][::-1]


def test_the_vllm_code_path_reads_vllm_outputs_as_hf_scores(tmp_path, monkeypatch):
    """vLLM cannot run here, so a stand-in engine answers as vLLM's documented API does
    (TokensPrompt in, RequestOutput with prompt_logprobs out), computed with the hf
    model: the vllm backend must read from it exactly the option scores hf gives, and
    refuse a prompt that does not fit as one request's error, not the whole batch's."""
    import sys
    from types import SimpleNamespace

    pytest.importorskip("transformers")
    import torch

    from genderprobe.models.vllm_engine import VLLMModel
    from genderprobe.testing.tiny_models import build_tiny_model

    hf = get_model(f"hf:{build_tiny_model(tmp_path / 'm')}?threads=1")

    class FakeLLM:
        llm_engine = SimpleNamespace(model_config=SimpleNamespace(max_model_len=1024, dtype=torch.float32))

        def get_tokenizer(self):
            return hf.tokenizer

        def generate(self, prompts, params, use_tqdm=True):
            assert len(prompts) == len(params) and all(len(p["prompt_token_ids"]) <= 1024 for p in prompts)
            outputs = []
            for prompt in prompts:
                ids = prompt["prompt_token_ids"]
                with torch.no_grad():
                    lp = torch.log_softmax(hf.model(input_ids=torch.tensor([ids])).logits[0].float(), -1)
                logprobs = [None] + [{t: SimpleNamespace(logprob=float(lp[p - 1, t]))} for p, t in enumerate(ids) if p]
                eos = hf.tokenizer.eos_token_id
                gen = SimpleNamespace(text="yes", token_ids=[5, eos], finish_reason="stop", stop_reason=None)
                outputs.append(SimpleNamespace(prompt_token_ids=ids, prompt_logprobs=logprobs, outputs=[gen]))
            return outputs

    engine_args = []

    def make_llm(**kw):
        engine_args.append(kw)
        return FakeLLM()

    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(LLM=make_llm, SamplingParams=dict))
    prompts = [f"Scenario {i}: who is right, (a) John or (b) Mary?" for i in range(4)]
    scoring = [Request.user(p, options=("(a)", "(b) for sure"), score_options=True) for p in prompts]
    # Prefix caching is on by default, and prompt log-probabilities are not
    # trustworthy with it (upstream bugs): scoring is refused, not miscomputed.
    cached = VLLMModel(str(tmp_path / "m"), {})
    assert engine_args[-1]["enable_prefix_caching"] is True
    with pytest.raises(UserError, match="prefix_caching=false"):
        cached.generate_batch(scoring[:1])
    vllm = VLLMModel(str(tmp_path / "m"), {"prefix_caching": False})
    assert engine_args[-1]["enable_prefix_caching"] is False
    too_long = Request.user("word " * 3000, options=("(a)", "(b)"), score_options=True)
    got = vllm.generate_batch([*scoring[:2], too_long, *scoring[2:]])
    assert got[2].error_kind == "context_length"
    for v, h in zip(got[:2] + got[3:], hf.generate_batch(scoring)):
        assert v.option_logprobs == pytest.approx(h.option_logprobs, abs=1e-4) and v.text == h.text
    answer = vllm.generate_batch([Request.user(prompts[0], params=GenerationParams(max_tokens=4))])[0]
    assert answer.text == "yes" and answer.completion_tokens == 1  # the end-of-text token is not counted, as in hf
