"""A suite: many probes on many models, in one folder, with one report.

    DIR/suite.json                          what was asked, and how each run stands
    DIR/<model folder>/<probe>/results.json one run each, as ``genderprobe run --out`` writes it
    DIR/report.html                         the combined report (genderprobe.outputs.report.suite_report)

Runs go one after another through :func:`genderprobe.interfaces.api.execute`. A suite run
again continues where it stopped: a run whose results.json already holds the
same probe, model and parameters is skipped, and the answers of a run that was
stopped halfway are in the response store, so nothing is paid for twice.

A suite file (TOML) can hold the whole suite; its [generation], [model], [run]
and [judge] sections are those of a run's config file (genderprobe.interfaces.config):

    [suite]
    models = ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"]
    probes = ["relationship-levy", "genmo"]
    seed = 0

    [probes.relationship-levy]
    sample_k = 300
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import time
import tomllib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from genderprobe.contract import Probe, limited
from genderprobe.errors import RunFailed, UserError
from genderprobe.interfaces.api import RunConfig, RunOutput, execute
from genderprobe.interfaces.config import SCHEMA, FileConfig, validate
from genderprobe.interfaces.userfiles import read_user_text
from genderprobe.models import gives_loglikelihood
from genderprobe.outputs.report.suite_report import REPORT_HTML, SUITE_JSON
from genderprobe.outputs.results import load_results, to_jsonable, write_json
from genderprobe.registry import all_probes, get_probe

SUITE_SCHEMA = 1
# pending: not started; running: started and not finished (still running, or the
# suite was stopped: run it again); done: results written; failed: see its error.
STATUSES = ("pending", "running", "done", "failed")


# -- what a suite asks ------------------------------------------------------------


@dataclass
class SuiteSpec:
    """What a suite file asks (anything it leaves out is None or empty)."""

    models: list[str] = field(default_factory=list)
    probes: list[str] = field(default_factory=list)
    seed: int | None = None
    judge: str | None = None
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)  # probe -> its Params arguments


def _names(what: str, known: Callable[[str], bool] = lambda _: True) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or not v or not all(isinstance(s, str) and s.strip() for s in v):
            return f"must be a non-empty list of {what}"
        unknown = [s for s in v if not known(s)]
        return f"names {unknown[0]!r}, which is not one of the {what}" if unknown else None

    return check


_SUITE_KEYS: dict[str, Callable[[Any], str | None]] = {
    "models": _names('model specs, such as ["openai:gpt-4o-mini"]'),
    "probes": _names("probes (genderprobe probes lists them)", lambda s: s in all_probes()),
    "seed": lambda v: None if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else "must be a whole number, 0 or more",
    "judge": lambda v: None if isinstance(v, str) and v.strip() else "must be a model spec",
}


def load_suite_file(path: Path) -> tuple[SuiteSpec, FileConfig]:
    """The suite file's [suite] and [probes.*] sections, and its run settings; one sentence per mistake."""
    where = f"The suite file {path}"
    try:
        data = tomllib.loads(read_user_text(path, "suite file"))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{where} is not valid TOML ({exc}).") from None
    unknown = [name for name in data if name not in (*SCHEMA, "suite", "probes")]
    if unknown:
        raise UserError(f"{where} has an unknown section [{unknown[0]}]; known sections: [suite], [probes.NAME], "
                        f"{', '.join(f'[{s}]' for s in SCHEMA)}.")
    suite, probes = data.pop("suite", {}), data.pop("probes", {})
    spec = SuiteSpec()
    if not isinstance(suite, dict):
        raise UserError(f"{where} has 'suite' as a value; it must be a [suite] section.")
    for key, value in suite.items():
        if key not in _SUITE_KEYS:
            raise UserError(f"{where} has an unknown key '{key}' in [suite]; known keys there: {', '.join(_SUITE_KEYS)}.")
        problem = _SUITE_KEYS[key](value)
        if problem:
            raise UserError(f"{where} sets suite.{key} = {value!r}, but it {problem}.")
        setattr(spec, key, value)
    if not isinstance(probes, dict):
        raise UserError(f"{where} has 'probes' as a value; probe parameters go in [probes.NAME] sections.")
    for name, values in probes.items():
        if name not in all_probes():
            raise UserError(f"{where} has a section [probes.{name}], but there is no probe '{name}'; "
                            f"known probes: {', '.join(all_probes())}.")
        if not isinstance(values, dict):
            raise UserError(f"{where} sets probes.{name} = {values!r}; it must be a [probes.{name}] section of parameters.")
        spec.parameters[name] = probe_arguments(all_probes()[name], values, where, path.parent)
    return spec, validate(data, path)


