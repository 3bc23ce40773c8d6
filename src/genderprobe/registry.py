"""The registry: finds every study under ``genderprobe/studies``, with no hand-kept list.

A study is a package in :mod:`genderprobe.studies`. What the harness takes from
it is found by name:

- its probes: the :class:`~genderprobe.contract.Probe` subclasses with a
  ``name`` defined in its modules called ``probe`` or ``*_probe`` (other
  modules may define probes of their own for their subcommands, such as the
  Fifty Shades judge, and those stay off ``genderprobe run``);
- its subcommands: ``COMMANDS`` (a list of click commands) of its ``commands``
  module or package;
- its per-item scores for paired comparisons: ``ITEM_SCORES`` (probe name ->
  function(records, probe parameters) -> {metric: ItemScores}) of its
  ``paired`` module;
- its plans for ``genderprobe plan``: ``PLANNERS`` (probe name -> a
  :class:`genderprobe.analysis.planning.Planner` subclass) of its ``plan`` module, and
  optionally ``NOT_PLANNED`` (probe name -> why it cannot be planned, a clause);
- its packaged data: its ``data`` folder, whose files are named
  ``<prefix>/<path>`` with the prefix ``DATA_PREFIX`` of its ``__init__`` or
  else the study's folder name.

Other distributions add probes through the ``genderprobe.probes`` entry points
(:mod:`genderprobe.plugins`, docs/plugins.md): each names a Probe subclass whose
``name`` is the entry point's name. Built-in probes win on a clash.

This is the one harness module that reaches the studies and the plugin probes,
and only by import at run time: the harness imports no study
(tests/harness/test_layout.py).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import typing
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from types import ModuleType
from typing import Any

from genderprobe import plugins
from genderprobe.contract import Probe
from genderprobe.errors import UserError

STUDIES = "genderprobe.studies"


@cache
def studies() -> tuple[str, ...]:
    """The folder names of the studies, sorted."""
    root = importlib.import_module(STUDIES)
    return tuple(sorted(info.name for info in pkgutil.iter_modules(root.__path__) if info.ispkg))


def _study(name: str) -> ModuleType:
    return importlib.import_module(f"{STUDIES}.{name}")


def _probe_modules(study: str) -> list[ModuleType]:
    package = _study(study)
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
        if info.name == "probe" or info.name.endswith("_probe")
    ]


@cache
def _probes_in(study: str) -> dict[str, type[Probe]]:
    """Probe name -> class, for the probes of one study."""
    found: dict[str, type[Probe]] = {}
    for module in _probe_modules(study):
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Probe)
                and obj is not Probe
                and obj.__module__ == module.__name__
                and getattr(obj, "name", None)
            ):
                found[obj.name] = obj
    return found


@cache
def builtin_probes() -> dict[str, type[Probe]]:
    """Probe name -> class, for every probe of every study (no plugin)."""
    return {name: cls for study in studies() for name, cls in _probes_in(study).items()}


def _home_study(name: str) -> str | None:
    """The study a probe's name points at: its folder is the name (relationship-levy) or the name's start
    (demet-names in demet, multilingual-words in multilingual). A guess, checked by looking there."""
    folder = name.replace("-", "_")
    found = [s for s in studies() if folder == s or folder.startswith(s + "_")]
    return max(found, key=len) if found else None


def find_probe(name: str) -> type[Probe] | None:
    """The probe called ``name``, importing only its own study where its name points at one (a command
    that runs one probe need not import eighteen studies); None where there is none."""
    home = _home_study(name)
    if home is not None and name in _probes_in(home):
        return _probes_in(home)[name]  # built-ins win over plugins
    return all_probes().get(name)


@cache
def plugin_probes() -> dict[str, tuple[type[Probe], str]]:
    """Probe name -> (class, distribution), for the probes plugins add.

    Loads every ``genderprobe.probes`` entry point once per process; one that
    clashes with a built-in or an earlier plugin, fails to load or names no
    fitting Probe subclass is not used, with one warning sentence.
    """
    builtin = builtin_probes()
    found: dict[str, tuple[type[Probe], str]] = {}
    for plugin in plugins.declared(plugins.PROBES):
        if plugin.name in builtin:
            plugin.reject("a built-in probe has that name; rename the entry point")
        elif plugin.name in found:
            plugin.reject(f"the distribution '{found[plugin.name][1]}' already adds a probe of that name")
        else:
            try:
                found[plugin.name] = (_plugin_probe(plugin), plugin.distribution)
            except UserError as exc:
                plugins.log.warning(str(exc))
    return found


def _plugin_probe(plugin: plugins.Plugin) -> type[Probe]:
    """The Probe subclass an entry point names, checked as far as the command line needs it."""
    obj = plugin.load()
    if not (isinstance(obj, type) and issubclass(obj, Probe) and getattr(obj, "name", None) == plugin.name):
        raise UserError(plugin.problem(
            f"'{plugin.entry_point.value}' is not a genderprobe.contract.Probe subclass named '{plugin.name}'"
        ))
    if not isinstance(getattr(obj, "summary", None), str):
        raise UserError(plugin.problem(f"'{plugin.entry_point.value}' has no summary line"))
    try:  # what the command line reads to build the probe's options
        dataclasses.fields(obj.Params)
        typing.get_type_hints(obj.Params)
    except Exception as exc:
        raise UserError(plugin.problem(
            f"its Params is not a dataclass whose types can be read ({type(exc).__name__}: {exc})"
        )) from None
    return obj


@cache
def all_probes() -> dict[str, type[Probe]]:
    """Probe name -> class, for every probe of every study and plugin, sorted by name."""
    found = dict(builtin_probes())
    for name, (cls, _) in plugin_probes().items():
        found.setdefault(name, cls)  # built-ins win
    return dict(sorted(found.items()))


def probe_distribution(name: str) -> str | None:
    """The distribution a plugin probe comes from (None for a built-in)."""
    plugin = plugin_probes().get(name)
    return plugin[1] if plugin else None


def plugins_used(probe_name: str, model_specs: list[str]) -> dict[str, str | None]:
    """Distribution -> version of the plugins behind a run's probe and models (empty when none)."""
    from genderprobe.models import plugin_backends

    used = [p for p in plugins.declared(plugins.PROBES)
            if p.name == probe_name and p.distribution == probe_distribution(p.name)]
    backends = plugin_backends()
    used += [backends[prefix] for prefix in (spec.partition(":")[0] for spec in model_specs) if prefix in backends]
    return {p.distribution: p.version for p in used}


