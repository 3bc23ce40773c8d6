"""The runs of the store fixture, and how one is replayed (shared by make.py and the test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fixture_model

from genderprobe import models
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models.base import GenerationParams
from genderprobe.registry import get_probe

# Decoding a probe sends since the fixture was made, on purpose (issue 30: each probe states the
# paper's decoding and sends it; RelationshipLevy now sends temperature 0). The fixture's answers
# were asked without it, so a replay asks as then: every other part of every key is unchanged.
DECODING_THEN = {"relationship-levy": GenerationParams(max_tokens=300)}

# Small runs of every probe, with the options that change what is sent
# (option scoring, constrained answers, a judge, ablations, several languages).
RUNS: list[dict[str, Any]] = [
    {"probe": "relationship-levy", "params": {"sample_k": 60}},
    {"probe": "relationship-levy", "params": {"sample_k": 30}, "score_options": True},
    {"probe": "relationship-levy", "params": {"sample_k": 30, "reader": "improved"}, "constrain_answers": True},
    {"probe": "demet", "params": {"per_type": 2, "rewording": True}},
    {"probe": "demet", "params": {"per_type": 2}, "score_options": True},
    {"probe": "demet-names", "params": {}},
    {"probe": "genmo", "params": {"sample_k": 12, "template": "both", "ablation": ("names",), "ablation_k": 4,
                                "temperatures": (0.5,)}},
    {"probe": "fifty-shades", "params": {"sample_k": 12, "runs": 2}},
    {"probe": "multilingual-words", "params": {"languages": ("en", "fr", "zh"), "occupation_k": 2}},
    {"probe": "multilingual-pronouns", "params": {"languages": ("en", "ja"), "num_repetitions": 2}},
    {"probe": "multilingual-dialogue", "params": {"languages": ("en", "es"), "dialogues_per_pairing": 2}, "judge": "fixture:judge"},
]

KEPT = ("probe", "model", "judge", "parameters", "headline", "metrics", "marks", "breakdowns", "counts", "losses",
        "warnings")


def replay(run: dict[str, Any], cache_dir: Path, *, answering: bool, out_dir: Path | None = None) -> dict[str, Any]:
    """Run one fixture run against the store in ``cache_dir``; the parts of its results a replay must match.

    With ``out_dir`` the run also writes its results.json and records.jsonl there (snapshot.py)."""
    models.BACKENDS["fixture"] = ("fixture_model", "the store fixture's model")
    fixture_model.ANSWERING = answering
    config = RunConfig(
        model="fixture:model", judge=run.get("judge"), cache_dir=cache_dir, out_dir=out_dir,
        keep_records=out_dir is not None, records_format="jsonl",
        score_options=run.get("score_options", False), constrain_answers=run.get("constrain_answers", False),
        n_resamples=200, concurrency=4,
    )
    probe = get_probe(run["probe"])
    now = probe.default_generation
    probe.default_generation = DECODING_THEN.get(run["probe"], now)
    try:
        out = run_probe(run["probe"], "fixture:model", config=config, **run["params"])
    finally:
        probe.default_generation = now
        del models.BACKENDS["fixture"]
        fixture_model.ANSWERING = True
    doc = json.loads(json.dumps({k: out.document.get(k) for k in KEPT}, default=list))
    doc["run"] = {k: out.document["run"][k] for k in ("requests", "cached", "sent", "errors")}
    doc["data_versions"] = out.document["versions"]["data"]
    doc["own_warnings"] = out.result.extra.get("warnings") or []
    return doc