PRESETS = "presets"  # packaged suite files, in genderprobe/interfaces/presets


def presets() -> list[str]:
    """The names of the packaged suite files (``--preset NAME``)."""
    folder = resources.files("genderprobe").joinpath("interfaces", PRESETS)
    return sorted(f.name.removesuffix(".toml") for f in folder.iterdir() if f.name.endswith(".toml"))


def load_preset(name: str) -> tuple[SuiteSpec, FileConfig]:
    """A packaged suite file, read as a user's suite file is."""
    if name not in presets():
        raise UserError(f"There is no preset {name!r}; presets: {', '.join(presets())}.")
    with resources.as_file(resources.files("genderprobe").joinpath("interfaces", PRESETS, f"{name}.toml")) as path:
        return load_suite_file(path)


_KINDS = {bool: "true or false", int: "a whole number", float: "a number", str: "text"}
_LISTS = {int: "whole numbers", float: "numbers", str: "texts"}


def probe_arguments(cls: type[Probe], values: dict[str, Any], where: str, base: Path) -> dict[str, Any]:
    """A [probes.NAME] section as the probe's Params arguments.

    Keys are the parameter names results.json shows (``num_repetitions``) or the
    command-line option's name (``repetitions``); an option that reads a file
    (``template_file``) takes its path, relative to the suite file.
    """
    hints = typing.get_type_hints(cls.Params)
    by_key: dict[str, tuple[dataclasses.Field, bool]] = {}
    for f in dataclasses.fields(cls.Params):
        by_key[f.name] = (f, False)
        option = (f.metadata.get("flag") or f"--{f.name}")[2:].replace("-", "_")
        by_key[option] = (f, bool(f.metadata.get("from_file")))
    out = {}
    for key, value in values.items():
        if key not in by_key:
            raise UserError(f"{where} sets probes.{cls.name}.{key}, which {cls.name} does not take; "
                            f"its parameters: {', '.join(by_key)}.")
        f, is_path = by_key[key]
        if is_path:
            if not isinstance(value, str):
                raise UserError(f"{where} sets probes.{cls.name}.{key} = {value!r}, but it must be a file path.")
            # Editors end files with a line break nobody meant as part of the text.
            value = read_user_text(base / value, f"{key.replace('_', ' ')}").removesuffix("\n").removesuffix("\r")
        else:
            kind = _optional(hints[f.name])
            typed, ok = _typed(value, kind)
            choices = f.metadata.get("choices")
            if not ok or (choices and typed not in choices):
                wanted = f"one of {', '.join(choices)}" if choices else _describe(kind)
                raise UserError(f"{where} sets probes.{cls.name}.{key} = {value!r}, but it must be {wanted}.")
            value = typed
        out[f.name] = value
    return out


def _optional(hint: Any) -> Any:
    """``int | None`` -> ``int``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return next(a for a in typing.get_args(hint) if a is not type(None))
    return hint


def _describe(kind: Any) -> str:
    if typing.get_origin(kind) is tuple:
        return f"a list of {_LISTS.get(typing.get_args(kind)[0], 'values')}"
    return _KINDS.get(kind, "a value")


def _typed(value: Any, kind: Any) -> tuple[Any, bool]:
    """The TOML value as the parameter's type (a list as a tuple, a whole number as a float), and whether it is one."""
    if typing.get_origin(kind) is tuple:
        item = typing.get_args(kind)[0]
        if not isinstance(value, list):
            return value, False
        converted = [_typed(v, item) for v in value]
        return tuple(v for v, _ in converted), all(ok for _, ok in converted)
    if kind is bool or isinstance(value, bool):
        return value, kind is bool and isinstance(value, bool)
    if kind is float and isinstance(value, int):
        return float(value), True
    return value, isinstance(value, kind)


# -- the plan ---------------------------------------------------------------------


@dataclass
class SuiteRun:
    model: str
    probe: Probe
    folder: str  # "<model folder>/<probe>", relative to the suite folder
    status: str = "pending"
    error: str | None = None
    skipped: bool = False  # found done when this suite started: not run again
    seconds: float | None = None  # how long this invocation took over the run (None: not run by it)
    failure: UserError | None = field(default=None, repr=False)

    @property
    def results(self) -> str:
        return f"{self.folder}/results.json"


