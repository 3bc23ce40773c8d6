"""The harness: probe + model + store + runner -> results. Shared by CLI and Python API."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import functools
import hashlib
import platform
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genderprobe.accounting import empty_warnings, runner_accounting
from genderprobe.breakdown_tests import breakdown_tests
from genderprobe.contract import ListSink, NullSink, ProbeResult, RunContext, count_in_range
from genderprobe.disk import is_full, out_disk_error
from genderprobe.dry_run import DryRun, counted_document, dry_run_document
from genderprobe.equivalence import check_margin, equivalence, withhold_claims
from genderprobe.errors import UserError
from genderprobe.executors import open_model
from genderprobe.losses import unread_warnings
from genderprobe.models import ModelOptions, get_model
from genderprobe.models.base import GenerationParams, Model
from genderprobe.models.function import DEFAULT_BATCH_SIZE, FunctionModel
from genderprobe.packaged import all_data_files
from genderprobe.paper import paper_section
from genderprobe.planning import interval_halving
from genderprobe.reader_judge import DEFAULT_SAMPLE, ReaderJudge
from genderprobe.records import FILE_NAMES as RECORDS_FILES
from genderprobe.records import choose_format, open_sink
from genderprobe.records_parquet import jsonl_to_parquet, require_pyarrow
from genderprobe.registry import get_probe
from genderprobe.results import write_json
from genderprobe.run_thread import RunThread, in_event_loop, wait_for
from genderprobe.runner import Runner
from genderprobe.sequential import check as check_question
from genderprobe.sequential import run_until_decided
from genderprobe.store import Store, default_cache_dir
from genderprobe.validity import assess
from genderprobe.work_bounds import DEFAULT_MAX_REQUESTS, check_limit, check_work

RESULTS_SCHEMA = 1


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
    # deviation from the papers; see genderprobe.reader_judge).
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
    max_error_rate: float | None = 0.03
    executor: str = "local"  # or "ray": see genderprobe.executors
    ray_address: str | None = None
    ray_workers: int | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    store_timeout: float = 10.0  # seconds to wait for a store another process is writing
    out_dir: Path | None = None
    keep_records: bool = True
    # records.jsonl or records.parquet; "auto" picks Parquet above
    # genderprobe.records.AUTO_PARQUET_ROWS records (see genderprobe.records).
    records_format: str = "auto"
    records_parquet: bool = False  # also write records.parquet beside records.jsonl
    progress: object | None = None
    # Answers older than this many seconds are asked again (model aliases move).
    cache_max_age: float | None = None
    # Send missing requests through the provider's batch API (genderprobe.batch).
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
    # --equivalence-margin D: also show whether each headline's bias is within +-D (genderprobe.equivalence).
    equivalence_margin: float | None = None
    # --until-decided QUESTION: ask in rounds until a confidence sequence settles it (genderprobe.sequential).
    until_decided: str | None = None
    # A model already built (the Python API's generate= function) to run instead
    # of opening ``model``, which is then its spec. The run closes it at the end,
    # as it closes the models it opens.
    model_object: Model | None = None


@dataclass
class RunOutput:
    result: ProbeResult
    document: dict[str, Any]
    records: list[dict[str, Any]] | None = None
    results_path: Path | None = None
    records_path: Path | None = None
    parquet_path: Path | None = None


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
    return lambda: execute(instance, config)


def execute(probe: Any, config: RunConfig) -> RunOutput:
    if probe.needs_judge and not config.judge:
        raise UserError(f"Probe '{probe.name}' needs a judge model; pass --judge SPEC.")
    if config.judge and not probe.needs_judge:
        raise UserError(f"Probe '{probe.name}' asks no judge; drop the judge (--judge).")
    if config.checker and not probe.needs_judge:
        raise UserError(f"Probe '{probe.name}' has no judge whose labels a checker could check; drop --checker.")
    if config.score_options and not probe.supports_option_scoring:
        raise UserError(f"Probe '{probe.name}' has no closed-choice prompts to score by log-probability.")
    if config.constrain_answers and not probe.supports_constrained_answers:
        raise UserError(f"Probe '{probe.name}' has no closed-choice prompts whose answers could be constrained; "
                        "drop --constrain-answers.")
    if config.reader_judge and not probe.supports_reader_judge:
        raise UserError(f"Probe '{probe.name}' has no closed-choice answers a judge could read; drop --reader-judge.")
    if config.reader_judge and config.score_options:
        raise UserError("--score-options reads no text a judge could read; drop --reader-judge or --score-options.")
    count_in_range(config.reader_judge_sample, 0, None, "The reader judge's check sample (--reader-judge-sample)")
    if config.constrain_answers and config.score_options:
        raise UserError("--score-options already reads only the options; drop --constrain-answers or --score-options.")
    count_in_range(config.seed, 0, None, "The seed (--seed)")
    count_in_range(config.n_resamples, 1, None, "The number of bootstrap resamples (--resamples)")
    check_margin(config.equivalence_margin)
    if config.until_decided is not None:
        check_question(probe.name, config.until_decided, config.equivalence_margin, config.use_cache)
        return run_until_decided(probe, config, execute)
    generation = _generation(probe.default_generation, config)
    if config.records_parquet:
        if config.out_dir is None or not config.keep_records:
            raise UserError("Parquet records (--parquet) need --out and records (drop --no-records).")
        require_pyarrow()
    counted = check_work(probe, check_limit(config.max_requests), dry_run=config.dry_run)
    if counted is not None:  # a dry run above the limit: counted, nothing built
        return RunOutput(result=ProbeResult(metrics={}),
                         document=counted_document(probe, config.model, counted, config.max_requests))
    records_format = choose_format(config.records_format, probe.expected_records())
    if config.out_dir is not None:
        _check_out_dir(Path(config.out_dir))
    if config.batch:
        from genderprobe.batch import refuse_batch_early

        refuse_batch_early(config.model, config.executor)
    if config.model_object is not None:
        if config.executor != "local":
            raise UserError(f"The model {config.model_object.spec} is an object in this process; "
                            f"run it with the local executor.")
        model, concurrency = config.model_object, config.concurrency
    else:
        model, concurrency = open_model(
            config.model, config.model_options, executor=config.executor, concurrency=config.concurrency,
            ray_address=config.ray_address, ray_workers=config.ray_workers,
        )
    # A generate= function gets lists of its own batch size, each stored before the next is asked.
    own_batch = {"batch_size": model.runner_batch_size} if isinstance(model, FunctionModel) else {}
    # Everything opened from here on is released however the run ends: a model
    # (a Ray pool, GPU memory) must not outlive a failure to open the store.
    judge_model = checker_model = reader_model = store = runner = judge_runner = checker_runner = None
    reader_runner = reader_judge = None
    sink: Any = None
    records_path: Path | None = None  # set once its sink is open
    try:
        if config.score_options and not model.supports_option_scoring:
            raise UserError(f"Model '{model.spec}' cannot score answer options by log-probability.")
        if config.constrain_answers and not model.supports_constrained_answers:
            raise UserError(f"Model '{model.spec}' cannot constrain its answers to the options; "
                            "drop --constrain-answers.")
        if config.judge:
            judge_model = get_model(config.judge, config.judge_options or config.model_options)
        if config.checker:
            checker_model = get_model(config.checker, config.checker_options or config.model_options)
        if config.reader_judge:
            reader_model = get_model(config.reader_judge, config.reader_judge_options or config.model_options)
        if config.batch:
            from genderprobe.batch import require_batch_api

            require_batch_api(model)
            if not config.use_cache:
                raise UserError("--batch keeps its batch ids in the response store to resume them; drop --no-cache.")
        if config.use_cache and any(m and m.cacheable for m in (model, judge_model, checker_model, reader_model)):
            cache_dir = config.cache_dir or default_cache_dir()
            store = Store(Path(cache_dir) / "responses.sqlite3", timeout=config.store_timeout)
            if not config.dry_run:
                store.check_writable()  # before the first request: answers paid for must be kept
        engine = {
            "concurrency": concurrency,
            "rpm": config.rpm,
            "tpm": config.tpm,
            "max_retries": config.max_retries,
            "max_error_rate": config.max_error_rate,
            "cache_max_age": config.cache_max_age,
            "max_requests": config.max_requests,
            "spill_to": (config.out_dir,) if config.out_dir else (),  # should the store's disk fill up
        }
        progress = config.progress

        def runner_for(opened: Any, judge_label: str | None = None) -> Any:
            """The model's runner (a dry run's counter with --dry-run); judges get their own progress line."""
            if config.dry_run:
                return DryRun(opened, store, max_age=config.cache_max_age, max_requests=config.max_requests)
            if judge_label is None:
                return Runner(opened, store, progress=progress, batch=config.batch,
                              batch_poll_interval=config.batch_poll_interval, **engine, **own_batch)
            line = progress.beside(judge_label) if progress is not None else None
            return Runner(opened, store, progress=line, **{**engine, "concurrency": config.concurrency})

        runner = runner_for(model)
        if judge_model:
            judge_runner = runner_for(judge_model, "judge")
        if checker_model:
            checker_runner = runner_for(checker_model, "checker")
        if reader_model:
            reader_runner = runner_for(reader_model, "reader judge")
            reader_judge = ReaderJudge(reader_runner, reader_model.spec, sample=config.reader_judge_sample)

        results_path = None
        if config.dry_run:
            sink = NullSink()
        elif config.out_dir is not None and config.keep_records:
            schema = probe.records_schema() if records_format == "parquet" else None
            path = Path(config.out_dir) / RECORDS_FILES[records_format]
            sink = _output(lambda: open_sink(Path(config.out_dir), records_format, schema), path)
            records_path = path
        elif config.keep_records:
            sink = ListSink()
        else:
            sink = NullSink()

        ctx = RunContext(
            ask=runner,
            generation=generation,
            records=sink,
            judge=judge_runner,
            score_options=config.score_options,
            constrain_answers=config.constrain_answers,
            n_resamples=config.n_resamples,
            seed=config.seed,
            system_prompt=config.system_prompt,
            checker=checker_runner,
            reader_judge=reader_judge,
        )
        started = dt.datetime.now(dt.UTC)
        try:
            result = probe.run(ctx)
        except OSError as exc:  # the records' disk filled up: the answers are in the store
            if config.out_dir is None or not is_full(exc):
                raise
            raise out_disk_error(records_path or Path(config.out_dir), exc) from None
        if reader_judge:
            _add_reader_judge(result, reader_judge)
    except BaseException:
        if records_path is not None:
            sink.discard()
        raise
    finally:
        for owner, opened in ((runner, model), (judge_runner, judge_model), (checker_runner, checker_model),
                              (reader_runner, reader_model)):
            _release(owner or opened)
        if store:
            store.close()

    if config.dry_run:
        return RunOutput(result=result, document=dry_run_document(
            probe, model, {"model": runner, "judge": judge_runner, "checker": checker_runner,
                           "reader_judge": reader_runner},
            prices={"model": (config.price_in, config.price_out)}
            | dict.fromkeys(("judge", "checker", "reader_judge"), (config.judge_price_in, config.judge_price_out)),
        ))
    judge_prices = (config.judge_price_in, config.judge_price_out)
    run_stats = runner_accounting(runner, model, generation, (config.price_in, config.price_out))
    document = {
        "schema": RESULTS_SCHEMA,
        "probe": probe.name,
        "summary": probe.summary,
        "model": model.spec,
        "endpoint": model.endpoint,
        "judge": judge_model.spec if judge_model else None,
        "checker": checker_model.spec if checker_model else None,
        "reader_judge": reader_model.spec if reader_model else None,
        "created": started.isoformat(timespec="seconds"),
        "parameters": {
            "probe": probe.parameters(),
            "generation": generation.as_dict(),
            "system_prompt": config.system_prompt,
            "seed": config.seed,
            "n_resamples": config.n_resamples,
            "score_options": config.score_options,
            "constrain_answers": config.constrain_answers,
            "reader_judge": reader_model.spec if reader_model else None,
            "reader_judge_sample": config.reader_judge_sample if reader_model else None,
        },
        # How the answers were decoded (greedy, sampling, a server's default; dtype): compare splits on it.
        "decoding": _decoding(model, generation, config),
        "run": {
            **run_stats,
            "judge": runner_accounting(judge_runner, judge_model, None, judge_prices) if judge_runner else None,
            "checker": runner_accounting(checker_runner, checker_model, None, judge_prices) if checker_runner else None,
            "reader_judge": runner_accounting(reader_runner, reader_model, None, judge_prices) if reader_runner else None,
            "cache": str(store.path) if store else None,
        },
        "versions": versions() | _plugin_versions(probe, (model, judge_model, checker_model, reader_model)),
        "headline": {
            "metrics": [h.to_json() for h in probe.headlines()],
            "view_parameters": list(probe.view_parameters),
        },
        **result.to_json(),
    }
    document["paper"] = paper_section(type(probe), document)
    document["interval_halving"] = interval_halving(document)  # how many items halve each headline interval
    # Each breakdown's groups against the neutral value, Holm-corrected (genderprobe.breakdown_tests).
    document["breakdown_tests"] = breakdown_tests(result, probe.headlines(), config.n_resamples)
    if config.equivalence_margin is not None:
        document["equivalence"] = equivalence(result.metrics, probe.headlines(), config.equivalence_margin,
                                              document.get("marks"))
    document["warnings"] = unread_warnings(result.losses, supports_option_scoring=probe.supports_option_scoring,
                                           scored=config.score_options, max_tokens=generation.max_tokens,
                                           supports_reader_judge=probe.supports_reader_judge,
                                           reader_judged=reader_judge is not None)
    if reader_judge:
        document["warnings"] += reader_judge.readings.warnings()
    for opened in (model, judge_model, checker_model, reader_model):
        if opened is not None:  # what a backend had to change to be answered (a reasoning model's temperature)
            document["warnings"] += list(opened.notes)
    document["warnings"] += empty_warnings(document["run"])
    document["warnings"] += list(result.extra.get("warnings") or [])  # the probe's own (a sample missing topics)
    # What limits these numbers: position, spread, losses, sample, marks, readers (genderprobe.validity).
    document["validity"] = assess(document)
    withhold_claims(document.get("equivalence"), sorted({c["guard"] for c in document["validity"]["checks"]
                                                          if c["status"] == "fail"}))
    out = RunOutput(result=result, document=document)
    if isinstance(sink, ListSink):
        out.records = sink.records
    if config.out_dir is not None:
        results_path = Path(config.out_dir) / "results.json"
        if records_path is not None:
            document["records_file"] = records_path.name
        # Results first, records after: a failure leaves neither file half-written
        # nor records without their results.
        try:
            _output(lambda: write_json(results_path, document), results_path)
            if records_path is not None:
                _output(sink.commit, records_path)
        except BaseException:
            if records_path is not None:
                sink.discard()
            raise
        out.results_path, out.records_path = results_path, records_path
        if config.records_parquet and records_path is not None:
            parquet_path = records_path.with_suffix(".parquet")
            if parquet_path != records_path:
                _output(lambda: jsonl_to_parquet(records_path, parquet_path), parquet_path)
            out.parquet_path = parquet_path
        if records_path is not None:
            _remove_stale_records(records_path, out.parquet_path)
    return out


def _remove_stale_records(written: Path, parquet: Path | None) -> None:
    """Remove the other kind of records file an earlier run left in the folder: it
    belongs to results this run has just replaced, and would be read as this run's."""
    for name in RECORDS_FILES.values():
        other = written.parent / name
        if other not in (written, parquet):
            _output(functools.partial(other.unlink, missing_ok=True), other)


