"""Fills responses.sqlite3 and writes runs.json: run once, before the layout change.

It was run at commit 42b9a05 (b609ddf's code, this folder then at
tests/store_before_layout/). Running it again would record the present code,
not the code before the move, and prove nothing.

Each run's answers go to the store; runs.json keeps what each run reported
(its metrics, counts and data versions), which a replay must reproduce exactly
without sending a request (tests/harness/test_store_before_layout.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runs import RUNS, replay  # noqa: E402


def main() -> None:
    store = HERE / "responses.sqlite3"
    for path in HERE.glob("responses.sqlite3*"):
        path.unlink()
    saved = []
    for run in RUNS:
        doc = replay(run, store.parent, answering=True)
        saved.append({"run": run, "result": doc})
        print(run["probe"], doc["run"]["sent"], "answers stored")
    (HERE / "runs.json").write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
