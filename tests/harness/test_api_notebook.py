"""The Python API in notebooks and async code, and with the user's own generator (generate=)."""

from __future__ import annotations

import asyncio
import dataclasses
import doctest
import json
import signal
import threading
import time

import pytest

import genderprobe
from genderprobe import arun_probe, run_probe
from genderprobe.errors import UserError
from genderprobe.interfaces import api
from genderprobe.interfaces.api import RunConfig
from genderprobe.outputs.report import render_report

PROBE = "relationship-levy"


def metrics(out):
    return out.result.to_json()["metrics"]


class Counting:
    """A sync generator that answers from a rule and remembers the lists it was given."""

    def __init__(self, answer=lambda prompt: "(a)"):
        self.answer = answer
        self.calls: list[list[str]] = []

    def __call__(self, prompts):
        self.calls.append(list(prompts))
        return [self.answer(p) for p in prompts]

    @property
    def asked(self):
        return sum(len(c) for c in self.calls)


def one_sentence(exc: pytest.ExceptionInfo) -> str:
    """The error's message, checked to be one sentence with no chained traceback."""
    message = str(exc.value)
    assert "\n" not in message and message.endswith(".") and "Traceback" not in message, message
    error = exc.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__), "chained"
    return message


# -- (a) the docstrings are true --------------------------------------------------------


@pytest.mark.parametrize("module", [genderprobe, api], ids=["genderprobe", "genderprobe.interfaces.api"])
def test_the_module_docstrings_run_as_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


# -- (b) inside a running event loop, as in a notebook cell -----------------------------


async def _echo_a(prompts):
    await asyncio.sleep(0)
    return ["(a)" if len(p) % 2 else "(b)" for p in prompts]


def test_run_probe_inside_a_running_loop_gives_the_metrics_of_a_plain_call(tmp_path):
    # An async function makes the runner drive an event loop of its own, the very
    # thing that cannot start inside a running loop without a thread of its own.
    outside = run_probe(PROBE, generate=_echo_a, sample_k=30,
                        config=RunConfig(cache_dir=tmp_path / "a"))

    async def cell():
        return run_probe(PROBE, generate=_echo_a, sample_k=30,
                         config=RunConfig(cache_dir=tmp_path / "b"))

    inside = asyncio.run(cell())
    assert inside.document["run"]["sent"] == outside.document["run"]["sent"] == 60  # both asked the function
    assert metrics(inside) == metrics(outside)
    assert inside.records == outside.records
    assert [t.name for t in threading.enumerate() if t.name == "genderprobe-run"] == []


def test_run_probe_of_a_reference_model_inside_a_running_loop():
    async def cell():
        return run_probe(PROBE, "reference:random", sample_k=40)

    assert metrics(asyncio.run(cell())) == metrics(run_probe(PROBE, "reference:random", sample_k=40))


def test_an_error_inside_a_running_loop_is_raised_in_the_cell():
    async def cell():
        run_probe(PROBE, generate=lambda prompts: [], model="function:nothing", sample_k=3)

    with pytest.raises(UserError, match="returned 0 texts for 6 prompts"):
        asyncio.run(cell())


def test_ctrl_c_inside_a_running_loop_stops_the_run_and_keeps_the_answers():
    calls: list[int] = []

    def slow(prompts):
        calls.append(len(prompts))
        if len(calls) == 2:
            # Ctrl-C in a notebook: SIGINT to the main thread, which waits for the run.
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            for _ in range(100):
                time.sleep(0.05)  # the interrupt must cut this short
        return ["(a)"] * len(prompts)

    async def cell():
        # What a notebook kernel does while a cell runs (asyncio.run's own handler would cancel instead).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with pytest.raises(KeyboardInterrupt):
            run_probe(PROBE, generate=slow, sample_k=20, generate_batch_size=10)
        assert [t.name for t in threading.enumerate() if t.name == "genderprobe-run"] == []
        return run_probe(PROBE, generate=slow, sample_k=20, generate_batch_size=10)

    started = time.monotonic()
    rerun = asyncio.run(cell())
    assert time.monotonic() - started < 4  # the function's 5 s wait was interrupted
    assert rerun.document["run"]["cached"] == 10  # the first list's answers were stored
    assert calls == [10, 10, 10, 10, 10]  # the interrupted list, and only the missing ones, asked again


# -- (c) await arun_probe without blocking the loop -------------------------------------


def test_arun_probe_leaves_the_event_loop_free():
    ticks = 0
    seen: list[int] = []

    def slow(prompts):
        seen.append(ticks)  # how far the loop's other task had got when the run asked
        time.sleep(0.05)  # a blocking generator, as a local model is
        return ["(a)"] * len(prompts)

    async def main():
        nonlocal ticks

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        out = await arun_probe(PROBE, generate=slow, sample_k=20, generate_batch_size=8)
        task.cancel()
        return out

    out = asyncio.run(main())
    assert len(seen) == 5  # 40 requests in lists of 8
    # The ticker ran while the generator blocked. A run on the loop's own thread would leave it at one value
    # throughout; how many ticks it gets is the machine's business (a loaded CI machine gave 2 in 200 ms).
    assert all(b >= a for a, b in zip(seen, seen[1:])) and seen[-1] > seen[0], seen
    assert metrics(out) == metrics(run_probe(PROBE, generate=slow, sample_k=20))  # and the store answers alike


