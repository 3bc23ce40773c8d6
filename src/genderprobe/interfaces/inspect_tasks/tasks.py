"""One inspect task per genderprobe probe: ``genderprobe/<probe name with underscores>``.

Importing this module registers them; inspect imports it through the
``inspect_ai`` entry point in pyproject.toml, so ``inspect eval
genderprobe/relationship_levy`` finds the task with nothing else to do.
"""

from __future__ import annotations

import dataclasses
import inspect as pyinspect
import logging
import math
import typing
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from genderprobe.contract import Probe, ProbeResult
from genderprobe.interfaces.inspect_tasks.driver import ProbeDriver
from genderprobe.registry import all_probes
from genderprobe.version import __version__

log = logging.getLogger(__name__)

# Run settings a task takes besides the probe's own parameters (genderprobe run's --seed,
# --resamples, --system-prompt). Generation settings come from inspect (--temperature, ...).
HARNESS_PARAMETERS = {"seed": 0, "n_resamples": 1000, "system_prompt": None}


def task_name(probe_name: str) -> str:
    return probe_name.replace("-", "_")


def metric_values(probe: Probe, result: ProbeResult) -> dict[str, float]:
    """The probe's metrics as inspect metrics: headline metrics first, each with its
    95% interval (``<name>_ci_low``, ``<name>_ci_high``), then the others; undefined ones left out."""
    headline = [h.metric for h in probe.headlines()]
    out: dict[str, float] = {}
    for name in headline + [m for m in result.metrics if m not in headline]:
        est = result.metrics.get(name)
        if est is None:
            continue
        shown = [(name, est.value)]
        if name in headline:
            shown += [(f"{name}_ci_low", est.ci_low), (f"{name}_ci_high", est.ci_high)]
        out.update((key, float(v)) for key, v in shown if v is not None and math.isfinite(float(v)))
    return out


@solver
def answer_request(driver: ProbeDriver) -> Solver:
    """Ask the sample's model (the evaluated one, or the judge/checker role) with the probe's generation settings."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        driver.started += 1
        role, params = state.metadata["role"], state.metadata["generation"]
        if role == "model":
            return await generate(state, tool_calls="none", **params)
        output = await get_model(role=role, required=True).generate(state.messages, config=GenerateConfig(**params))
        state.output = output
        state.messages.append(output.message)
        return state

    return solve


@scorer(name="genderprobe", metrics=[])
def answer_status() -> Scorer:
    """Whether an answer came back; the probe reads a round's answers together, after the round
    (the ``probe_code`` reducer then replaces this with the probe's code for the answer)."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value="answered" if state.output.completion.strip() else "empty",
                     answer=state.output.completion, metadata={"sample": state.sample_id})

    return score


@score_reducer(name="probe_code")
def probe_code(driver: ProbeDriver) -> ScoreReducer:
    """Each sample's final score: the code the probe gave its answer (male, female, undetected, ...)."""

    def reduce(scores: list[Score]) -> Score:
        score = scores[0]
        code = driver.codes.get(int(score.metadata["sample"])) if score.metadata else None
        return score if code is None else score.model_copy(update={"value": code})

    return reduce


@metric(name="probe_metrics")
def probe_metrics(driver: ProbeDriver) -> Metric:
    """The probe's own metrics, computed by its run() from the answers inspect collected."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        # Empty while the task runs: inspect shows metrics as it goes, the probe computes them at the end.
        if driver.result is not None:
            return metric_values(driver.probe, driver.result)
        why = driver.cut_short(len(scores))
        if why:
            log.warning(why)
        return {}

    return compute


def probe_task(probe_cls: type[Probe], **kwargs: Any) -> Task:
    """The inspect Task of one run of ``probe_cls`` with these probe and run parameters."""
    hints = typing.get_type_hints(probe_cls.Params)
    harness = {k: kwargs.pop(k, default) for k, default in HARNESS_PARAMETERS.items()}
    probe = probe_cls(**{k: _coerce(hints.get(k), v) for k, v in kwargs.items()})
    driver = ProbeDriver(probe, **harness)
    return Task(
        dataset=driver,
        solver=answer_request(driver),
        scorer=answer_status(),
        metrics=[probe_metrics(driver)],
        epochs=Epochs(1, probe_code(driver)),
        metadata={"genderprobe": __version__, "probe": probe.name, "parameters": probe.parameters(), **harness},
    )


def _coerce(hint: Any, value: Any) -> Any:
    """-T values as the probe's parameter types want them: a tuple from a list, from
    comma-separated text (``-T languages=en,fr``) or from one value (``-T temperatures=0.5``)."""
    if typing.get_origin(hint) is not tuple or isinstance(value, tuple):
        return value
    item = (typing.get_args(hint) or (str,))[0]
    parts = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else [value]
    return tuple(item(p.strip() if isinstance(p, str) else p) for p in parts if str(p).strip())


def _register(probe_cls: type[Probe]) -> Any:
    fields = dataclasses.fields(probe_cls.Params)
    clash = {f.name for f in fields} & HARNESS_PARAMETERS.keys()
    if clash:
        raise TypeError(f"Probe '{probe_cls.name}' has a parameter named like a run setting: {sorted(clash)}")
    P = pyinspect.Parameter
    params = [P(f.name, P.KEYWORD_ONLY, default=f.default) for f in fields]
    params += [P(k, P.KEYWORD_ONLY, default=v) for k, v in HARNESS_PARAMETERS.items()]

    def make(**kwargs: Any) -> Task:
        return probe_task(probe_cls, **kwargs)

    make.__signature__ = pyinspect.Signature(params, return_annotation=Task)  # type: ignore[attr-defined]
    make.__name__ = make.__qualname__ = task_name(probe_cls.name)
    make.__doc__ = probe_cls.summary
    return task(name=task_name(probe_cls.name))(make)


TASKS = {task_name(name): _register(cls) for name, cls in all_probes().items()}
