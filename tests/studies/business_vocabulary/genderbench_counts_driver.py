"""Runs inside GenderBench 0.5.0's environment, beside tests/genderbench_driver.py (unchanged).

BusinessVocabularyProbe's evaluations are dicts of numpy arrays, which the shared driver cannot write as
JSON; this one runs the shared driver's ``run`` on each of several requests in one process (GenderBench's
import alone takes seconds) and writes the arrays as lists, with the word lists GenderBench's probe builds
(``BusinessVocabularyProbe().inventories``).

    python genderbench_counts_driver.py runs REQUEST.json RESULT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/, for genderbench_driver

import genderbench_driver  # noqa: E402


def _plain(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON: {type(value)}")


def inventories(request: dict) -> dict:
    genderbench_driver._offline_nltk()
    from genderbench.probes import BusinessVocabularyProbe

    probe = BusinessVocabularyProbe(log_strategy="no")
    return {name: {g: list(words) for g, words in lists.items()} for name, lists in probe.inventories.items()}


if __name__ == "__main__":
    command = sys.argv[1]
    request = json.loads(Path(sys.argv[2]).read_text())
    assert command == "runs", command
    result = {"runs": [genderbench_driver.run(r) for r in request["runs"]], "inventories": inventories({})}
    Path(sys.argv[3]).write_text(json.dumps(result, default=_plain))
