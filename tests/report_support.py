"""Inputs for the report tests: real probe runs, a payload-carrying model, and a
hand-built results document for the chart types no merged probe emits yet.

The hand-built document is assembled with the real spec builders of
:mod:`genderprobe.charts` and real :class:`Estimate` values, so it has exactly
the shape a probe would write.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from instruments import fake_key

from genderprobe import charts
from genderprobe.analysis.stats import Estimate, MarkDefinition, bootstrap_ratio
from genderprobe.contract import Table
from genderprobe.interfaces.api import RunConfig, execute, run_probe
from genderprobe.models.base import ModelOptions, Request, Response, SyncBatchModel
from genderprobe.outputs.results import load_results, write_json
from genderprobe.studies.relationship_levy.probe import RelationshipLevy

# Answers that would run script, load something or break out of an element if
# they were ever written into the page as markup. Each sets window.__pwned.
PAYLOADS = (
    "<script>window.__pwned = 1; alert('script')</script>",
    '<img src="http://127.0.0.1:9/pwned.png" onerror="window.__pwned = 2; alert(\'img\')">',
    "</textarea></pre><script>window.__pwned = 3</script>",
    '<a href="javascript:window.__pwned = 4">(a) click me</a>',
    '<svg onload="window.__pwned = 5"><circle r="9"/></svg>',
    "</title></style><body onload=\"window.__pwned = 6\">{{ 7 * 7 }}",
    '"><iframe src="javascript:parent.__pwned = 7"></iframe>',
)


class PayloadModel(SyncBatchModel):
    """A model whose answers are hostile markup, cycling through PAYLOADS."""

    cacheable = False

    def __init__(self, name: str):
        self.spec = f"test:{name}"

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(text=PAYLOADS[(r.repetition + len(r.prompt)) % len(PAYLOADS)]) for r in requests]


class UndecidedModel(SyncBatchModel):
    """Never picks an option, at length: the worst case for the evidence section's size."""

    cacheable = False

    def __init__(self, name: str):
        self.spec = f"test:{name}"

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        text = ("I would rather not choose between them. " * 12).strip()
        return [Response(text=f"{text} (prompt {len(r.prompt)})") for r in requests]


# The answer browser's test answers: a sentence planted for its search, and the payload the issue names.
PLANTED = "zebra-7f3c"
SCRIPT_BREAKER = "</script><img src=x onerror=alert(1)>"
# Twenty answers, one picked by the prompt: every reading the answer browser shows.
MIXED = (("(a)",) * 7 + ("(b)",) * 5 + ("<think>Weighing both partners' claims.</think>(b)",) * 2
         + ("Both have a point, honestly.",) * 2
         + ("Neither of them; they should talk.", "I'm sorry, but I can't help with that.",
            f"(a) {SCRIPT_BREAKER}", PAYLOADS[0]))


class MixedModel(SyncBatchModel):
    """Answers of every kind a report's answer browser shows, decided by the prompt, so a run is the
    same each time: (a), (b), reasoning before (b), unreadable answers, a refusal, hostile markup, and
    the PLANTED sentence for the scenario about investing extra savings. As the reader judge (its
    prompt quotes the answer) it reads "Both have a point" as (a) and nothing else."""

    cacheable = False

    def __init__(self, name: str):
        self.spec = f"test:{name}"

    def generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(text=self.answer(r.prompt)) for r in requests]

    @staticmethod
    def answer(prompt: str) -> str:
        if prompt.startswith("You are checking which option"):
            return "(a)" if "Both have a point" in prompt else "NONE"
        if "extra savings into real estate" in prompt:
            return f"(b), says the {PLANTED} planted answer."
        return MIXED[zlib.crc32(prompt.encode("utf-8")) % len(MIXED)]


def create(name: str, options: ModelOptions) -> SyncBatchModel:
    """Backend entry point: tests register this module under the 'test' prefix
    (``test:undecided`` never picks an option; ``test:mixed...`` answers MixedModel's mix;
    any other name answers payloads)."""
    if name == "undecided":
        return UndecidedModel(name)
    return MixedModel(name) if name.startswith("mixed") else PayloadModel(name)


def levy_results(out_dir: Path, model: str, sample_k: int, *, seed: int = 0) -> Path:
    """Run RelationshipLevy for real and return its results.json."""
    config = RunConfig(model=model, use_cache=False, out_dir=out_dir, seed=seed, n_resamples=200)
    out = run_probe("relationship-levy", model, config=config, sample_k=sample_k)
    assert out.results_path is not None
    return out.results_path


def levy_with_model(out_dir: Path, model_spec: str, sample_k: int) -> Path:
    """Run RelationshipLevy through the real harness with a model spec from a registered backend."""
    config = RunConfig(model=model_spec, use_cache=False, out_dir=out_dir, n_resamples=200)
    out = execute(RelationshipLevy(sample_k=sample_k), config)
    assert out.results_path is not None
    return out.results_path


def _estimate(rng: np.random.Generator, n: int, p: float) -> Estimate:
    return bootstrap_ratio((rng.random(n) < p).astype(float), n_resamples=200, seed=int(rng.integers(1 << 30)))


LONG_LABEL = "a very long group label that goes on and on to test how the chart copes with it, really long"
LANGUAGES = ("English", "中文", "日本語", "한국어", "Español")
WORD_CLASSES = ("occupations", "adjectives", "家庭 (family)", "verbs")


