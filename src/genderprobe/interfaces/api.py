"""The Python API, and the run every interface shares: probe + model + store + runner -> results.

:func:`run_probe` and :func:`arun_probe` are the Python API; :func:`execute`
is the run itself, in its stages, which the command line, suites and the
Python API all call: check the options (:mod:`.run_checks`), open what the run
needs and release it however it ends (:mod:`.run_resources`), run the probe,
build the results document (:mod:`genderprobe.outputs.run_document`) and write
its files (:mod:`genderprobe.outputs.run_files`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genderprobe import steps
from genderprobe.analysis.sequential import run_until_decided
from genderprobe.contract import ListSink, ProbeResult, limited
from genderprobe.engine.dry_run import counted_document, dry_run_document
from genderprobe.engine.run_thread import RunThread, in_event_loop, wait_for
from genderprobe.engine.work_bounds import DEFAULT_MAX_REQUESTS, check_limit, check_work
from genderprobe.errors import UserError
from genderprobe.interfaces.run_checks import check_options
from genderprobe.interfaces.run_resources import ROLES, open_run, run_in
from genderprobe.models import ModelOptions
from genderprobe.models.base import GenerationParams, Model
from genderprobe.models.function import DEFAULT_BATCH_SIZE, FunctionModel
from genderprobe.outputs.records import choose_format
from genderprobe.outputs.run_document import results_document
from genderprobe.outputs.run_files import check_out_dir, write_run_files
from genderprobe.reading.reader_judge import DEFAULT_SAMPLE
from genderprobe.registry import get_probe


@dataclass
class RunConfig:
    """Everything about a run that is not the probe's own parameters."""

    model: str = ""  # a model spec; run_probe's model= or generate= fills it in
    judge: str | None = None
    model_options: ModelOptions = field(default_factory=ModelOptions)
    judge_options: ModelOptions | None = None
    checker: str | None = None  # checks the judge's labels (default: the judge itself)
    checker_options: ModelOptions | None = None
    # A judge that reads the closed-choice answers the rules cannot (a named
    # deviation from the papers; see genderprobe.reading.reader_judge).
    reader_judge: str | None = None
    reader_judge_options: ModelOptions | None = None
    reader_judge_sample: int = DEFAULT_SAMPLE
    generation: dict[str, Any] = field(default_factory=dict)  # user overrides
    system_prompt: str | None = None
    seed: int = 0
    n_resamples: int = 1000
    score_options: bool = False
    # Ask the backend to answer only with one of the options (a named deviation
    # from the papers, which let models answer freely).
    constrain_answers: bool = False
    concurrency: int = 8
    # Most requests a run may send to a model (None: no limit); counted before building where the probe can.
    max_requests: int | None = DEFAULT_MAX_REQUESTS
    rpm: float | None = None
    tpm: float | None = None
    max_retries: int = 6
    max_retry_wait: float = 300.0  # the longest Retry-After waited out; a longer one stops the run
    max_error_rate: float | None = 0.03
    executor: str = "local"  # or "ray": see genderprobe.engine.executors
    ray_address: str | None = None
    ray_workers: int | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    store_timeout: float = 10.0  # seconds to wait for a store another process is writing
    out_dir: Path | None = None
    keep_records: bool = True
    # records.jsonl or records.parquet; "auto" picks Parquet above
    # genderprobe.outputs.records.AUTO_PARQUET_ROWS records (see genderprobe.outputs.records).
    records_format: str = "auto"
    records_parquet: bool = False  # also write records.parquet beside records.jsonl
    # A display with expect/advance/stop (the CLI's progress bar); None: a notebook's own line in
    # a Jupyter kernel, nothing elsewhere; False: nothing anywhere.
    progress: object | None = None
    # Answers older than this many seconds are asked again (model aliases move).
    cache_max_age: float | None = None
    # Take stored empty answers as they are (lost answers of kind empty) instead of asking once more:
    # a reread with another reader sends nothing (genderprobe.engine.empty_answers).
    keep_empty: bool = False
    # Send missing requests through the provider's batch API (genderprobe.engine.batch).
    batch: bool = False
    batch_poll_interval: float = 30.0
    # US dollars per million tokens in and out, for the cost in the results.
    price_in: float | None = None
    price_out: float | None = None
    judge_price_in: float | None = None
    judge_price_out: float | None = None
    # Build the requests, count them against the store and estimate tokens and
    # cost; send nothing and write no files.
    dry_run: bool = False
    # --equivalence-margin D: also show whether each headline's bias is within +-D (genderprobe.analysis.equivalence).
    equivalence_margin: float | None = None
    # --limit N: a smoke run asking at most N of the probe's items (its size parameter capped;
    # genderprobe.contract.limited), marked in its results as not comparable with a full run.
    limit: int | None = None
    # --until-decided QUESTION: ask in rounds until a confidence sequence settles it (genderprobe.analysis.sequential).
    until_decided: str | None = None
    # Set by --until-decided on the run of its last round, not by users: its verdict and confidence
    # sequence, written into that run's results (and a warning where it stopped early).
    decided: dict[str, Any] | None = field(default=None, repr=False)
    # A model already built (the Python API's generate= function) to run instead
    # of opening ``model``, which is then its spec. The run closes it at the end,
    # as it closes the models it opens.
    model_object: Model | None = None
    # Shortcuts for the connection settings people reach for first; they go into
    # model_options (the judges' too, unless those have options of their own).
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str | None = None
    timeout: float | None = None

    def __post_init__(self) -> None:
        if self.limit is not None and (isinstance(self.limit, bool) or not isinstance(self.limit, int)
                                       or self.limit < 1):
            raise UserError(f"limit must be a whole number of items, at least 1 (got {self.limit!r}).")
        given = {k: getattr(self, k) for k in CONNECTION_SHORTCUTS if getattr(self, k) is not None}
        default = ModelOptions()
        for key, value in given.items():
            held = getattr(self.model_options, key)
            if held != getattr(default, key) and held != value:
                raise UserError(f"RunConfig sets {key} both directly and in model_options, differently; "
                                f"set it in one place.")
        if given:
            self.model_options = dataclasses.replace(self.model_options, **given)


