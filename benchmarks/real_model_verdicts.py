"""Every probe on one real model, as a user runs it, and what the validity guards say of each run.

    python benchmarks/real_model_verdicts.py --model hf:$HOME/.cache/genderprobe/models/SmolLM2-135M-Instruct
    python benchmarks/real_model_verdicts.py --model hf:PATH --only relationship-levy,demet --out verdicts/
    python benchmarks/real_model_verdicts.py --model hf:PATH --max-tokens 48   # a model that never stops

Each run uses the probe's defaults with a sample small enough for two CPU cores
(the sizes are below, and printed); answers go to the response store, so a
second invocation is answered from it. For each run it prints the headline
metrics, the share of answers lost, and the validity verdict with every check
that did not pass; ``--out`` keeps each run's results and records, and a
``verdicts.json`` summary. docs/real-models.md reports its output.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import time
from pathlib import Path
from typing import Any

from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.models.base import ModelOptions


def demet_scenarios(k: int = 6) -> str:
    """The paper's first k human-written scenarios, as a scenario file (the whole 29 are 522 prompts)."""
    from genderprobe.studies.demet.dataset import scenarios

    rows = [(s.id, s.text, s.topic, s.label) for s in scenarios("human")[:k]]
    out = io.StringIO()
    csv.writer(out).writerows([("id", "scenario", "topic", "label"), *rows])
    return out.getvalue()


DEMET = {"per_type": 2, "scenarios_file": demet_scenarios()}

# (label, probe, probe parameters, run settings): the defaults, with samples that fit two CPU cores.
RUNS: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    ("relationship-levy", "relationship-levy", {"sample_k": 60}, {}),
    ("relationship-levy --reader improved", "relationship-levy", {"sample_k": 60, "reader": "improved"}, {}),
    ("relationship-levy --score-options", "relationship-levy", {"sample_k": 60}, {"score_options": True}),
    ("demet", "demet", DEMET, {}),
    ("demet --score-options", "demet", DEMET, {"score_options": True}),
    ("demet-names", "demet-names", {}, {}),
    ("genmo", "genmo", {"sample_k": 30}, {}),
    ("fifty-shades", "fifty-shades", {"sample_k": 40, "runs": 1}, {}),
    ("multilingual-words", "multilingual-words", {"languages": ("en",), "occupation_k": 4}, {}),
    ("multilingual-pronouns", "multilingual-pronouns", {"languages": ("en",), "words_k": 20}, {}),
    ("multilingual-pronouns --score-options", "multilingual-pronouns", {"languages": ("en",), "words_k": 20},
     {"score_options": True}),
    ("multilingual-dialogue", "multilingual-dialogue", {"languages": ("en",), "dialogues_per_pairing": 3}, {"judge": "same"}),
]


def run_one(label: str, probe: str, params: dict[str, Any], settings: dict[str, Any], model: str,
            options: ModelOptions, out: Path | None, max_tokens: int | None = None) -> dict[str, Any]:
    settings = dict(settings)
    if max_tokens:
        settings["generation"] = {"max_tokens": max_tokens}
    if settings.get("judge") == "same":
        settings["judge"] = model
    folder = out / label.replace(" ", "").replace("--", "_") if out else None
    config = RunConfig(model=model, model_options=options, out_dir=folder, keep_records=folder is not None,
                       **settings)
    started = time.perf_counter()
    doc = run_probe(probe, config=config, **params).document
    validity = doc["validity"]
    headline = [h["metric"] for h in doc["headline"]["metrics"]]
    return {
        "run": label,
        "seconds": round(time.perf_counter() - started, 1),
        "requests": doc["run"].get("requests"),
        "headline": {m: doc["metrics"].get(m) for m in headline},
        "marks": {m: v.get("mark") for m, v in (doc.get("marks") or {}).items()},
        "verdict": validity["verdict"],
        "problems": [f"{c['status']} {c['guard']}: {c['message']}" for c in validity["checks"]
                     if c["status"] != "pass"],
    }


def shown(est: dict[str, Any] | None) -> str:
    if not est or est.get("value") is None:
        return "undefined"
    v, lo, hi, n = est["value"], est.get("ci_low"), est.get("ci_high"), est.get("n")
    interval = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
    return f"{v:.3f}{interval} (n={n})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the model spec, e.g. hf:PATH")
    parser.add_argument("--base-url", default=None, help="for openai: models")
    parser.add_argument("--only", default="", help="comma-separated run labels' first words (probe names)")
    parser.add_argument("--out", type=Path, default=None, help="keep each run's results here")
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="cut every answer here instead of at the probe's default (for a model that never stops)")
    args = parser.parse_args()
    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    options = ModelOptions(base_url=args.base_url)
    summary = []
    for label, probe, params, settings in RUNS:
        if wanted and probe not in wanted and label not in wanted:
            continue
        shown_params = {k: v for k, v in params.items() if k != "scenarios_file"}
        print(f"== {label}  ({probe}, {shown_params}, {settings})", flush=True)
        row = run_one(label, probe, params, settings, args.model, options, args.out, args.max_tokens)
        summary.append(row)
        for metric, est in row["headline"].items():
            mark = row["marks"].get(metric)
            print(f"   {metric} = {shown(est)}" + (f", mark {mark}" if mark else ""))
        print(f"   {row['requests']} requests in {row['seconds']} s; validity {row['verdict'].upper()}")
        for problem in row["problems"]:
            print(f"     {problem}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "verdicts.json").write_text(json.dumps({"model": args.model, "runs": summary}, indent=2))


if __name__ == "__main__":
    main()
