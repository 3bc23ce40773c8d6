"""A run on local weights shows progress while a long list of prompts is answered, not only at its end."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from genderprobe.engine.runner import Runner  # noqa: E402
from genderprobe.models import get_model  # noqa: E402
from genderprobe.models.base import GenerationParams, Request  # noqa: E402
from genderprobe.testing.tiny_models import build_tiny_model  # noqa: E402


class Recorder:
    """The runner's progress line, reduced to the counts it is given."""

    def __init__(self):
        self.steps: list[int] = []

    def expect(self, n: int) -> None:
        pass

    def advance(self, n: int, **_: int) -> None:
        self.steps.append(n)

    def retried(self) -> None:
        pass


def test_hf_reports_each_batch_it_finishes(tmp_path):
    folder = build_tiny_model(tmp_path / "llama", architecture="llama")
    # A small token budget splits the 24 prompts into several batches inside one generate_batch call.
    model = get_model(f"hf:{folder}?dtype=float32&threads=1&max_batch_tokens=200")
    progress = Recorder()
    runner = Runner(model, None, progress=progress)
    try:
        requests = [Request.user(f"Prompt number {i}: say something about the weather in {i} words.",
                                 params=GenerationParams(max_tokens=4)) for i in range(24)]
        responses = runner(requests)
    finally:
        runner.close()
    assert len(responses) == 24 and all(r.ok for r in responses)
    assert sum(progress.steps) == 24 and len([s for s in progress.steps if s]) > 2, progress.steps
    assert model.progress is None  # the hook is the runner's only while it waits for the list


def test_hf_counts_the_token_steps_of_a_batch_whose_answers_end_together(tmp_path, monkeypatch):
    """One batch answers all at its end; meanwhile its token steps are a step a run shows (genderprobe.steps)."""
    from genderprobe import steps

    ended: list[steps.Step] = []
    monkeypatch.setattr(steps, "on_end", lambda s, finished: ended.append(s))
    folder = build_tiny_model(tmp_path / "llama", architecture="llama")
    model = get_model(f"hf:{folder}?dtype=float32&threads=1")
    try:
        requests = [Request.user(f"Prompt {i}: go on.", params=GenerationParams(max_tokens=6)) for i in range(3)]
        assert all(r.ok for r in model.generate_batch(requests))
    finally:
        model.close()
    generating = [s for s in ended if s.what == "generating 3 answers on local weights"]
    assert len(generating) == 1 and generating[0].total == 6 and 1 <= generating[0].done <= 6