def test_cancelling_arun_probe_stops_the_run_and_keeps_the_answers():
    calls: list[int] = []

    def slow(prompts):
        calls.append(len(prompts))
        for _ in range(20):
            time.sleep(0.05)
        return ["(b)"] * len(prompts)

    async def main():
        task = asyncio.create_task(arun_probe(PROBE, generate=slow, sample_k=20, generate_batch_size=10))
        while len(calls) < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [t.name for t in threading.enumerate() if t.name == "genderprobe-run"] == []

    asyncio.run(main())
    assert calls == [10, 10]
    rerun = run_probe(PROBE, generate=slow, sample_k=20, generate_batch_size=10)
    assert rerun.document["run"]["cached"] == 10


# -- (d) generate=: the user's own generator as a backend --------------------------------


def test_a_sync_generator_is_a_backend_like_any_other(tmp_path):
    fn = Counting(lambda p: "(a)")
    out = run_probe(PROBE, generate=fn, model="function:always-a", sample_k=10, generate_batch_size=8,
                    config=RunConfig(out_dir=tmp_path / "out"))
    assert [len(c) for c in fn.calls] == [8, 8, 4]  # lists of at most the batch size
    assert all(isinstance(p, str) and "(a)" in p for c in fn.calls for p in c)
    doc = json.loads(out.results_path.read_text())
    assert doc["model"] == "function:always-a"
    assert doc["run"]["sent"] == 20 and doc["run"]["generation_sent"] == {}
    assert doc["metrics"]["position_bias_a_rate"]["value"] == 1.0
    assert doc["metrics"]["diff_success_rate"]["value"] == 0.0  # the man is (a) as often as the woman
    records = [json.loads(line) for line in out.records_path.read_text().splitlines()]
    assert len(records) == 20 and {r["answer"] for r in records} == {"(a)"}
    assert {r["prompt"] for r in records} == {p for c in fn.calls for p in c}
    assert "function:always-a" in render_report([(doc, "results.json")])

    again = run_probe(PROBE, generate=fn, model="function:always-a", sample_k=10)
    assert fn.asked == 20  # answered from the store: the function was not called again
    assert again.document["run"]["cached"] == 20
    assert metrics(again) == metrics(out)


def test_the_function_name_is_its_identity_in_the_store():
    def gen(prompts):
        return ["(a)"] * len(prompts)

    first = run_probe(PROBE, generate=gen, sample_k=3)
    assert first.document["model"] == "function:test_the_function_name_is_its_identity_in_the_store.<locals>.gen"
    # Another function under the same name is answered with gen's stored answers...
    other = Counting(lambda p: "(b)")
    same_name = run_probe(PROBE, generate=other, model=first.document["model"], sample_k=3)
    assert other.calls == [] and same_name.result.metrics["position_bias_a_rate"].value == 1.0
    # ...so two functions need two names.
    assert run_probe(PROBE, generate=other, model="function:other", sample_k=3).document["run"]["sent"] == 6


def test_an_async_generator_is_called_concurrently_one_prompt_at_a_time():
    in_flight = most = 0
    sizes: list[int] = []

    async def agen(prompts):
        nonlocal in_flight, most
        sizes.append(len(prompts))
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return ["(b)" for _ in prompts]

    out = run_probe(PROBE, generate=agen, sample_k=10, config=RunConfig(concurrency=4))
    assert sizes == [1] * 20 and most == 4
    assert out.document["model"].startswith("function:") and out.document["model"].endswith("agen")
    assert out.result.metrics["position_bias_a_rate"].value == 0.0
    assert [r["answer"] for r in out.records] == ["(b)"] * 20
    assert run_probe(PROBE, generate=agen, sample_k=10).document["run"]["cached"] == 20 and len(sizes) == 20


def test_a_none_answer_is_an_empty_answer():
    out = run_probe(PROBE, generate=Counting(lambda p: None if "(a) A" in p else "(a)"),
                    model="function:some-none", sample_k=20)
    empty = out.document["run"]["empty"]
    assert 0 < empty < 40 and out.document["run"]["error_kinds"] == {"empty": empty}
    assert sum(1 for r in out.records if r.get("error", "").startswith("empty")) == empty


def test_generate_chat_receives_whole_conversations():
    seen = []

    def chat(conversations):
        seen.extend(conversations)
        return ["(a)"] * len(conversations)

    run_probe(PROBE, generate_chat=chat, sample_k=2, config=RunConfig(system_prompt="Be fair."))
    assert [[m["role"] for m in c] for c in seen] == [["system", "user"]] * 4
    assert {c[0]["content"] for c in seen} == {"Be fair."}


