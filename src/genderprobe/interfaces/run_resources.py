"""What a run opens, and its release however the run ends.

:func:`open_run` opens the model (or takes the ``generate=`` function), its
judges, the response store, a runner for each model (a dry run's counter with
``--dry-run``) and the sink its records go to. Leaving the ``with`` block closes
every runner (its connections and its model: a Ray pool, GPU memory) and the
store, whether the run ended well or not; a failure inside it also discards the
records written so far, so no half-written records file is left behind.
:func:`run_in` runs the probe on what was opened.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from genderprobe import steps
from genderprobe.cache_dir import default_cache_dir
from genderprobe.contract import ListSink, NullSink, ProbeResult, RunContext
from genderprobe.engine.disk import is_full, out_disk_error
from genderprobe.engine.dry_run import DryRun
from genderprobe.engine.executors import open_model
from genderprobe.engine.read_only_store import ReadOnlyStore, read_only_to_us
from genderprobe.engine.runner import Runner
from genderprobe.engine.store import Store
from genderprobe.errors import UserError
from genderprobe.interfaces.run_checks import check_model
from genderprobe.models import get_model
from genderprobe.models.base import GenerationParams, Model
from genderprobe.models.function import FunctionModel
from genderprobe.outputs.records import FILE_NAMES as RECORDS_FILES
from genderprobe.outputs.records import open_sink
from genderprobe.outputs.run_files import written
from genderprobe.reading.reader_judge import ReaderJudge

# The models of a run, each with a runner of its own: the model and the judges (genderprobe.engine.accounting).
ROLES = ("model", "judge", "checker", "reader_judge")
# What a judge's progress line is called.
_LABELS = {"judge": "judge", "checker": "checker", "reader_judge": "reader judge"}
# What a probe does once a list of answers is back (the status of its work after the requests).
_AFTER_ANSWERS = "reading the answers, computing metrics and intervals"


@dataclass
class OpenRun:
    """A run's opened parts: by role (ROLES), the models and their runners (None where the run has none)."""

    models: dict[str, Model | None] = field(default_factory=lambda: dict.fromkeys(ROLES))
    runners: dict[str, Any] = field(default_factory=lambda: dict.fromkeys(ROLES))
    store: Store | None = None
    reader_judge: ReaderJudge | None = None
    sink: Any = None
    records_path: Path | None = None  # set once the records file's sink is open

    @property
    def model(self) -> Model:
        return self.models["model"]  # type: ignore[return-value]


@contextmanager
def open_run(probe: Any, config: Any, records_format: str) -> Iterator[OpenRun]:
    """Open what the run of ``probe`` needs; release all of it on leaving, however the run ends."""
    run = OpenRun()
    with steps.step(f"opening {config.model}"):  # local weights take a while to load
        run.models["model"], concurrency = _open_model(config)
    try:
        check_model(run.model, config, probe)
        for role in ROLES[1:]:
            spec = getattr(config, role)
            if spec:
                run.models[role] = get_model(spec, getattr(config, f"{role}_options") or config.model_options)
        if not config.dry_run:  # a dry run sends nothing, so it needs no key
            for model in run.models.values():
                if model is not None:
                    model.check_credentials()
        run.store = _open_store(config, run.models.values())
        for role, model in run.models.items():
            if model is not None:
                run.runners[role] = _runner(config, run.store, model, concurrency, _LABELS.get(role))
        if run.runners["reader_judge"] is not None:
            run.reader_judge = ReaderJudge(run.runners["reader_judge"], run.models["reader_judge"].spec,
                                           sample=config.reader_judge_sample)
        run.sink, run.records_path = _open_sink(probe, config, records_format)
        yield run
    except BaseException:
        if run.records_path is not None:
            run.sink.discard()
        raise
    finally:
        for role in ROLES:
            _release(run.runners[role] or run.models[role])
        if run.store:
            run.store.close()


def run_in(run: OpenRun, probe: Any, config: Any, generation: GenerationParams) -> ProbeResult:
    """Run the probe on the opened models; a full disk under the records is one sentence."""
    ctx = RunContext(
        ask=run.runners["model"],
        generation=generation,
        records=run.sink,
        judge=run.runners["judge"],
        score_options=config.score_options,
        constrain_answers=config.constrain_answers,
        n_resamples=config.n_resamples,
        seed=config.seed,
        system_prompt=config.system_prompt,
        checker=run.runners["checker"],
        reader_judge=run.reader_judge,
    )
    try:
        with steps.step("preparing the prompts") as working:
            result = probe.run(_quiet_while_asking(ctx, working))
    except OSError as exc:  # the records' disk filled up: the answers are in the store
        if config.out_dir is None or not is_full(exc):
            raise
        raise out_disk_error(run.records_path or Path(config.out_dir), exc) from None
    if run.reader_judge:
        _add_reader_judge(result, run.reader_judge)
    return result


