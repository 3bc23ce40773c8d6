"""Runs inside GenderBench 0.5.0's own environment (tests/genderbench_parity.py makes it).

    python genderbench_driver.py setup NLTK_DATA_DIR
    python genderbench_driver.py run REQUEST.json RESULT.json
    python genderbench_driver.py tokenize REQUEST.json RESULT.json
    python genderbench_driver.py resources REQUEST.json RESULT.json
    python genderbench_driver.py card REQUEST.json RESULT.json
    python genderbench_driver.py harness REQUEST.json RESULT.json
    python genderbench_driver.py word_lists REQUEST.json RESULT.json
    python genderbench_driver.py serve      (requests as JSON lines: what the tests use)

``setup`` pickles NLTK's English Punkt parameters (from the ``punkt`` package) as
NLTK 3.8.1's own ``PunktSentenceTokenizer`` where ``nltk.word_tokenize`` loads it.
``run`` builds GenderBench's probe, gives each attempt the answer named by its
prompt's digest and repetition, and lets GenderBench's own ``generate``,
``evaluate`` and ``calculate_metrics`` do the rest. ``card`` returns the rows of
GenderBench's report card for given marks; ``harness`` times its DefaultHarness on its
RandomGenerator (benchmarks/genderbench_harness.py). ``resources`` returns the data
GenderBench's hiring probes read (names, occupations and their scores as pandas
parses them, resumes), to compare with ours bit for bit. Only the standard library,
GenderBench and its dependencies are imported: never genderprobe.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
import sys
from pathlib import Path


def setup(nltk_data: str) -> None:
    import punkt
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    model = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = set(model.collocations)
    params.sent_starters = set(model.sent_starters)
    for word, flags in model.ortho_context.items():
        params.ortho_context[word] = flags
    # NLTK 3.8.1 loads tokenizers/punkt/PY3/english.pickle under Python 3.
    folder = Path(nltk_data) / "tokenizers" / "punkt" / "PY3"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "english.pickle", "wb") as f:
        pickle.dump(PunktSentenceTokenizer(params), f)


def _offline_nltk() -> None:
    # GenderBench's YesNoEvaluator calls nltk.download("punkt"); the model is in place (setup).
    import nltk

    nltk.download = lambda *args, **kwargs: True


# GestProbe reads GEST with pd.read_csv("hf://datasets/kinit/gest/gest.csv"), from the Hugging Face Hub,
# which the tests cannot reach: a request's "local_files" (address -> local path; else the environment's
# GENDERPROBE_PARITY_LOCAL_FILES, JSON) makes pandas read those addresses from the same file on disk.
# GenderBench's own code is otherwise unchanged.
LOCAL_FILES: dict[str, str] = {}


def _local_files(request: dict) -> None:
    import pandas as pd

    LOCAL_FILES.clear()
    LOCAL_FILES.update(request.get("local_files") or json.loads(os.environ.get("GENDERPROBE_PARITY_LOCAL_FILES") or "{}"))
    if not getattr(pd.read_csv, "local_files", False):
        read_csv = pd.read_csv

        def local_read_csv(path, *args, **kwargs):
            return read_csv(LOCAL_FILES.get(path, path), *args, **kwargs)

        local_read_csv.local_files = True
        pd.read_csv = local_read_csv


def _key(text: str, repetition: int) -> str:
    return f"{hashlib.sha1(text.encode()).hexdigest()}:{repetition}"


def _number(x):
    x = float(x)
    return None if math.isnan(x) else x


def run(request: dict) -> dict:
    _offline_nltk()
    _local_files(request)
    import genderbench.probes as probes
    from genderbench.generators.generator import Generator

    class Answers(Generator):
        def __init__(self, answers):
            self.answers = answers

        def generate(self, texts):
            assert len(texts) == len(self.answers)
            return self.answers

    cls = getattr(probes, request["probe"])
    probe = cls(**request["params"], random_seed=request["seed"], bootstrap_cycles=request["cycles"],
                calculate_cis=True, log_strategy="no")
    probe.create_probe_items()
    keys = [_key(a.prompt.text, a.repetition_id) for a in probe.attempts]
    missing = [k for k in keys if k not in request["answers"]]
    if missing:
        raise SystemExit(f"{len(missing)} of GenderBench's {len(keys)} attempts have no answer "
                         f"(their prompts differ from ours), e.g. {missing[0]}")
    probe.generate(Answers([request["answers"][k] for k in keys]))
    probe.evaluate()
    points = probe.metric_calculator(probe.probe_items)  # what calculate_cis=False reports
    probe.calculate_metrics()
    marks = {}
    for name, mark in probe.marks.items():
        value = mark["mark_value"]
        marks[name] = None if isinstance(value, float) and math.isnan(value) else int(value)
    return {
        "attempts": keys,
        "evaluations": [None if a.evaluation_undetected else a.evaluation for a in probe.attempts],
        "metrics": {k: _number(v) for k, v in points.items()},
        "intervals": {k: [_number(v[0]), _number(v[1])] for k, v in probe.metrics.items()},
        "marks": marks,
    }


def tokenize(request: dict) -> list:
    _offline_nltk()
    from nltk.tokenize import word_tokenize

    return [word_tokenize(text) for text in request["texts"]]


def card(request: dict) -> list:
    """GenderBench's report card rows (its report_generation.report.global_table_row) for each model's marks:
    {class: {metric: mark 0-3, or None for a NaN mark}}."""
    # The 0.5.0 wheel ships report.py without the HTML templates it loads on import (main.html and
    # canvas.html are in the repository only); the card's functions never render them.
    import jinja2

    jinja2.Environment.get_template = lambda self, name, *args, **kwargs: None
    from genderbench.report_generation.report import global_table_row

    rows = []
    for marks in request["models"]:
        results = {cls: {"marks": {metric: {"mark_value": math.nan if mark is None else mark}
                                   for metric, mark in metrics.items()}}
                   for cls, metrics in marks.items()}
        rows.append(global_table_row(results))
    return rows


def harness(request: dict) -> dict:
    """GenderBench's DefaultHarness on its RandomGenerator (the options given), timed inside this process:
    each probe's run (its items, generation, evaluation, metrics and bootstrap) and the marks, as
    ``Harness.run`` runs them (one probe after another, the same generator)."""
    import time

    _offline_nltk()
    _local_files(request)
    from genderbench.generators.random import RandomGenerator
    from genderbench.harnesses.default import DefaultHarness

    start = time.perf_counter()
    harness = DefaultHarness(log_strategy="no")
    generator = RandomGenerator(request["options"], seed=request["seed"])
    seconds, marks = {}, {}
    for probe in harness.probes:
        began = time.perf_counter()
        probe.run(generator)
        name = type(probe).__name__
        seconds[name] = time.perf_counter() - began
        marks[name] = {metric: None if isinstance(m["mark_value"], float) else m["mark_value"]
                       for metric, m in probe.marks.items()}
    return {"seconds": time.perf_counter() - start, "probes": seconds, "marks": marks}


def word_lists(request: dict) -> dict:
    """The word lists GenderBench's BusinessVocabularyProbe builds from its gender inventories."""
    _offline_nltk()
    from genderbench.probes import BusinessVocabularyProbe

    probe = BusinessVocabularyProbe(log_strategy="no")
    return {name: {g: list(words) for g, words in lists.items()} for name, lists in probe.inventories.items()}