def get_probe(name: str) -> type[Probe]:
    found = find_probe(name)
    if found is None:
        raise UserError(
            f"Unknown probe '{name}'; run 'genderprobe probes' to list them "
            f"({', '.join(all_probes())})."
        )
    return found


def study_commands() -> list[Any]:
    """The click commands the studies add to ``genderprobe``."""
    commands: list[Any] = []
    for study in studies():
        package = _study(study)
        if any(info.name == "commands" for info in pkgutil.iter_modules(package.__path__)):
            commands.extend(importlib.import_module(f"{package.__name__}.commands").COMMANDS)
    return commands


@cache
def item_score_functions() -> dict[str, Any]:
    """Probe name -> the function that rebuilds its headline metrics item by item from
    a run's records (``ITEM_SCORES`` of each study's ``paired`` module; see
    :class:`genderprobe.analysis.stats.ItemScores`). Probes without one are compared from
    their intervals alone."""
    found: dict[str, Any] = {}
    for study in studies():
        package = _study(study)
        if any(info.name == "paired" for info in pkgutil.iter_modules(package.__path__)):
            found.update(importlib.import_module(f"{package.__name__}.paired").ITEM_SCORES)
    return found


@cache
def _plans_in(study: str) -> dict[str, Any]:
    package = _study(study)
    if not any(info.name == "plan" for info in pkgutil.iter_modules(package.__path__)):
        return {}
    module = importlib.import_module(f"{package.__name__}.plan")
    return {**getattr(module, "NOT_PLANNED", {}), **getattr(module, "PLANNERS", {})}


@cache
def planners() -> dict[str, Any]:
    """Probe name -> its :class:`genderprobe.analysis.planning.Planner` subclass (``PLANNERS`` of each
    study's ``plan`` module), or for a probe that cannot be planned the clause saying why
    (its ``NOT_PLANNED``). Probes in neither are refused by the headline they declare."""
    return {name: plan for study in studies() for name, plan in _plans_in(study).items()}


def planner(probe: str) -> Any:
    """One probe's entry of :func:`planners`, importing only the plan of the study its name points at (every
    run asks, to say how many items would halve its intervals): a study plans its own probes alone
    (tests/harness/test_plan.py holds that)."""
    home = _home_study(probe)
    return _plans_in(home).get(probe) if home is not None else planners().get(probe)


@cache
def study_data_folders() -> dict[str, Traversable]:
    """Data-key prefix -> the study's packaged ``data`` folder."""
    folders: dict[str, Traversable] = {}
    for study in studies():
        folder = resources.files(f"{STUDIES}.{study}") / "data"
        if folder.is_dir():
            folders[getattr(_study(study), "DATA_PREFIX", study)] = folder
    return folders
