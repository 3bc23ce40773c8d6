"""``genderprobe check --model SPEC``: can a run be paid for and kept, before it starts?

One cheap request to each model of the run (and its judges), sent the way a
run sends them, and one write to the response store. A wrong base URL, key,
model name or parameter, or a store that cannot be written, is told in one
sentence; otherwise it prints what answered: the endpoint, the model version
the server reports, its fingerprint, the answer and its tokens. Runs make the
same checks as they start: the store is written once before the first
request, and the first request goes alone.
"""

from __future__ import annotations

import time
from typing import Any

import click

from genderprobe.errors import RunFailed

CHECK_PROMPT = "Reply with the single word OK."
CHECK_MAX_TOKENS = 16

_OWN = ("model", "judge", "checker", "reader_judge", "judge_base_url", "judge_api_key_env", "base_url",
        "api_key_env", "timeout", "config_file", "cache_dir", "no_cache", "temperature", "top_p", "max_tokens",
        "reasoning_effort", "system_prompt")


def _check(**opts: Any) -> None:
    """Send one cheap request to each model and write to the store once; say what answered."""
    from genderprobe.cache_dir import default_cache_dir
    from genderprobe.engine.runner import Runner
    from genderprobe.engine.store import Store
    from genderprobe.interfaces.cli import _run_config, common_defaults
    from genderprobe.models import get_model
    from genderprobe.models.base import GenerationParams, Request
    from genderprobe.models.reference import PERSONAS

    config = _run_config({**common_defaults(), **opts})
    if config.use_cache:
        path = (config.cache_dir or default_cache_dir()) / "responses.sqlite3"
        with Store(path) as store:
            store.check_writable()
        click.echo(f"store     {path}: writable")
    generation = {k: v for k, v in config.generation.items() if v is not None}
    generation.setdefault("max_tokens", CHECK_MAX_TOKENS)
    # The calibration models answer from an oracle; every other model ignores it.
    request = Request.user(CHECK_PROMPT, system=config.system_prompt, params=GenerationParams(**generation),
                           options=("OK",), oracle=dict.fromkeys(PERSONAS, "OK"))
    roles = [("model", config.model, config.model_options), ("judge", config.judge, config.judge_options),
             ("checker", config.checker, config.checker_options),
             ("reader judge", config.reader_judge, config.reader_judge_options)]
    failed = False
    for role, spec, options in roles:
        if not spec:
            continue
        model = get_model(spec, options or config.model_options)
        model.check_credentials()
        runner = Runner(model, None, max_retries=1, max_error_rate=None)
        try:
            started = time.monotonic()
            answer = runner([request])[0]
            elapsed = time.monotonic() - started
        finally:
            runner.close()
        click.echo(f"{role:9s} {spec}" + (f" at {model.endpoint}" if model.endpoint else ""))
        if not answer.ok:
            failed = True
            click.secho(f"          failed: {answer.error_kind}: {answer.error_message}", fg="red")
            continue
        served = answer.served_model or "(not reported)"
        click.echo(f"          answered in {elapsed:.2f} s by {served}"
                   + (f", fingerprint {answer.fingerprint}" if answer.fingerprint else ""))
        click.echo(f"          {answer.text.strip()[:80]!r}; tokens in {answer.prompt_tokens}, "
                   f"out {answer.completion_tokens}; sent {model.effective_params(request.params)}")
        for note in model.notes:
            click.echo(f"          note: {note}")
    if failed:
        raise RunFailed("A model did not answer the check (see above); fix it or try again before a run pays for more.")


def _command() -> click.Command:
    command = click.Command(
        "check",
        callback=_check,
        help="Send one cheap request to the model (and its judges) and write to the response store once, "
             "so a wrong URL, key, model name, parameter or store is found before a run pays for anything.",
        short_help="One cheap request to each model, and a store write, before a run.",
    )
    from genderprobe.interfaces.cli import common_options

    command.params.extend(common_options(_OWN))
    return command


COMMANDS = [_command()]
