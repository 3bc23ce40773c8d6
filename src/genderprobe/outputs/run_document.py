"""A run's results document (results.json), built section by section.

What was run and how (probe, models, parameters, decoding), what it cost (one
accounting per runner), the versions behind it, the probe's own results, then
what the analysis adds to them: the paper's table beside them, what would
halve each interval, each breakdown's tests, equivalence within a margin, the
warnings (gathered from one list of sources) and the validity guards, which
read all of the above.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import platform
from typing import Any

from genderprobe.analysis import verdict
from genderprobe.analysis.breakdown_tests import breakdown_tests
from genderprobe.analysis.equivalence import equivalence, withhold_claims
from genderprobe.analysis.losses import unread_warnings
from genderprobe.analysis.planning import interval_halving
from genderprobe.analysis.sequential import stopped_early_warnings
from genderprobe.analysis.validity import assess
from genderprobe.contract import ProbeResult
from genderprobe.data.packaged import all_data_files
from genderprobe.engine.accounting import cut_warnings, empty_warnings, runner_accounting
from genderprobe.models.base import GenerationParams, Model
from genderprobe.outputs.paper_tables import paper_section
from genderprobe.version import __version__

RESULTS_SCHEMA = 1


def results_document(probe: Any, config: Any, run: Any, result: ProbeResult, generation: GenerationParams,
                     started: dt.datetime) -> dict[str, Any]:
    """The document of a run: ``run`` is what it opened (genderprobe.interfaces.run_resources.OpenRun)."""
    models = run.models
    document = {
        "schema": RESULTS_SCHEMA,
        "probe": probe.name,
        "summary": probe.summary,
        "model": run.model.spec,
        "endpoint": run.model.endpoint,
        **{role: _spec(models[role]) for role in ("judge", "checker", "reader_judge")},
        "created": started.isoformat(timespec="seconds"),
        "parameters": _parameters(probe, config, generation, models["reader_judge"]),
        # How the answers were decoded (greedy, sampling, a server's default; dtype): compare splits on it.
        "decoding": _decoding(run.model, generation, config),
        "run": _accounting(config, run, generation),
        "versions": versions() | _plugin_versions(probe, models.values()),
        "headline": {
            "metrics": [h.to_json() for h in probe.headlines()],
            "view_parameters": list(probe.view_parameters),
        },
        **result.to_json(),
    }
    notes = calibration_notes(probe, run.model.spec, document.get("marks") or {})
    if notes:  # why this calibration model gets a mark its name does not suggest
        document["calibration_notes"] = notes
    document["interval_halving"] = interval_halving(document)  # how many items halve each headline interval
    # Each breakdown's groups against the neutral value, Holm-corrected (genderprobe.analysis.breakdown_tests).
    document["breakdown_tests"] = breakdown_tests(result, probe.headlines(), config.n_resamples,
                                                  getattr(probe, "breakdown_family_note", None))
    if config.equivalence_margin is not None:
        document["equivalence"] = equivalence(result.metrics, probe.headlines(), config.equivalence_margin,
                                              document.get("marks"))
    decided = getattr(config, "decided", None)
    if decided is not None:  # a run that stopped when its confidence sequence settled the question
        document["until_decided"] = decided
    document["warnings"] = [w for source in _warning_sources(probe, config, run, result, generation, document)
                            for w in source]
    # What limits these numbers: position, spread, losses, sample, marks, readers (genderprobe.analysis.validity).
    document["validity"] = assess(document)
    # What every surface shows of the marks and the validity, decided once (genderprobe.analysis.verdict).
    document["verdict"] = verdict.assess(document)
    # The paper's tables with the run's row, which shows its marks as the verdict has them.
    document["paper"] = paper_section(type(probe), document)
    withhold_claims(document.get("equivalence"), sorted({c["guard"] for c in document["validity"]["checks"]
                                                          if c["status"] == "fail"}))
    return document


def calibration_notes(probe: Any, spec: str, marks: dict[str, Any]) -> dict[str, str]:
    """The probe's sentences for this calibration model ({metric: sentence}), for the metrics it marked."""
    notes = getattr(probe, "calibration_notes", {}).get(spec) or {}
    return {metric: text for metric, text in notes.items() if (marks.get(metric) or {}).get("mark")}


