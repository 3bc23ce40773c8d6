"""Imported once in the fork server of :mod:`genderprobe.testing.quick_runs`: what every run needs."""

import genderprobe.interfaces.api  # noqa: F401
import genderprobe.interfaces.cli  # noqa: F401
import genderprobe.models.openai_compatible  # noqa: F401
from genderprobe.registry import get_probe

# Building each probe once reads its packaged data into the loaders' caches.
for _name in ("relationship-levy", "demet", "genmo"):
    get_probe(_name)()