CONNECTION_SHORTCUTS = ("base_url", "api_key", "api_key_env", "timeout")


@dataclass
class RunOutput:
    result: ProbeResult
    document: dict[str, Any]
    records: list[dict[str, Any]] | None = None
    results_path: Path | None = None
    records_path: Path | None = None
    parquet_path: Path | None = None

    # A notebook prints the last expression of a cell: the dataclass repr held every record.
    def __repr__(self) -> str:
        from genderprobe.outputs.notebook import run_text

        return run_text(self)

    def _repr_html_(self) -> str:
        from genderprobe.outputs.notebook import run_html

        return run_html(self)


def run_probe(probe: str, model: str | None = None, *, config: RunConfig | None = None,
              generate: Callable[..., Any] | None = None, generate_chat: Callable[..., Any] | None = None,
              generate_batch_size: int = DEFAULT_BATCH_SIZE, **params: Any) -> RunOutput:
    """Run ``probe`` on ``model`` (or on your own ``generate=`` function); probe parameters as keyword arguments.

    ``config`` holds everything else about the run and is not changed. Called
    inside a running event loop (a notebook cell), the run goes to a thread of
    its own and this call waits for it; Ctrl-C stops it, keeping the answers
    received. See docs/python-api.md and :mod:`genderprobe.models.function`.

    >>> out = run_probe("relationship-levy", "reference:biased", sample_k=50)
    >>> out.result.metrics["diff_success_rate"].value
    1.0
    """
    run = _prepared(probe, model, config, generate, generate_chat, generate_batch_size, params)
    if not in_event_loop():
        return run()
    # The runner drives its own event loop, which cannot start inside a running one.
    return wait_for(RunThread(run))


async def arun_probe(probe: str, model: str | None = None, *, config: RunConfig | None = None,
                     generate: Callable[..., Any] | None = None, generate_chat: Callable[..., Any] | None = None,
                     generate_batch_size: int = DEFAULT_BATCH_SIZE, **params: Any) -> RunOutput:
    """:func:`run_probe` for async code: the run goes to a thread and the event loop goes on.

    Cancelling the awaiting task stops the run as Ctrl-C would, keeping the answers received.

    >>> out = asyncio.run(arun_probe("relationship-levy", "reference:biased", sample_k=50))
    >>> out.result.metrics["diff_success_rate"].value
    1.0
    """
    worker = RunThread(_prepared(probe, model, config, generate, generate_chat, generate_batch_size, params))
    try:
        await asyncio.to_thread(worker.finished.wait)
    except asyncio.CancelledError:
        worker.interrupt()
        # The answers received are stored before the cancellation goes on.
        await asyncio.to_thread(worker.finished.wait)
        raise
    return worker.outcome()


def dry_run_cost(probe: str, params: dict[str, Any], price_in: float | None = None,
                 price_out: float | None = None) -> dict[str, Any]:
    """Requests, estimated tokens and the most it costs: a dry run of ``probe`` with ``params`` (genderprobe plan)."""
    config = RunConfig(dry_run=True, use_cache=False, keep_records=False, price_in=price_in, price_out=price_out)
    return run_probe(probe, "reference:random", config=config, **params).document["dry_run"]["model"]


