"""Old module paths, from before each study had a folder of its own and the harness
its rooms, still import.

``import genderprobe.bws``, ``from genderprobe.probes.base import Probe`` or
``from genderprobe.runner import Runner`` keep working in users' notebooks and probes: each old path gives the module at
its new home (the same module object, so its classes are the same classes) and
a :class:`DeprecationWarning` naming the new path. New code imports the new
paths. The harness imports no study: these are names, resolved only when an
old path is imported.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from typing import Any

# Old package -> new package: every module under the old one lives under the new
# one with the same name, except those in MODULES.
PACKAGES = {
    "genderprobe.demet": "genderprobe.studies.demet",
    "genderprobe.genmo": "genderprobe.studies.genmo",
    "genderprobe.fifty_shades": "genderprobe.studies.fifty_shades",
    "genderprobe.multilingual": "genderprobe.studies.multilingual",
    # the harness in rooms (issue 29)
    "genderprobe.batch": "genderprobe.engine.batch",
    "genderprobe.executors": "genderprobe.engine.executors",
    "genderprobe.report": "genderprobe.outputs.report",
    "genderprobe.cli_commands": "genderprobe.interfaces.cli_commands",
    "genderprobe.inspect_tasks": "genderprobe.interfaces.inspect_tasks",
}

MODULES = {
    "genderprobe.probes": "genderprobe.registry",
    "genderprobe.probes.base": "genderprobe.contract",
    "genderprobe.probes.relationship_levy": "genderprobe.studies.relationship_levy.probe",
    "genderprobe.probes.relationship_levy_reader": "genderprobe.studies.relationship_levy.answer_reader",
    "genderprobe.probes.demet": "genderprobe.studies.demet.probe",
    "genderprobe.probes.demet_names": "genderprobe.studies.demet.names_probe",
    "genderprobe.probes.genmo": "genderprobe.studies.genmo.probe",
    "genderprobe.probes.fifty_shades": "genderprobe.studies.fifty_shades.probe",
    "genderprobe.probes.multilingual_words": "genderprobe.studies.multilingual.words_probe",
    "genderprobe.probes.multilingual_pronouns": "genderprobe.studies.multilingual.pronouns_probe",
    "genderprobe.probes.multilingual_dialogue": "genderprobe.studies.multilingual.dialogue_probe",
    "genderprobe.datasets.files": "genderprobe.data.packaged",
    "genderprobe.datasets.names": "genderprobe.data.name_lists",
    "genderprobe.datasets.demet": "genderprobe.studies.demet.dataset",
    "genderprobe.datasets.genmo": "genderprobe.studies.genmo.dataset",
    "genderprobe.datasets.fifty_shades": "genderprobe.studies.fifty_shades.dataset",
    "genderprobe.datasets.multilingual": "genderprobe.studies.multilingual.dataset",
    "genderprobe.demet.answers": "genderprobe.studies.demet.answer_reader",
    "genderprobe.fifty_shades.answers": "genderprobe.studies.fifty_shades.score_reader",
    "genderprobe.bws": "genderprobe.studies.fifty_shades.bws",
    "genderprobe.cli_commands.bws": "genderprobe.studies.fifty_shades.commands.bws",
    "genderprobe.cli_commands.judge": "genderprobe.studies.fifty_shades.commands.judge",
    "genderprobe.cli_commands.fifty_shades": "genderprobe.studies.fifty_shades.commands.generate",
    # the harness in rooms (issue 29)
    "genderprobe.runner": "genderprobe.engine.runner",
    "genderprobe.store": "genderprobe.engine.store",
    "genderprobe.store_writer": "genderprobe.engine.store_writer",
    "genderprobe.spill": "genderprobe.engine.spill",
    "genderprobe.claims": "genderprobe.engine.claims",
    "genderprobe.disk": "genderprobe.engine.disk",
    "genderprobe.pacing": "genderprobe.engine.pacing",
    "genderprobe.work_queue": "genderprobe.engine.work_queue",
    "genderprobe.work_bounds": "genderprobe.engine.work_bounds",
    "genderprobe.run_thread": "genderprobe.engine.run_thread",
    "genderprobe.accounting": "genderprobe.engine.accounting",
    "genderprobe.dry_run": "genderprobe.engine.dry_run",
    "genderprobe.stats": "genderprobe.analysis.stats",
    "genderprobe.breakdown_tests": "genderprobe.analysis.breakdown_tests",
    "genderprobe.comparison_stats": "genderprobe.analysis.comparison_stats",
    "genderprobe.losses": "genderprobe.analysis.losses",
    "genderprobe.planning": "genderprobe.analysis.planning",
    "genderprobe.sampling": "genderprobe.analysis.sampling",
    "genderprobe.sequential": "genderprobe.analysis.sequential",
    "genderprobe.equivalence": "genderprobe.analysis.equivalence",
    "genderprobe.validity": "genderprobe.analysis.validity",
    "genderprobe.mark_gate": "genderprobe.analysis.mark_gate",
    "genderprobe.rates": "genderprobe.analysis.rates",
    "genderprobe.reader_judge": "genderprobe.reading.reader_judge",
    "genderprobe.results": "genderprobe.outputs.results",
    "genderprobe.records": "genderprobe.outputs.records",
    "genderprobe.records_parquet": "genderprobe.outputs.records_parquet",
    "genderprobe.terminal": "genderprobe.outputs.terminal",
    "genderprobe.hf_dataset": "genderprobe.outputs.hf_dataset",
    "genderprobe.paper": "genderprobe.outputs.paper_tables",
    "genderprobe.api": "genderprobe.interfaces.api",
    "genderprobe.cli": "genderprobe.interfaces.cli",
    "genderprobe.arguments": "genderprobe.interfaces.arguments",
    "genderprobe.suite": "genderprobe.interfaces.suite",
    "genderprobe.config": "genderprobe.interfaces.config",
    "genderprobe.userfiles": "genderprobe.interfaces.userfiles",
    "genderprobe.packaged": "genderprobe.data.packaged",
    "genderprobe.names": "genderprobe.data.name_lists",
}

# Old packages whose modules went to several places: a package of aliases only.
ALIAS_PACKAGES = ("genderprobe.probes", "genderprobe.datasets")


def new_name(old: str) -> str | None:
    """Where the module once called ``old`` lives now (None: it did not move)."""
    if old in MODULES:
        return MODULES[old]
    for old_package, new_package in PACKAGES.items():
        if old == old_package or old.startswith(old_package + "."):
            return new_package + old[len(old_package):]
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str | None):
        self.target = target
        self.target_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name in ALIAS_PACKAGES:
            # A package whose submodules are aliases; its own names (get_probe of
            # genderprobe.probes) come from its target.
            package = types.ModuleType(spec.name, f"Moved: see {self.target or 'genderprobe.moved'}.")
            package.__path__ = []
            if self.target:
                target = importlib.import_module(self.target)
                package.__getattr__ = lambda name: getattr(target, name)  # type: ignore[method-assign]
            return package
        module = importlib.import_module(self.target)  # type: ignore[arg-type]
        self.target_spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system gave the module the alias's spec; it keeps its own
        # (importlib.resources reads a study's data through it).
        if self.target_spec is not None:
            module.__spec__ = self.target_spec


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if fullname not in ALIAS_PACKAGES and (new is None or importlib.util.find_spec(new) is None):
            return None  # not an old path, or one that never existed: the usual error follows
        warnings.warn(f"{fullname} moved to {new or 'genderprobe.studies'}; import it from there.",
                      DeprecationWarning, stacklevel=2)
        return importlib.machinery.ModuleSpec(fullname, _Alias(new), is_package=fullname in ALIAS_PACKAGES)


def install() -> None:
    """Let the old paths import (once; called by ``genderprobe/__init__``)."""
    # First in line: after genderprobe.demet has become the study's package, the
    # path finder would load genderprobe.demet.items from its folder a second time,
    # as a separate module with separate classes.
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
