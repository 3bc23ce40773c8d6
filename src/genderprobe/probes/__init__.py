"""Probe registry: every module in this package that defines a Probe subclass
with a ``name`` is discovered, so a new probe needs no change elsewhere."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from genderprobe.errors import UserError
from genderprobe.probes.base import Probe


@cache
def all_probes() -> dict[str, type[Probe]]:
    found: dict[str, type[Probe]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
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