def _prepared(probe: str, model: str | None, config: RunConfig | None, generate: Callable[..., Any] | None,
              generate_chat: Callable[..., Any] | None, batch_size: int,
              params: dict[str, Any]) -> Callable[[], RunOutput]:
    """Check the arguments and build the probe here, in the caller's thread; return the run itself."""
    if generate is not None and generate_chat is not None:
        raise UserError("Pass either generate= (prompts) or generate_chat= (conversations), not both.")
    fn = generate if generate is not None else generate_chat
    if fn is not None:
        name = None
        if model is not None:
            prefix, _, name = model.partition(":")
            if prefix != "function" or not name:
                raise UserError(f"With generate= the model names the function's answers in the store; "
                                f"write it as function:NAME, not {model!r}.")
        function_model = FunctionModel(fn, name=name, chat=generate_chat is not None, batch_size=batch_size)
        changes: dict[str, Any] = {"model": function_model.spec, "model_object": function_model}
    elif model is not None:
        changes = {"model": model}
    elif config is not None and config.model:
        changes = {}
    else:
        raise UserError("Name a model (for example model='reference:random') or pass your own generate= function.")
    # A copy: the caller's config may serve several runs, on several models.
    config = dataclasses.replace(config or RunConfig(), **changes)
    if config.model.startswith("function:") and config.model_object is None:
        raise UserError(f"The model {config.model} is a Python function; pass the function itself as generate=.")
    instance = get_probe(probe)(**params)
    config, display = _progress_display(config)

    def run() -> RunOutput:
        try:
            return execute(instance, config)
        finally:
            if display is not None:
                display.stop()

    return run


def _progress_display(config: RunConfig) -> tuple[RunConfig, Any]:
    """The config with its progress display: a notebook's own bar in a Jupyter kernel unless the
    caller chose one (progress=False: none); the display this call made, to stop at the end."""
    if config.progress is False:
        return dataclasses.replace(config, progress=None), None
    if config.progress is not None or config.dry_run:
        return config, None
    from genderprobe.outputs.notebook_progress import NotebookProgress
    from genderprobe.outputs.terminal import in_notebook

    if not in_notebook():
        return config, None
    display = NotebookProgress()
    return dataclasses.replace(config, progress=display), display


def execute(probe: Any, config: RunConfig) -> RunOutput:
    """Run ``probe`` as ``config`` says, in the stages of every run: check, open, run, document, write.

    Where the run shows its progress, its steps without requests (the metrics, the files) show a
    status too, once they take seconds (:mod:`genderprobe.outputs.activity`)."""
    if config.progress is None:
        return _execute(probe, config)
    from genderprobe.outputs.activity import display_beside, shown

    with shown(display_beside(config.progress)):
        return _execute(probe, config)


def _execute(probe: Any, config: RunConfig) -> RunOutput:
    probe = limited(probe, config.limit)
    check_options(probe, config)
    if config.until_decided is not None:
        return run_until_decided(probe, config, execute)
    generation = _generation(probe.default_generation, config)
    with steps.step("counting the run's requests"):
        counted = check_work(probe, check_limit(config.max_requests), dry_run=config.dry_run)
    if counted is not None:  # a dry run above the limit: counted, nothing built
        return RunOutput(result=ProbeResult(metrics={}),
                         document=counted_document(probe, config.model, counted, config.max_requests))
    records_format = choose_format(config.records_format, probe.expected_records())
    if config.out_dir is not None:
        check_out_dir(Path(config.out_dir))
    if config.batch:
        from genderprobe.engine.batch import refuse_batch_early

        refuse_batch_early(config.model, config.executor)
    with open_run(probe, config, records_format) as run:
        started = dt.datetime.now(dt.UTC)
        result = run_in(run, probe, config, generation)
    if config.dry_run:
        judge_prices = (config.judge_price_in, config.judge_price_out)
        prices = {"model": (config.price_in, config.price_out)} | dict.fromkeys(ROLES[1:], judge_prices)
        return RunOutput(result=result, document=dry_run_document(probe, run.model, run.runners, prices=prices))
    with steps.step("assembling the results (breakdown tests, validity)"):
        out = RunOutput(result=result, document=results_document(probe, config, run, result, generation, started))
    if isinstance(run.sink, ListSink):
        out.records = run.sink.records
    if config.out_dir is not None:
        with steps.step(f"writing the results to {config.out_dir}"):
            out.results_path, out.records_path, out.parquet_path = write_run_files(
                Path(config.out_dir), out.document, run.sink, run.records_path, parquet=config.records_parquet)
    return out


def _generation(defaults: GenerationParams, config: RunConfig) -> GenerationParams:
    overrides = {k: v for k, v in config.generation.items() if v is not None}
    return defaults.replace(**overrides) if overrides else defaults