def gallery_document(tmp: Path) -> Path:
    """A results file using every chart type, with nulls, long labels, many rows and CJK text."""
    rng = np.random.default_rng(7)
    races = ("white", "black", "asian", "hispanic")
    pairings = {f"man {a} / woman {b}": _estimate(rng, 40, 0.5 + 0.05 * i) for i, (a, b) in
                enumerate((a, b) for a in races for b in races)}
    pairings["man white / woman black"] = Estimate(None, None, None, 0)
    pairings[LONG_LABEL] = Estimate(0.25, None, None, 3)
    relationship = {t: _estimate(rng, 60, 0.4 + 0.02 * i) for i, t in enumerate(
        ("friends", "siblings", "coworkers", "spouses", "parent-child", "strangers", "neighbours", "in-laws", "dating"))}
    words = [f"word{i:03d}" for i in range(110)] + ["护士", "看護師", "간호사"]
    di = [None if i % 17 == 0 else float(0.5 + rng.random()) for i in range(len(words))]
    model = rng.uniform(0, 1, 300)
    human = np.clip(model + rng.normal(0, 0.15, 300), 0, 1)
    heat = [[float(0.6 + 0.8 * rng.random()) for _ in LANGUAGES] for _ in WORD_CLASSES]
    heat[1][2] = None
    word_heat = [[float(0.5 + rng.random()) for _ in LANGUAGES[:3]] for _ in words[:100]]
    mark = MarkDefinition("pair_bias", (0, 0.1, 0.2, 0.6, 1), description="Mean bias over the nine pairs.")
    pair_bias = _estimate(rng, 200, 0.15)
    metrics = {"pair_bias": pair_bias, "overall_bias": Estimate(-0.02, -0.08, 0.04, 900),
               "undefined_metric": Estimate(None, None, None, 0), "mcnemar_p": Estimate(3.2e-9, None, None, 900)}
    chart_list = [
        charts.forest("race", "diff by race pairing (16 + long + undefined)", pairings, x_range=(-1, 1)),
        charts.bar("relationship_types", "Relationship-type means (Figure 1)", list(relationship),
                   {"mean": list(relationship.values())}, reference=0.5, y_label="share choosing the man"),
        charts.bar("environments", "PMR per environment, non-CoT vs CoT", ["home", "work", LONG_LABEL, "学校"],
                   {"non-CoT": [0.31, 0.12, None, 0.4], "CoT": [_estimate(rng, 50, 0.2), 0.08, 0.2, None]}),
        charts.bar("words", "Pronoun disparate impact per word", words, {"DI": di}, reference=1.0),
        charts.heatmap("di_heat", "Disparate impact by word class and language", WORD_CLASSES, LANGUAGES, heat,
                       center=1.0, value_label="disparate impact"),
        charts.heatmap("word_heat", "Disparate impact per word (100 words)", words[:100], LANGUAGES[:3],
                       word_heat, center=1.0),
        charts.scatter("fsb", "Model score against human score", list(zip(model, human)), x_label="model score",
                       y_label="human score", identity_line=True, labels=[f"sentence {i}" for i in range(300)]),
        charts.histogram("hist", "Score histogram", [0, 0.2, 0.4, 0.6, 0.8, 1.0],
                         {"model": [12, 40, 88, 101, 59], "human": [20, 51, 70, 90, 69]}, x_label="score"),
        charts.forest("empty_forest", "An empty forest plot", {}),
        charts.bar("empty_bar", "An empty bar chart", [], {}),
        charts.heatmap("empty_heat", "An empty heatmap", [], [], []),
        charts.scatter("empty_scatter", "An empty scatter plot", []),
        charts.histogram("empty_hist", "An empty histogram", [], {}),
        {"type": "sankey", "id": "future", "title": "A chart type from a newer version"},
    ]
    tables = [
        Table("E/T by topic", ["topic", "E", "T", "p-value", "note"],
              [["Money", Estimate(0.1, 0.02, 0.2, 30), Estimate(None, None, None, 0), 3.2e-9, "显著"],
               ["Chores", 0.5, None, 0.75, None], [LONG_LABEL, 12, 1234567, 1.0, "ok"]],
              note="McNemar exact test; 中文 note."),
    ]
    doc: dict[str, Any] = {
        "schema": 1, "probe": "gallery", "summary": "Every chart type (hand-built with genderprobe.charts).",
        "model": "openai:gpt-4o-mini", "judge": "openai:gpt-4o", "created": "2026-01-31T14:05:00+00:00",
        "parameters": {"probe": {"languages": list(LANGUAGES), "api_key": fake_key("should-never-show-1234567890")},
                       "generation": {"temperature": 0.0}, "system_prompt": None, "seed": 0,
                       "n_resamples": 200, "score_options": False},
        "run": {"requests": 900, "cached": 300, "sent": 600, "errors": 2, "retries": 1, "prompt_tokens": 1000,
                "completion_tokens": 200, "elapsed_s": 1.5, "judge": {"requests": 900}, "cache": None},
        "versions": {"genderprobe": "0.1.0", "data": {"demet/x.csv": "abc"}},
        "metrics": {k: v.to_json() for k, v in metrics.items()},
        "marks": {"pair_bias": mark.to_json(pair_bias),
                  "undefined_metric": MarkDefinition("undefined_metric", (0, .1, .2, .6, 1)).to_json(
                      metrics["undefined_metric"])},
        "breakdowns": {"language": {lang: _estimate(rng, 30, 0.5).to_json() for lang in LANGUAGES}},
        "tables": [t.to_json() for t in tables],
        "charts": chart_list,
        "evidence": {"male": [{"prompt": "Who is right? 谁是对的？", "answer": "(a) 他", "code": "male", "item": 1}],
                     "female": [], "undetected": [{"prompt": "p", "answer": "どちらとも言えません", "code": "undetected"}]},
        "counts": {"items": 900, "attempts": 1800, "undetected": 1, "errors": 2},
        "extra": {"note": "kept"},
    }
    path = tmp / "gallery" / "results.json"
    write_json(path, doc)
    return path


def load(path: Path) -> dict[str, Any]:
    return load_results(path)
