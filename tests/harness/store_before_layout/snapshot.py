"""Write every fixture run's results.json and records, replayed from the saved store, to a folder.

Used to show that a change which should change no output changes none:
run it before and after, then compare the folders byte for byte::

    python tests/harness/store_before_layout/snapshot.py /tmp/before
    ... the change ...
    python tests/harness/store_before_layout/snapshot.py /tmp/after
    diff -r /tmp/before /tmp/after

Every request must be answered from the store (the fixture model answers
nothing): a changed cache key stops the replay. What differs from one run to
the next by nature (the time a run was made, how long it took, the temporary
store's path) is set to a fixed value.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runs import RUNS, replay  # noqa: E402

# When the run was made and how long it took.
VOLATILE = ("created", "elapsed_s")


def _steady(value):
    if isinstance(value, dict):
        return {k: ("<volatile>" if k in VOLATILE else _steady(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def snapshot(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for i, run in enumerate(RUNS):
            cache = Path(tmp) / f"store{i}"
            cache.mkdir()
            shutil.copy(HERE / "responses.sqlite3", cache / "responses.sqlite3")
            folder = out / f"{i:02d}-{run['probe']}"
            replayed = replay(run, cache, answering=False, out_dir=folder)
            assert replayed["run"]["sent"] == 0, f"{run['probe']}: a cache key changed"
            document = json.loads((folder / "results.json").read_text(encoding="utf-8"))
            document["run"]["cache"] = "<store>"
            (folder / "results.json").write_text(json.dumps(_steady(document), indent=2, sort_keys=True) + "\n",
                                                 encoding="utf-8")


if __name__ == "__main__":
    snapshot(Path(sys.argv[1]))