def _decoding(model: Model, generation: GenerationParams, config: RunConfig) -> dict[str, Any]:
    """The model's decoding of this run; option scoring generates nothing, so only the dtype counts there."""
    decoding = model.decoding(generation)
    if config.score_options:
        kept = {k: decoding[k] for k in ("dtype",) if k in decoding}
        return {"method": "option scoring", "note": "each option's log-probability; no text is generated", **kept}
    if config.constrain_answers:
        decoding["constrained"] = True
    return decoding


def _plugin_versions(probe: Any, models: tuple[Any, ...]) -> dict[str, Any]:
    """{"plugins": {distribution: version}} for the plugins behind the run, or nothing."""
    from genderprobe.registry import plugins_used

    used = plugins_used(probe.name, [m.spec for m in models if m is not None])
    return {"plugins": used} if used else {}


def _add_reader_judge(result: ProbeResult, reader_judge: ReaderJudge) -> None:
    """The judge's readings beside the probe's own: its agreement with the rules, its table and tallies."""
    readings = reader_judge.readings
    result.metrics["reader_judge_agreement"] = readings.agreement()
    result.tables.append(readings.table())
    result.extra["reader_judge"] = readings.to_json()


def _check_out_dir(out_dir: Path) -> None:
    """Create the output folder before anything is paid for, or say why it cannot be."""
    _output(lambda: out_dir.mkdir(parents=True, exist_ok=True), out_dir)
    for name in ("results.json", *RECORDS_FILES.values()):
        if (out_dir / name).is_dir():
            raise UserError(f"{out_dir / name} is a folder; remove it or choose another --out.")