def _quiet_while_asking(ctx: RunContext, working: steps.Step) -> RunContext:
    """The context with runners whose requests leave the screen to their own progress, and after whose
    answers ``working``, the step of the probe's own work, is named for what the probe does with them."""

    def quiet(runner: Any) -> Any:
        return None if runner is None else steps.QuietWhileAsking(runner, working, _AFTER_ANSWERS)

    return replace(ctx, ask=quiet(ctx.ask), judge=quiet(ctx.judge), checker=quiet(ctx.checker))


def _open_model(config: Any) -> tuple[Model, int]:
    """The model under test (the generate= function, or the spec opened) and the requests it may have in flight."""
    if config.model_object is None:
        return open_model(config.model, config.model_options, executor=config.executor,
                          concurrency=config.concurrency, ray_address=config.ray_address,
                          ray_workers=config.ray_workers)
    if config.executor != "local":
        raise UserError(f"The model {config.model_object.spec} is an object in this process; "
                        f"run it with the local executor.")
    return config.model_object, config.concurrency


def _open_store(config: Any, models: Any) -> Store | None:
    """The response store, where a model's answers are worth keeping; checked writable before the first request."""
    if not config.use_cache or not any(m and m.cacheable for m in models):
        return None
    path = Path(config.cache_dir or default_cache_dir()) / "responses.sqlite3"
    try:
        store = Store(path, timeout=config.store_timeout)
        if not config.dry_run:
            store.check_writable()  # before the first request: answers paid for must be kept
    except UserError:
        if not read_only_to_us(path):
            raise
        return ReadOnlyStore(path)  # serves a rerun it holds every answer of; refuses one that would send
    return store


def _runner(config: Any, store: Store | None, model: Model, concurrency: int, judge_label: str | None) -> Any:
    """The model's runner (a dry run's counter with --dry-run); judges get their own progress line."""
    if config.dry_run:
        return DryRun(model, store, max_age=config.cache_max_age, max_requests=config.max_requests,
                      keep_empty=config.keep_empty)
    engine = {
        "rpm": config.rpm,
        "tpm": config.tpm,
        "max_retries": config.max_retries,
        "max_retry_after": config.max_retry_wait,
        "max_error_rate": config.max_error_rate,
        "cache_max_age": config.cache_max_age,
        "max_requests": config.max_requests,
        "keep_empty": config.keep_empty,
        "spill_to": (config.out_dir,) if config.out_dir else (),  # where earlier versions spilled: looked in
    }
    if judge_label is None:
        # A generate= function gets lists of its own batch size, each stored before the next is asked.
        own_batch = {"batch_size": model.runner_batch_size} if isinstance(model, FunctionModel) else {}
        return Runner(model, store, progress=config.progress, batch=config.batch, concurrency=concurrency,
                      batch_poll_interval=config.batch_poll_interval, **engine, **own_batch)
    line = config.progress.beside(judge_label) if config.progress is not None else None
    return Runner(model, store, progress=line, concurrency=config.concurrency, **engine)


def _open_sink(probe: Any, config: Any, records_format: str) -> tuple[Any, Path | None]:
    """Where the records go, and the records file's path where they go to one."""
    if config.dry_run or not config.keep_records:
        return NullSink(), None
    if config.out_dir is None:
        return ListSink(), None
    schema = probe.records_schema() if records_format == "parquet" else None
    path = Path(config.out_dir) / RECORDS_FILES[records_format]
    return written(lambda: open_sink(Path(config.out_dir), records_format, schema), path), path


def _add_reader_judge(result: ProbeResult, reader_judge: ReaderJudge) -> None:
    """The judge's readings beside the probe's own: its agreement with the rules, its table and tallies."""
    readings = reader_judge.readings
    result.metrics["reader_judge_agreement"] = readings.agreement()
    result.tables.append(readings.table())
    result.extra["reader_judge"] = readings.to_json()


def _release(thing: Any) -> None:
    """Close a runner (its connections and its model) or a model no runner took over."""
    if thing is not None:
        thing.close()
