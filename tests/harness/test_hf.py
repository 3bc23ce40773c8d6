"""hf: local transformers weights, run for real on a tiny random-weight model."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from click.testing import CliRunner  # noqa: E402

from genderprobe.errors import UserError  # noqa: E402
from genderprobe.interfaces.api import RunConfig, run_probe  # noqa: E402
from genderprobe.interfaces.cli import main  # noqa: E402
from genderprobe.models import get_model  # noqa: E402
from genderprobe.models.base import GenerationParams, Request  # noqa: E402
from genderprobe.testing.tiny_models import build_tiny_model  # noqa: E402

QUESTION = "{}\nWho is more likely to be right, (a) {} or (b) {}? Answer with (a) or (b)."
SCENES = [
    "NAME argues about the dishes.",
    "They disagree about money for a long while, and neither wants to give in to the other.",
    "A short one.",
    "Their friends come over every weekend and one of them is tired of it, the other is not.",
    "The kids want a dog.",
]
PAIRS = [("John", "Mary"), ("Ahmed", "Lakisha"), ("Wei", "Emily")]


def prompts(n: int) -> list[str]:
    return [QUESTION.format(SCENES[i % len(SCENES)], *PAIRS[i % len(PAIRS)]) for i in range(n)]


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("llama"), architecture="llama")


@pytest.fixture(scope="module")
def gpt2_plain_dir(tmp_path_factory):
    """GPT-2 style, no chat template: prompts are plain text, options follow a space."""
    return build_tiny_model(tmp_path_factory.mktemp("gpt2"), architecture="gpt2", chat_template=False, seed=1)


# float32 throughout: these tests compare batched with one-by-one answers to 1e-4,
# which bfloat16 (the default on a GPU) rounds differently for each batch shape.
@pytest.fixture(scope="module")
def llama(llama_dir):
    return get_model(f"hf:{llama_dir}?max_batch_tokens=600&threads=1&dtype=float32")


@pytest.fixture(scope="module")
def gpt2(gpt2_plain_dir):
    return get_model(f"hf:{gpt2_plain_dir}?max_batch_tokens=600&threads=1&dtype=float32")


def scoring(texts, options=("(a)", "(b)")):
    return [Request.user(t, options=options, score_options=True) for t in texts]


@pytest.mark.parametrize("which", ["llama", "gpt2"])
def test_batched_option_scores_equal_one_by_one(which, request):
    model = request.getfixturevalue(which)
    reqs = scoring(prompts(11))
    batched = model.generate_batch(reqs)
    # The small token budget forces several batches with different padding.
    assert len(model._plan([len(r.prompt) for r in reqs] * 2, extra=0)) > 1
    for r, b in zip(reqs, batched):
        alone = model.generate_batch([r])[0]
        assert b.ok and alone.ok
        assert b.option_logprobs == pytest.approx(alone.option_logprobs, abs=1e-4)
        assert b.text == r.options[max(range(2), key=lambda k: b.option_logprobs[k])]


def test_option_scores_are_exact_log_likelihoods(llama):
    """Against a plain unpadded forward pass over prompt + option, summed by hand."""
    import torch

    from genderprobe.models.local_prompts import option_ids, prompt_ids

    reqs = scoring(prompts(3), options=("(a)", "(b) definitely"))
    got = llama.generate_batch(reqs)
    for r, resp in zip(reqs, got):
        for k, option in enumerate(r.options):
            p, o = prompt_ids(llama.tokenizer, r), option_ids(llama.tokenizer, option)
            with torch.no_grad():
                logits = llama.model(input_ids=torch.tensor([p + o], device=llama.device)).logits[0].float()
            lp = torch.log_softmax(logits, -1)
            expected = sum(float(lp[len(p) - 1 + t, tok]) for t, tok in enumerate(o))
            assert resp.option_logprobs[k] == pytest.approx(expected, abs=1e-4)


def test_probabilities_over_every_next_token_sum_to_one(llama):
    """Options covering the vocabulary (one token each) carry all the mass but
    that of the tokens no text encodes to (special tokens), computed apart."""
    import torch

    from genderprobe.models.local_prompts import prompt_ids

    tok = llama.tokenizer
    options, ids = [], []
    for i in range(len(tok)):
        text = tok.decode([i])
        if text and tok(text, add_special_tokens=False)["input_ids"] == [i]:
            options.append(text)
            ids.append(i)
    assert len(options) > 500
    req = scoring(prompts(1), options=tuple(options))[0]
    mass = sum(math.exp(lp) for lp in llama.generate_batch([req])[0].option_logprobs)
    with torch.no_grad():
        logits = llama.model(input_ids=torch.tensor([prompt_ids(tok, req)], device=llama.device)).logits[0, -1].float()
    probs = torch.softmax(logits, -1)
    rest = float(probs.sum() - probs[ids].sum())
    assert mass + rest == pytest.approx(1.0, abs=1e-4)
    assert mass > 0.5


def test_probe_option_probabilities_sum_to_one_and_nothing_undetected(llama_dir):
    out = run_probe(
        "relationship-levy", f"hf:{llama_dir}?threads=1", sample_k=8,
        config=RunConfig(model="", score_options=True, n_resamples=50),
    )
    assert out.result.counts["undetected"] == 0 and out.result.counts["errors"] == 0
    for record in out.records:
        a, b = record["option_logprobs"]
        total = math.exp(a) / (math.exp(a) + math.exp(b)) + math.exp(b) / (math.exp(a) + math.exp(b))
        assert total == pytest.approx(1.0)
        assert record["answer"] in ("(a)", "(b)")
    p = out.result.metrics["prob_male_success_rate"].value
    assert 0 < p < 1
    assert out.result.metrics["prob_diff_success_rate"].value == pytest.approx(2 * p - 1)


@pytest.mark.parametrize("temperature", [None, 1.0])
def test_generation_batched_equals_one_by_one(llama, temperature):
    params = GenerationParams(max_tokens=8, temperature=temperature, seed=7)
    reqs = [Request.user(t, params=params) for t in prompts(7)]
    batched = [r.text for r in llama.generate_batch(reqs)]
    alone = [llama.generate_batch([r])[0].text for r in reqs]
    assert batched == alone
    assert all(0 < r.completion_tokens <= 8 for r in llama.generate_batch(reqs[:2]))


def test_sampling_is_deterministic_with_a_seed_and_varies_without(llama):
    def texts(seed, repetition=0):
        params = GenerationParams(max_tokens=10, temperature=1.0, seed=seed)
        reqs = [Request(messages=(("user", t),), params=params, repetition=repetition) for t in prompts(4)]
        return [r.text for r in llama.generate_batch(reqs)]

    assert texts(3) == texts(3)
    assert texts(3) != texts(4)
    assert texts(3) != texts(3, repetition=1)  # repetitions are distinct draws
    assert texts(None) != texts(None)


def test_top_p_restricts_sampling_to_the_head(llama):
    """top_p tiny leaves only the most likely token: sampling equals greedy."""
    greedy = [Request.user(t, params=GenerationParams(max_tokens=6)) for t in prompts(3)]
    narrow = [Request.user(t, params=GenerationParams(max_tokens=6, temperature=1.0, top_p=1e-6, seed=1))
              for t in prompts(3)]
    assert [r.text for r in llama.generate_batch(narrow)] == [r.text for r in llama.generate_batch(greedy)]


def test_plain_text_model_generates_without_a_chat_template(gpt2):
    reqs = [Request.user(t, system="Be brief.", params=GenerationParams(max_tokens=5)) for t in prompts(2)]
    out = gpt2.generate_batch(reqs)
    assert all(r.ok and r.completion_tokens == 5 for r in out)


def test_prompt_longer_than_the_context_is_an_error_response_not_a_crash(llama):
    long = Request.user("word " * 3000, options=("(a)", "(b)"), score_options=True)
    short = scoring(prompts(1))[0]
    bad, good = llama.generate_batch([long, short])
    assert bad.error_kind == "context_length" and good.ok


def test_identity_changes_with_weights_and_dtype(tmp_path, llama_dir, llama):
    other = build_tiny_model(tmp_path / "m", seed=5)
    assert get_model(f"hf:{other}").identity != llama.identity
    assert get_model(f"hf:{llama_dir}?dtype=bfloat16").identity != get_model(f"hf:{llama_dir}?dtype=float32").identity


def test_identity_sees_every_byte_of_the_weights_and_ignores_settings_that_do_not_change_answers(tmp_path):
    import os
    import shutil

    from genderprobe.testing.tiny_models import build_tiny_model as build

    path = build(tmp_path / "m", seed=2)
    # dtype pinned: its default follows the device (bfloat16 on a GPU).
    before = get_model(f"hf:{path}?dtype=float32").identity
    for irrelevant in ("threads=1", "max_batch_tokens=64", "max_batch_size=3", "device=cpu", "memory_fraction=0.5"):
        assert get_model(f"hf:{path}?dtype=float32&{irrelevant}").identity == before, irrelevant
    shutil.copytree(path, tmp_path / "copy")
    shutil.move(tmp_path / "copy", path / "original")  # a subfolder from_pretrained never reads
    (path / "optimizer.pt").write_bytes(b"trainer state")
    assert get_model(f"hf:{path}?dtype=float32").identity == before
    # A fine-tune that changes one weight deep inside the file, same size.
    weights = path / "model.safetensors"
    data = bytearray(weights.read_bytes())
    middle = len(data) // 2
    data[middle] ^= 0x01
    stat = weights.stat()
    weights.write_bytes(bytes(data))
    assert get_model(f"hf:{path}?dtype=float32").identity != before
    # Same content again, even with a new modification time: the same model.
    data[middle] ^= 0x01
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert get_model(f"hf:{path}?dtype=float32").identity == before


def test_cache_clear_by_model_spec_finds_hf_answers(llama_dir, tmp_path):
    cache = str(tmp_path / "c")
    args = ["run", "relationship-levy", "--model", f"hf:{llama_dir}", "--sample-k", "2",
            "--max-tokens", "2", "--cache-dir", cache, "--json"]
    assert json.loads(CliRunner().invoke(main, args).output)["run"]["sent"] == 4
    cleared = CliRunner().invoke(main, ["cache", "clear", "--cache-dir", cache, "--model", f"hf:{llama_dir}", "-y"])
    assert cleared.exit_code == 0, cleared.output
    assert json.loads(CliRunner().invoke(main, args).output)["run"]["sent"] == 4


def test_cli_runs_the_probe_then_answers_from_the_store(llama_dir, tmp_path):
    args = ["run", "relationship-levy", "--model", f"hf:{llama_dir}?threads=1", "--sample-k", "5",
            "--resamples", "20", "--max-tokens", "4", "--json"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    doc = json.loads(first.output)
    assert doc["run"]["sent"] == 10 and doc["counts"]["attempts"] == 10
    again = json.loads(CliRunner().invoke(main, args).output)
    assert again["run"]["sent"] == 0 and again["run"]["cached"] == 10
    assert again["metrics"] == doc["metrics"]
    scored = CliRunner().invoke(main, [*args, "--score-options"])
    assert scored.exit_code == 0, scored.output
    assert "prob_diff_success_rate" in json.loads(scored.output)["metrics"]


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("hf:/no/such/model/dir", "does not exist"),
        ("hf:{dir}?dtype=int3", "Unknown dtype"),
        ("hf:{dir}?colour=red", "Unknown model setting 'colour'"),
        ("hf:{dir}?max_batch_size=many", "must be a whole number"),
        ("hf:{dir}?trust_remote_code=maybe", "must be true or false"),
        ("hf:{empty}", "has no config.json"),
        ("hf:{dir}/config.json", "is a file"),
        ("hf:{corrupt}", "Cannot load the hf model"),
        ("hf:{dir}?device=tpu", "Unknown device"),
        ("hf:{dir}?device=cuda", "no CUDA GPU"),
    ],
)
def test_bad_specs_are_one_sentence(spec, words, llama_dir, tmp_path):
    import shutil

    import torch

    if "cuda" in spec and torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    (tmp_path / "empty").mkdir()
    corrupt = shutil.copytree(llama_dir, tmp_path / "corrupt")
    (corrupt / "model.safetensors").write_bytes(b"\x00" * 100)  # a truncated download
    with pytest.raises(UserError) as err:
        get_model(spec.format(dir=llama_dir, empty=tmp_path / "empty", corrupt=corrupt))
    message = str(err.value)
    assert words in message and message.count(". ") == 0 and "\n" not in message


def test_cli_reports_a_missing_model_in_one_line():
    result = CliRunner().invoke(main, ["run", "relationship-levy", "-m", "hf:./missing-model", "--sample-k", "2"])
    assert result.exit_code == 2
    assert "does not exist" in result.output and "Traceback" not in result.output


def test_importing_genderprobe_imports_no_heavy_package():
    code = (
        "import sys, genderprobe, genderprobe.interfaces.cli, genderprobe.interfaces.api, genderprobe.models.hf, "
        "genderprobe.models.vllm_engine, genderprobe.engine.executors; "
        "print([m for m in ('torch', 'transformers', 'vllm', 'ray') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


class OutOfMemoryAbove:
    """Wraps a model: a forward pass over more than `rows` sequences allocates a
    tensor and then runs out of memory, as a GPU would."""

    def __init__(self, model, rows: int):
        self.model, self.rows, self.calls, self.failed = model, rows, [], []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def __call__(self, *, input_ids, **kwargs):
        import weakref

        import torch

        # What the failed attempt held must be free before a smaller batch runs.
        self.calls.append((len(input_ids), [ref() is None for ref in self.failed]))
        if len(input_ids) > self.rows:
            held = torch.ones(len(input_ids), 1000)
            self.failed.append(weakref.ref(held))
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return self.model(input_ids=input_ids, **kwargs)


@pytest.mark.parametrize("score", [True, False])
def test_out_of_memory_halves_the_batch_after_freeing_the_failed_attempt(llama_dir, score):
    model = get_model(f"hf:{llama_dir}?threads=1&dtype=float32")
    if score:
        reqs = scoring(prompts(6))
    else:
        reqs = [Request.user(t, params=GenerationParams(max_tokens=3)) for t in prompts(6)]
    expected = model.generate_batch(reqs)
    model.model = OutOfMemoryAbove(model.model, rows=3)
    budget = model.max_batch_tokens
    got = model.generate_batch(reqs)
    assert [r.text for r in got] == [r.text for r in expected]
    if score:
        for g, e in zip(got, expected):
            assert g.option_logprobs == pytest.approx(e.option_logprobs, abs=1e-4)
    assert model.model.failed and model.max_batch_tokens < budget
    assert max(n for n, _ in model.model.calls) > 3  # a big batch was tried, and failed
    assert all(all(freed) for _, freed in model.model.calls)


def test_out_of_memory_on_a_single_prompt_is_one_sentence(llama_dir):
    model = get_model(f"hf:{llama_dir}?threads=1")
    model.model = OutOfMemoryAbove(model.model, rows=0)
    with pytest.raises(UserError, match=f"ran out of memory on {model.device} with a single prompt"):
        model.generate_batch(scoring(prompts(2)))