@pytest.mark.parametrize(
    "answer,expected",
    [
        (lambda prompts: ["(a)"], r"returned 1 text for 6 prompts; it must return one text per prompt"),
        (lambda prompts: ["(a)"] * 7, r"returned 7 texts for 6 prompts"),
        (lambda prompts: "(a)" * 6, r"returned str; it must return a list of texts"),
        (lambda prompts: [1] * 6, r"returned int as answer 1 of 6"),
        (lambda prompts: 1 / 0, r"raised ZeroDivisionError: division by zero; fix it and run again"),
    ],
    ids=["too-few", "too-many", "a-string", "not-strings", "raises"],
)
def test_a_misbehaving_generator_is_one_sentence(answer, expected):
    with pytest.raises(UserError, match=expected) as exc:
        run_probe(PROBE, generate=answer, model="function:bad", sample_k=3)
    assert one_sentence(exc).startswith("The generate function 'bad' ")


def test_a_misbehaving_async_generator_is_one_sentence():
    async def two(prompts):
        return ["(a)", "(b)"]

    with pytest.raises(UserError, match=r"two' returned 2 texts for 1 prompt; ") as exc:
        run_probe(PROBE, generate=two, sample_k=3)
    one_sentence(exc)


@pytest.mark.parametrize(
    "kwargs,expected",
    [
        (dict(generate=lambda p: p), "no name of its own"),
        (dict(generate=Counting(), model="openai:gpt-4o"), "write it as function:NAME"),
        (dict(generate=Counting(), generate_chat=Counting(), model="function:x"), "not both"),
        (dict(model="function:x"), "pass the function itself as generate="),
        (dict(), "Name a model"),
        (dict(config=RunConfig(seed=1)), "Name a model"),
        (dict(generate=Counting(), model="function:x", generate_batch_size=0), "generate_batch_size"),
        (dict(generate=Counting(), model="function:x", config=RunConfig(system_prompt="Be fair.")),
         "pass the function as generate_chat="),
        (dict(generate=Counting(), model="function:x", config=RunConfig(executor="ray")),
         "local executor"),
    ],
    ids=["lambda", "other-backend", "both", "no-function", "no-model", "config-without-model", "batch-size", "system-prompt", "ray"],
)
def test_a_wrong_call_is_one_sentence(kwargs, expected):
    with pytest.raises(UserError, match=expected) as exc:
        run_probe(PROBE, sample_k=3, **kwargs)
    one_sentence(exc)


def test_a_transformers_pipeline_as_the_generator(tmp_path):
    pytest.importorskip("torch", reason="the pipeline example needs torch")
    pytest.importorskip("transformers", reason="the pipeline example needs transformers")
    from transformers import pipeline

    from genderprobe.testing.tiny_models import build_tiny_model

    directory = build_tiny_model(tmp_path / "tiny")
    pipe = pipeline("text-generation", model=str(directory), device="cpu")
    pipe.tokenizer.padding_side = "left"  # a decoder pads on the left to generate in batches
    calls = []

    def tiny(prompts):
        calls.append(len(prompts))
        outs = pipe(prompts, max_new_tokens=6, do_sample=False, return_full_text=False, batch_size=len(prompts))
        return [o[0]["generated_text"] for o in outs]

    out = run_probe(PROBE, generate=tiny, sample_k=6, generate_batch_size=4,
                    config=RunConfig(out_dir=tmp_path / "out"))
    assert calls == [4, 4, 4]
    doc = json.loads(out.results_path.read_text())
    assert doc["model"] == "function:test_a_transformers_pipeline_as_the_generator.<locals>.tiny"
    assert doc["run"]["sent"] == 12 and doc["counts"]["attempts"] == 12
    records = [json.loads(line) for line in out.records_path.read_text().splitlines()]
    assert len(records) == 12 and all(isinstance(r["answer"], str) for r in records)
    assert run_probe(PROBE, generate=tiny, sample_k=6).document["run"]["cached"] == 12
    assert calls == [4, 4, 4]  # the rerun answered from the store


# -- (e) the caller's RunConfig is left alone ---------------------------------------------


def test_run_probe_does_not_change_the_callers_config(tmp_path):
    config = RunConfig(model="reference:random", seed=3, cache_dir=tmp_path / "cache", generation={"max_tokens": 9})
    before = dataclasses.replace(config, generation=dict(config.generation))
    biased = run_probe(PROBE, "reference:biased", config=config, sample_k=5)
    mine = run_probe(PROBE, generate=Counting(), model="function:mine", config=config, sample_k=5)
    assert config == before and config.model_object is None
    assert biased.document["model"] == "reference:biased" and mine.document["model"] == "function:mine"
    assert run_probe(PROBE, config=config, sample_k=5).document["model"] == "reference:random"  # the config's model
