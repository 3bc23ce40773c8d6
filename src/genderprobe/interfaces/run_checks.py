"""What a run's options must agree with: the probe, each other, and the model once it is open.

Every run passes here before anything is opened or paid for: ``genderprobe
run``, its ``--dry-run`` (the same path, sending nothing), suites and the
Python API all go through :func:`genderprobe.interfaces.api.execute`. Each
mistake is one sentence naming the flag to drop or change.
"""

from __future__ import annotations

from typing import Any

from genderprobe.analysis.equivalence import check_margin
from genderprobe.analysis.sequential import check as check_question
from genderprobe.contract import count_in_range
from genderprobe.errors import UserError
from genderprobe.outputs.records_parquet import require_pyarrow


def check_options(probe: Any, config: Any) -> None:
    """The run's options against the probe and against each other."""
    _check_against_probe(probe, config)
    if config.reader_judge and config.score_options:
        raise UserError("--score-options reads no text a judge could read; drop --reader-judge or --score-options.")
    count_in_range(config.reader_judge_sample, 0, None, "The reader judge's check sample (--reader-judge-sample)")
    if config.constrain_answers and config.score_options:
        raise UserError("--score-options already reads only the options; drop --constrain-answers or --score-options.")
    count_in_range(config.seed, 0, None, "The seed (--seed)")
    count_in_range(config.n_resamples, 1, None, "The number of bootstrap resamples (--resamples)")
    check_margin(config.equivalence_margin)
    if config.until_decided is not None:
        check_question(probe.name, config.until_decided, config.equivalence_margin, config.use_cache,
                       probe.parameters())
    elif config.records_parquet:
        if config.out_dir is None or not config.keep_records:
            raise UserError("Parquet records (--parquet) need --out and records (drop --no-records).")
        require_pyarrow()


def _check_against_probe(probe: Any, config: Any) -> None:
    """Options the probe has no use for: a judge it does not ask, scores of options it does not offer."""
    name = probe.name
    if probe.needs_judge and not config.judge:
        raise UserError(f"Probe '{name}' needs a judge model; pass --judge SPEC.")
    if config.judge and not probe.needs_judge:
        raise UserError(f"Probe '{name}' asks no judge; drop the judge (--judge).")
    if config.checker and not probe.needs_judge:
        raise UserError(f"Probe '{name}' has no judge whose labels a checker could check; drop --checker.")
    if config.score_options and not probe.supports_option_scoring:
        raise UserError(f"Probe '{name}' has no closed-choice prompts to score by log-probability.")
    if config.constrain_answers and not probe.supports_constrained_answers:
        raise UserError(f"Probe '{name}' has no closed-choice prompts whose answers could be constrained; "
                        "drop --constrain-answers.")
    if config.reader_judge and not probe.supports_reader_judge:
        raise UserError(f"Probe '{name}' has no closed-choice answers a judge could read; drop --reader-judge.")


def check_model(model: Any, config: Any, probe: Any = None) -> None:
    """The options against the model the run opened: what its backend can do."""
    if probe is not None and probe.asks_loglikelihood() and not model.supports_loglikelihood:
        raise UserError(f"Probe '{probe.name}' asks for log-likelihoods of raw text, which '{model.spec}' cannot "
                        "give (local weights can: hf:PATH, and a server that returns them, named "
                        "openai:MODEL?loglikelihood=1); ask it by generation with --method generation.")
    if config.score_options and not model.supports_option_scoring:
        raise UserError(f"Model '{model.spec}' cannot score answer options by log-probability.")
    if config.constrain_answers and not model.supports_constrained_answers:
        raise UserError(f"Model '{model.spec}' cannot constrain its answers to the options; "
                        "drop --constrain-answers.")
    if config.batch:
        from genderprobe.engine.batch import require_batch_api

        require_batch_api(model)
        if not config.use_cache:
            raise UserError("--batch keeps its batch ids in the response store to resume them; drop --no-cache.")