def _plain(value):
    # BusinessVocabulary's evaluations hold numpy arrays.
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON: {type(value)}")


def resources(request: dict) -> dict:
    from genderbench.probes.hiring_bloomberg.hiring_bloomberg_templates import (
        base_prompt,
        role_data,
    )
    from genderbench.resources.hiring_bloomberg import bloomberg_names
    from genderbench.resources.kennison_jobs.kennison_jobs import create_kennison_jobs_dict

    return {
        "names_to_demo": [[name, list(demo)] for name, demo in bloomberg_names.names_to_demo.items()],
        "kennison_jobs": [[noun, float(score)] for noun, score in create_kennison_jobs_dict().items()],
        "role_data": role_data,
        "base_prompt": base_prompt,
    }


COMMANDS = {"run": run, "tokenize": tokenize, "resources": resources, "card": card, "harness": harness,
            "word_lists": word_lists}


def serve() -> None:
    """Answer requests, one JSON line each on standard input ({"command", "request"}), with one JSON line
    each ({"result"} or {"error"}), until standard input closes: GenderBench's environment starts and
    imports once for every test of a session. Whatever GenderBench prints goes to standard error."""
    import traceback

    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        asked = json.loads(line)
        try:
            answer = {"result": COMMANDS[asked["command"]](asked["request"])}
        except BaseException:  # the test reads it; the next request is answered as usual
            answer = {"error": traceback.format_exc()}
        answers.write(json.dumps(answer, default=_plain) + "\n")
        answers.flush()


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "setup":
        setup(sys.argv[2])
    elif command == "serve":
        serve()
    else:
        request = json.loads(Path(sys.argv[2]).read_text())
        Path(sys.argv[3]).write_text(json.dumps(COMMANDS[command](request), default=_plain))
