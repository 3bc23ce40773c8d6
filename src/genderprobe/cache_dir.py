"""Where genderprobe keeps what it caches: the response store, file digests of local weights.

``GENDERPROBE_CACHE_DIR`` if set, else ``genderprobe`` in the user's cache folder
(``XDG_CACHE_HOME`` or ``~/.cache``). ``--cache-dir`` overrides it for a run.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    env = os.environ.get("GENDERPROBE_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "genderprobe"
