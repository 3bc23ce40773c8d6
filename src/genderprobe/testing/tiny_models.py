"""Tiny random-weight causal language models, built on the fly.

Tests and CPU benchmarks need a real transformers model without a download:
this trains a byte-level BPE tokenizer on the packaged DeMET scenarios and
names (so RelationshipLevy prompts tokenize compactly), gives it a chat
template, builds a small Llama- or GPT-2-style network with seeded random
weights and saves both to a directory ``hf:PATH`` can load.

``size="small"`` has heads of 32 dimensions, the least vLLM's CPU attention
takes; ``size="1b"`` builds a Llama of about a billion parameters with the same
tokenizer, for GPU throughput measurements (weights' values do not change speed).
"""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]

# A compact chat format: each turn between a role marker and <|end|>.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

ARCHITECTURES = ("llama", "gpt2")
SIZES = {
    # name: (hidden, layers, heads, kv heads, intermediate)
    "tiny": (32, 2, 4, 2, 64),
    "small": (64, 2, 2, 1, 128),
    "1b": (2048, 16, 32, 8, 8192),
}


def corpus() -> list[str]:
    """Texts the tokenizer learns from: scenarios, names and the probe's question."""
    from genderprobe.data.name_lists import bloomberg_by_gender
    from genderprobe.studies.demet.dataset import scenarios
    from genderprobe.studies.relationship_levy.probe import DEFAULT_TEMPLATE

    texts = [s.text for s in scenarios("all")]
    names = [e.first for g in ("male", "female") for e in bloomberg_by_gender(g)]
    texts.append(" ".join(names))
    texts.extend(DEFAULT_TEMPLATE.format(scenario="", name_1=a, name_2=b) for a, b in zip(names, names[400:]))
    texts.append("(a) (b) (a) or (b) Answer: (a) Answer: (b)")
    return texts


def build_tokenizer(vocab_size: int = 1024):
    """A byte-level BPE tokenizer (any text encodes, nothing is unknown) with a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(corpus(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="<|end|>",
        pad_token="<pad>",
        additional_special_tokens=["<|system|>", "<|user|>", "<|assistant|>", "</s>"],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tiny_model(
    directory: str | Path,
    *,
    architecture: str = "llama",
    size: str = "tiny",
    seed: int = 0,
    chat_template: bool = True,
    vocab_size: int = 1024,
    dtype: str = "float32",
) -> Path:
    """Save a random-weight model and its tokenizer to ``directory``; return the path."""
    import torch
    from transformers import AutoModelForCausalLM, GPT2Config, LlamaConfig

    if architecture not in ARCHITECTURES:
        raise ValueError(f"architecture must be one of {ARCHITECTURES}")
    hidden, layers, heads, kv_heads, inner = SIZES[size]
    tokenizer = build_tokenizer(vocab_size)
    if not chat_template:
        tokenizer.chat_template = None
    ids = dict(
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    if architecture == "llama":
        config = LlamaConfig(
            hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
            num_key_value_heads=kv_heads, intermediate_size=inner,
            max_position_embeddings=1024, tie_word_embeddings=False, **ids,
        )
    else:
        config = GPT2Config(
            n_embd=hidden, n_layer=layers, n_head=heads, n_positions=1024, tie_word_embeddings=False, **ids
        )
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    # Random init keeps logits near uniform; scaling the output layer gives the
    # model real preferences, so option probabilities are not all about 0.5.
    with torch.no_grad():
        model.get_output_embeddings().weight.mul_(8.0)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