def _spec(model: Model | None) -> str | None:
    return model.spec if model else None


def _parameters(probe: Any, config: Any, generation: GenerationParams, reader: Model | None) -> dict[str, Any]:
    return {
        "probe": probe.parameters(),
        "generation": generation.as_dict(),
        "system_prompt": config.system_prompt,
        "seed": config.seed,
        "n_resamples": config.n_resamples,
        "score_options": config.score_options,
        "constrain_answers": config.constrain_answers,
        "reader_judge": _spec(reader),
        "reader_judge_sample": config.reader_judge_sample if reader else None,
        **({"limit": config.limit} if getattr(config, "limit", None) else {}),  # a smoke run (--limit)
    }


def _decoding(model: Model, generation: GenerationParams, config: Any) -> dict[str, Any]:
    """The model's decoding of this run; option scoring generates nothing, so only the dtype counts there."""
    decoding = model.decoding(generation)
    if config.score_options:
        kept = {k: decoding[k] for k in ("dtype",) if k in decoding}
        return {"method": "option scoring", "note": "each option's log-probability; no text is generated", **kept}
    if config.constrain_answers:
        decoding["constrained"] = True
    return decoding


def _accounting(config: Any, run: Any, generation: GenerationParams) -> dict[str, Any]:
    """Requests, tokens and cost: the model's, then each judge's (judges share one price)."""
    judge_prices = (config.judge_price_in, config.judge_price_out)

    def judged(role: str) -> dict[str, Any] | None:
        runner = run.runners[role]
        return runner_accounting(runner, run.models[role], None, judge_prices) if runner else None

    return {
        **runner_accounting(run.runners["model"], run.model, generation, (config.price_in, config.price_out)),
        "judge": judged("judge"),
        "checker": judged("checker"),
        "reader_judge": judged("reader_judge"),
        "cache": str(run.store.path) if run.store else None,
    }


def _warning_sources(probe: Any, config: Any, run: Any, result: ProbeResult, generation: GenerationParams,
                     document: dict[str, Any]) -> list[list[str]]:
    """Every source of the run's warnings, in the order they are shown."""
    return [
        # answers the readers could not read, and what would read them (genderprobe.analysis.losses)
        unread_warnings(result.losses, supports_option_scoring=probe.supports_option_scoring,
                        scored=config.score_options, max_tokens=generation.max_tokens,
                        supports_reader_judge=probe.supports_reader_judge,
                        reader_judged=run.reader_judge is not None),
        # where the judge reading the answers disagreed with the rules
        run.reader_judge.readings.warnings() if run.reader_judge else [],
        # what a backend had to change to be answered (a reasoning model's temperature)
        [note for model in run.models.values() if model is not None for note in model.notes],
        # empty answers, and answers cut to their bound (genderprobe.engine.accounting)
        empty_warnings(document["run"]),
        cut_warnings(document["run"]),
        # the probe's own (a sample missing topics)
        list(result.extra.get("warnings") or []),
        # intervals read at a size the answers chose (genderprobe.analysis.sequential)
        stopped_early_warnings(document.get("until_decided")),
    ]


def _plugin_versions(probe: Any, models: Any) -> dict[str, Any]:
    """{"plugins": {distribution: version}} for the plugins behind the run, or nothing."""
    from genderprobe.registry import plugins_used

    used = plugins_used(probe.name, [m.spec for m in models if m is not None])
    return {"plugins": used} if used else {}


_DATA_HASHES: dict[str, str] | None = None


def data_versions() -> dict[str, str]:
    """SHA-256 (first 16 hex digits) of every packaged data file, by key."""
    global _DATA_HASHES
    if _DATA_HASHES is None:
        _DATA_HASHES = {key: hashlib.sha256(f.read_bytes()).hexdigest()[:16] for key, f in all_data_files().items()}
    return _DATA_HASHES


def versions() -> dict[str, Any]:
    import numpy
    import scipy

    return {
        "genderprobe": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "data": data_versions(),
    }