@dataclass
class Suite:
    out: Path
    models: list[str]
    probes: list[str]
    config: RunConfig  # shared by every run; the model and folder are each run's
    runs: list[SuiteRun]
    left_out: list[str] = field(default_factory=list)  # a line per model some default probes were left out for

    @property
    def done(self) -> list[SuiteRun]:
        return [r for r in self.runs if r.status == "done"]

    # A notebook shows the runs' verdicts, not the config and every probe's parameters.
    def __repr__(self) -> str:
        from genderprobe.outputs.notebook import suite_text

        return suite_text(self)

    def _repr_html_(self) -> str:
        from genderprobe.outputs.notebook import suite_html

        return suite_html(self)


def model_folder(spec: str) -> str:
    """A folder name for a model spec: ``openai:gpt-4o-mini`` -> ``openai-gpt-4o-mini``."""
    return re.sub(r"[^A-Za-z0-9._]+", "-", spec).strip("-.")[:100] or "model"


def default_probes(with_judge: bool) -> list[str]:
    """Every probe; those that need a judge only when there is one."""
    return [name for name, cls in all_probes().items() if with_judge or not cls.needs_judge]


def plan(models: list[str], probes: list[str], parameters: dict[str, dict[str, Any]],
         config: RunConfig, out: Path, *, every_probe: bool = False) -> Suite:
    """Every probe on every model, model by model; bad input is one sentence before anything runs.

    every_probe: the probes are the default list, nobody's choice: a probe a model cannot be asked
    (log-likelihoods of raw text from a chat API) is left out for that model, with a line in ``left_out``.
    """
    models, probes = list(dict.fromkeys(models)), list(dict.fromkeys(probes))
    if not models:
        raise UserError("A suite needs at least one model: pass --model SPEC once per model, "
                        "or list them under [suite] models in a suite file.")
    if not probes:
        raise UserError("A suite needs at least one probe: pass --probes NAME,NAME or list them under [suite] probes.")
    folders: dict[str, str] = {}
    for spec in models:
        other = folders.setdefault(model_folder(spec).lower(), spec)
        if other != spec:
            raise UserError(f"The models {other} and {spec} would share the folder {model_folder(spec)}; "
                            "run them in separate suites.")
    for name in probes:
        if get_probe(name).needs_judge and not config.judge:
            raise UserError(f"Probe '{name}' needs a judge model; pass --judge SPEC or leave it out of the probes.")
    runs = [SuiteRun(spec, limited(get_probe(name)(**parameters.get(name, {})), config.limit),
                     f"{model_folder(spec)}/{name}")
            for spec in models for name in probes]
    left_out: list[str] = []
    if every_probe:  # probes nobody named: leave out those this model cannot be asked, and say so
        unfit = [r for r in runs if r.probe.asks_loglikelihood() and not gives_loglikelihood(r.model)]
        for spec in dict.fromkeys(r.model for r in unfit):
            names = ", ".join(r.probe.name for r in unfit if r.model == spec)
            left_out.append(f"Left out on {spec}: {names}, which score raw text by log-likelihood (as "
                            "lm-evaluation-harness does) and it cannot give them; to ask them by generation, "
                            "name them in a suite file with method = \"generation\" (a server that returns them: "
                            "name the model openai:MODEL?loglikelihood=1).")
        runs = [r for r in runs if r not in unfit]
    return Suite(Path(out), models, probes, config, runs, left_out)


def asked(probe: Probe, config: RunConfig) -> dict[str, Any]:
    """What the results of this run say about what was asked, as genderprobe.interfaces.api writes them."""
    overrides = {k: v for k, v in config.generation.items() if v is not None}
    return to_jsonable({
        "probe": probe.name,
        "model": config.model,
        "judge": config.judge,
        "checker": config.checker,
        "parameters": {
            "probe": probe.parameters(),
            "generation": probe.default_generation.replace(**overrides).as_dict(),
            "system_prompt": config.system_prompt,
            "seed": config.seed,
            "n_resamples": config.n_resamples,
            "score_options": config.score_options,
            "constrain_answers": config.constrain_answers,
            "reader_judge": config.reader_judge,
            "reader_judge_sample": config.reader_judge_sample if config.reader_judge else None,
            # only a smoke run says it, so results written before --limit still match
            **({"limit": config.limit} if config.limit else {}),
        },
    })


