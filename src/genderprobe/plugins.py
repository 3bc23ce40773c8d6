"""Plugins: probes and model backends that other distributions add (docs/plugins.md).

A distribution declares them as entry points in its ``pyproject.toml``::

    [project.entry-points."genderprobe.probes"]
    two-options = "my_plugin.probe:TwoOptions"   # a Probe subclass whose name is "two-options"

    [project.entry-points."genderprobe.backends"]
    echo = "my_plugin.backend"                   # a module with create(name, options) -> Model

The registry loads the probes and :mod:`genderprobe.models` the backends; this
module only finds the entry points and loads one. Built-ins win on a clash.
Whatever is wrong with a plugin is one warning sentence naming it and its
distribution (on stderr, through :mod:`logging`), and the plugin is not used:
the rest of genderprobe works on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from genderprobe.errors import UserError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

PROBES = "genderprobe.probes"
BACKENDS = "genderprobe.backends"
_KIND = {PROBES: "probe", BACKENDS: "backend"}

log = logging.getLogger("genderprobe.plugins")


@dataclass(frozen=True)
class Plugin:
    """One entry point of a plugin distribution."""

    entry_point: EntryPoint

    @property
    def name(self) -> str:
        """The probe name, or the backend's spec prefix."""
        return self.entry_point.name

    @property
    def distribution(self) -> str:
        dist = self.entry_point.dist
        return dist.name if dist is not None else "unknown"

    @property
    def version(self) -> str | None:
        dist = self.entry_point.dist
        return dist.version if dist is not None else None

    def problem(self, reason: str) -> str:
        """One sentence: this plugin is not used, and why."""
        kind = _KIND.get(self.entry_point.group, "plugin")
        return f"Plugin {kind} '{self.name}' from the distribution '{self.distribution}' is not used: {reason}."

    def reject(self, reason: str) -> None:
        log.warning(self.problem(reason))

    def load(self) -> Any:
        """The object the entry point names; a :class:`UserError` saying why it cannot be loaded."""
        try:
            return self.entry_point.load()
        except Exception as exc:  # a plugin's import may fail in any way; it must not take genderprobe down
            raise UserError(self.problem(
                f"'{self.entry_point.value}' cannot be loaded ({type(exc).__name__}: {exc}); "
                f"fix or uninstall '{self.distribution}'"
            )) from None


@cache
def _all() -> tuple[EntryPoint, ...]:
    # One scan of the installed distributions per process, for both groups
    # (imported here: reading package metadata costs a command that needs no plugin).
    from importlib.metadata import entry_points

    installed = entry_points()
    return tuple(ep for group in _KIND for ep in installed.select(group=group))


def declared(group: str) -> list[Plugin]:
    """The installed entry points of ``group``, by name, then distribution (not loaded)."""
    found = [Plugin(ep) for ep in _all() if ep.group == group]
    return sorted(found, key=lambda p: (p.name, p.distribution))