def _output(write: Any, path: Path | None) -> Any:
    """Run ``write``, turning a file-system failure into one sentence naming ``path``."""
    try:
        return write()
    except OSError as exc:
        if is_full(exc) and path is not None:
            raise out_disk_error(path, exc) from None
        raise UserError(
            f"Cannot write {path}: {exc.strerror or exc}; choose another --out "
            f"(answers already received are kept in the store)."
        ) from None


def _release(thing: Any) -> None:
    """Close a runner (its connections and its model) or a model no runner took over."""
    if thing is not None:
        thing.close()


def _generation(defaults: GenerationParams, config: RunConfig) -> GenerationParams:
    overrides = {k: v for k, v in config.generation.items() if v is not None}
    return defaults.replace(**overrides) if overrides else defaults


_DATA_HASHES: dict[str, str] | None = None


def data_versions() -> dict[str, str]:
    """SHA-256 (first 16 hex digits) of every packaged data file, by key."""
    global _DATA_HASHES
    if _DATA_HASHES is None:
        _DATA_HASHES = {key: hashlib.sha256(f.read_bytes()).hexdigest()[:16] for key, f in all_data_files().items()}
    return _DATA_HASHES


def versions() -> dict[str, Any]:
    import numpy
    import scipy

    from genderprobe import __version__

    return {
        "genderprobe": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "data": data_versions(),
    }
