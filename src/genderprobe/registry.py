"""The registry: finds every study under ``genderprobe/studies``, with no hand-kept list.

A study is a package in :mod:`genderprobe.studies`. What the harness takes from
it is found by name:

- its probes: the :class:`~genderprobe.contract.Probe` subclasses with a
  ``name`` defined in its modules called ``probe`` or ``*_probe`` (other
  modules may define probes of their own for their subcommands, such as the
  Fifty Shades judge, and those stay off ``genderprobe run``);
- its subcommands: ``COMMANDS`` (a list of click commands) of its ``commands``
  module or package;
- its packaged data: its ``data`` folder, whose files are named
  ``<prefix>/<path>`` with the prefix ``DATA_PREFIX`` of its ``__init__`` or
  else the study's folder name.

This is the one harness module that reaches the studies, and only by import
at run time: the harness imports no study (tests/harness/test_layout.py).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from types import ModuleType
from typing import Any

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
def all_probes() -> dict[str, type[Probe]]:
    """Probe name -> class, for every probe of every study, sorted by name."""
    found: dict[str, type[Probe]] = {}
    for study in studies():
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
    return dict(sorted(found.items()))


def get_probe(name: str) -> type[Probe]:
    probes = all_probes()
    if name not in probes:
        raise UserError(
            f"Unknown probe '{name}'; run 'genderprobe probes' to list them "
            f"({', '.join(probes)})."
        )
    return probes[name]


def study_commands() -> list[Any]:
    """The click commands the studies add to ``genderprobe``."""
    commands: list[Any] = []
    for study in studies():
        package = _study(study)
        if any(info.name == "commands" for info in pkgutil.iter_modules(package.__path__)):
            commands.extend(importlib.import_module(f"{package.__name__}.commands").COMMANDS)
    return commands


@cache
def study_data_folders() -> dict[str, Traversable]:
    """Data-key prefix -> the study's packaged ``data`` folder."""
    folders: dict[str, Traversable] = {}
    for study in studies():
        folder = resources.files(f"{STUDIES}.{study}") / "data"
        if folder.is_dir():
            folders[getattr(_study(study), "DATA_PREFIX", study)] = folder
    return folders
