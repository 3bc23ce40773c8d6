"""hf: work shared inside a batch changes no answer.

A batch's shared beginning (a system turn) runs once, each prompt runs once
for all its options, and a finished answer leaves the batch: scores and
answers must stay those of each prompt alone, and scores the exact
log-likelihoods of an unpadded forward pass.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderprobe.models import get_model  # noqa: E402
from genderprobe.models.base import GenerationParams, Request  # noqa: E402
from genderprobe.models.local_prompts import option_ids, prompt_ids  # noqa: E402
from genderprobe.testing.tiny_models import build_tiny_model  # noqa: E402

SYSTEM = "You are a careful assistant who reads every scenario closely and answers with one of the options given."
QUESTIONS = [
    "Ann and Bob disagree about money. Who is more likely to be right, (a) Ann or (b) Bob?",
    "Bob wants a dog. Who is right, (a) Bob or (b) Ann?",
    "They argue about the dishes every evening, and neither gives in. Who is right, (a) Ann or (b) Bob?",
    "Short one.",
    "Ann wants to move to the city and Bob wants to stay near his family. Who is right, (a) Ann or (b) Bob?",
]


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    path = build_tiny_model(tmp_path_factory.mktemp("llama"), architecture="llama")
    return get_model(f"hf:{path}?threads=1&dtype=float32")  # exact to 1e-4 on a GPU too


class CountRows:
    """Wraps the model to record how many rows each forward pass gets."""

    def __init__(self, model):
        self.model, self.rows = model, []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def __call__(self, *, input_ids, **kwargs):
        self.rows.append(len(input_ids))
        return self.model(input_ids=input_ids, **kwargs)


def exact_score(model, request: Request, option: str) -> float:
    import torch

    p, o = prompt_ids(model.tokenizer, request), option_ids(model.tokenizer, option)
    with torch.no_grad():
        logprobs = torch.log_softmax(model.model(input_ids=torch.tensor([p + o], device=model.device)).logits[0].float(), -1)
    return sum(float(logprobs[len(p) - 1 + t, tok]) for t, tok in enumerate(o))


@pytest.mark.parametrize("options", [("(a)", "(b)"), ("(a)", "(b) definitely not", "neither"), ("A", "B")])
def test_scores_with_a_shared_system_turn_are_exact(llama, options):
    requests = [Request.user(q, system=SYSTEM, options=options, score_options=True) for q in QUESTIONS]
    spy = CountRows(llama.model)
    llama.model = spy
    try:
        batched = llama.generate_batch(requests)
    finally:
        llama.model = spy.model
    assert spy.rows[0] == 1  # the shared system turn, run once
    for request, response in zip(requests, batched):
        alone = llama.generate_batch([request])[0]
        assert response.option_logprobs == pytest.approx(alone.option_logprobs, abs=1e-4)
        expected = [exact_score(llama, request, o) for o in options]
        assert response.option_logprobs == pytest.approx(expected, abs=1e-4)


def test_answers_with_a_shared_system_turn_are_those_of_each_prompt_alone(llama):
    requests = [Request.user(q, system=SYSTEM, params=GenerationParams(max_tokens=12)) for q in QUESTIONS]
    batched = llama.generate_batch(requests)
    for request, response in zip(requests, batched):
        alone = llama.generate_batch([request])[0]
        assert (response.text, response.completion_tokens) == (alone.text, alone.completion_tokens)


def test_a_finished_answer_leaves_the_batch_and_changes_no_other(llama):
    requests = [Request.user(q, params=GenerationParams(max_tokens=10)) for q in QUESTIONS]
    # A random-weight model seldom ends an answer: make a token it writes early a stop token.
    first = llama.generate_batch(requests[:1])[0]
    stop = llama.tokenizer(first.text, add_special_tokens=False)["input_ids"][1]
    saved = set(llama.stop_ids)
    llama.stop_ids = saved | {stop}
    spy = CountRows(llama.model)
    llama.model = spy
    try:
        batched = llama.generate_batch(requests)
        calls = len(spy.rows)
        alone = [llama.generate_batch([r])[0] for r in requests]
    finally:
        llama.model, llama.stop_ids = spy.model, saved
    assert [(r.text, r.completion_tokens) for r in batched] == [(r.text, r.completion_tokens) for r in alone]
    assert batched[0].completion_tokens < 10
    assert min(spy.rows[:calls]) < len(requests)  # the batch shrank as answers ended