def finished(results: Path, wanted: dict[str, Any]) -> bool:
    """Whether ``results`` is a results file of the run ``wanted`` describes."""
    if not results.is_file():
        return False
    try:
        doc = load_results(results)
    except UserError:  # unreadable: run again (its answers are in the store)
        return False
    return all(doc.get(key) == value for key, value in wanted.items())


# -- running ----------------------------------------------------------------------


def run_config(suite: Suite, run: SuiteRun) -> RunConfig:
    return dataclasses.replace(suite.config, model=run.model, out_dir=suite.out / run.folder)


def run(suite: Suite, *, on_run: Callable[[SuiteRun, RunOutput | None], None] | None = None,
        progress: Callable[[], Any] | None = None) -> None:
    """Run what is not done yet, one run after another, keeping suite.json up to date.

    A run that fails (a server down, a model that cannot do what a probe asks)
    is recorded with its error and the others go on; an interrupt stops the
    suite at once. A dry run writes nothing. ``on_run`` hears of every run as
    it ends (skipped ones too); ``progress`` makes each run's progress display.
    """
    for r in suite.runs:
        r.skipped = finished(suite.out / r.results, asked(r.probe, run_config(suite, r)))
        r.status, r.error, r.failure = ("done" if r.skipped else "pending"), None, None
    save(suite)
    for r in suite.runs:
        if r.skipped:
            if on_run:
                on_run(r, None)
            continue
        r.status = "running"
        save(suite)
        config = run_config(suite, r)
        config.progress = progress() if progress else None
        out = None
        started = time.monotonic()
        try:
            out = execute(r.probe, config)
            r.status = "done"
        except UserError as exc:  # RunFailed too: the answers received are kept
            r.status, r.error, r.failure = "failed", str(exc), exc
        finally:
            r.seconds = round(time.monotonic() - started, 3)
            if config.progress is not None:
                config.progress.stop()
            save(suite)
        if on_run:
            on_run(r, out)


def manifest(suite: Suite) -> dict[str, Any]:
    """suite.json: the models, probes, parameters and seed, and each run's status and results."""
    c = suite.config
    return {
        "schema": SUITE_SCHEMA,
        "models": suite.models,
        "probes": suite.probes,
        "seed": c.seed,
        "parameters": {
            "probes": {r.probe.name: r.probe.parameters() for r in suite.runs},
            "generation": {k: v for k, v in c.generation.items() if v is not None},
            "system_prompt": c.system_prompt,
            "n_resamples": c.n_resamples,
            "judge": c.judge,
            "checker": c.checker,
            "reader_judge": c.reader_judge,
            "score_options": c.score_options,
            "constrain_answers": c.constrain_answers,
            **({"limit": c.limit} if c.limit else {}),  # a smoke suite: not comparable with a full one
        },
        "complete": all(r.status == "done" for r in suite.runs),
        **({"left_out": suite.left_out} if suite.left_out else {}),  # default probes a model cannot be asked
        "updated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "report": REPORT_HTML,
        "runs": [{"model": r.model, "probe": r.probe.name, "status": r.status, "skipped": r.skipped,
                  "seconds": r.seconds, "results": r.results, "error": r.error} for r in suite.runs],
    }


def save(suite: Suite) -> None:
    if suite.config.dry_run:
        return
    path = suite.out / SUITE_JSON
    try:
        write_json(path, manifest(suite))
    except OSError as exc:
        raise UserError(f"Cannot write {path}: {exc.strerror or exc}; choose another --out "
                        "(answers already received are kept in the store).") from None


def documents(suite: Suite) -> list[tuple[SuiteRun, dict[str, Any]]]:
    """Each finished run with its results document."""
    return [(r, load_results(suite.out / r.results)) for r in suite.done]


def raise_failures(suite: Suite) -> None:
    """One sentence for the runs that failed: exit 1 when all failed at run time, 2 when one had bad input."""
    failed = [r for r in suite.runs if r.status == "failed"]
    if failed:
        kind = RunFailed if all(isinstance(r.failure, RunFailed) for r in failed) else UserError
        first, rest = failed[0], "the others are written; " if len(failed) < len(suite.runs) else ""
        raise kind(f"{len(failed)} of {len(suite.runs)} runs failed ({rest}run the suite again to retry them); "
                   f"{first.probe.name} on {first.model}: {first.error}")
