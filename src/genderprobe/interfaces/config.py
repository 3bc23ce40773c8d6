"""The run configuration file (TOML): generation parameters, model options, run-engine settings.

    [generation]
    temperature = 0.0
    max_tokens = 16
    system_prompt = "You are a helpful assistant."

    [model]
    base_url = "http://localhost:8000/v1"
    api_key_env = "VLLM_KEY"

    [run]
    concurrency = 32
    rpm = 500
    max_error_rate = 0.02
    cache_dir = "~/genderprobe-cache"

Command-line flags win over the file. Every key is checked when the file is
read; a mistake is reported in one sentence naming the file and the key.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genderprobe.errors import UserError
from genderprobe.models.http_options import check_body, check_header_name, check_headers

CONFIG_ENV = "GENDERPROBE_CONFIG"

Check = Callable[[Any], str | None]  # returns what is wrong, or None


def _number(low: float | None = None, high: float | None = None, *, above: float | None = None) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return "must be a number"
        if low is not None and v < low:
            return f"must be at least {low:g}"
        if above is not None and v <= above:
            return f"must be above {above:g}"
        if high is not None and v > high:
            return f"must be at most {high:g}"
        return None

    return check


def _whole(low: int | None = None, high: int | None = None) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int):
            return "must be a whole number"
        if low is not None and v < low:
            return f"must be at least {low}"
        if high is not None and v > high:
            return f"must be at most {high}"
        return None

    return check


def _text(v: Any) -> str | None:
    return None if isinstance(v, str) and v.strip() else "must be a non-empty string"


def _url(v: Any) -> str | None:
    if not isinstance(v, str) or not v.startswith(("http://", "https://")):
        return "must be an http:// or https:// URL"
    return None


def _constrain_with(v: Any) -> str | None:
    return None if v in ("auto", "structured_outputs", "json_schema") else "must be auto, structured_outputs or json_schema"


REASONING_EFFORTS = ("minimal", "low", "medium", "high")


def _reasoning_effort(v: Any) -> str | None:
    return None if v in REASONING_EFFORTS else f"must be one of {', '.join(REASONING_EFFORTS)}"


def _flag(v: Any) -> str | None:
    return None if isinstance(v, bool) else "must be true or false"


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(v: Any) -> float | None:
    """Seconds in a duration such as 3600, "90m", "12h" or "30d" (None if it is not one)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if math.isfinite(v) and v > 0 else None
    if isinstance(v, str):
        text = v.strip().lower()
        unit = _UNITS.get(text[-1:], None)
        number = text[:-1] if unit else text
        try:
            value = float(number) * (unit or 1)
        except ValueError:
            return None
        return value if math.isfinite(value) and value > 0 else None
    return None


def _duration(v: Any) -> str | None:
    return None if parse_duration(v) is not None else 'must be a positive duration such as 3600, "90m", "12h" or "30d"'


SCHEMA: dict[str, dict[str, Check]] = {
    "generation": {
        "temperature": _number(0.0, 2.0),
        "top_p": _number(0.0, 1.0, above=0.0),
        "max_tokens": _whole(1),
        "seed": _whole(),
        "system_prompt": _text,
        "reasoning_effort": _reasoning_effort,
    },
    "model": {
        "base_url": _url,
        "api_key_env": _text,
        "api_key": _text,
        "timeout": _number(above=0.0),
        "logprob_tokens": _whole(1, 5),
        "top_logprobs": _whole(1, 20),
        "constrain_with": _constrain_with,
        "body": check_body,
        "headers": check_headers,
        "api_key_header": check_header_name,
        "api_version": _text,
    },
    "run": {
        "concurrency": _whole(1, 4096),
        "max_requests": _whole(1),
        "rpm": _number(above=0.0),
        "tpm": _number(above=0.0),
        "max_retries": _whole(0, 100),
        "max_retry_wait": _number(0.0),
        "max_error_rate": _number(0.0, 1.0),
        "cache_dir": _text,
        "cache_max_age": _duration,
        "keep_empty": _flag,
        "batch": _flag,
        "batch_poll_interval": _number(above=0.0),
        "price_in": _number(0.0),
        "price_out": _number(0.0),
    },
    # Where the judge models (--judge, --checker, --reader-judge) are served
    # when not beside the tested model: "local model, hosted judge".
    "judge": {
        "base_url": _url,
        "api_key_env": _text,
        "timeout": _number(above=0.0),
        "price_in": _number(0.0),
        "price_out": _number(0.0),
    },
}

# Keys of [model] that are backend options (ModelOptions.extra) rather than connection settings.
BACKEND_OPTIONS = ("logprob_tokens", "top_logprobs", "constrain_with", "body", "headers", "api_key_header", "api_version")
# Keys whose values may hold secrets: an error about them never shows the value.
SECRET_KEYS = ("api_key", "headers")


@dataclass
class FileConfig:
    """The validated contents of a config file (missing keys are absent)."""

    path: Path | None = None
    generation: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict, repr=False)  # may hold an api_key
    run: dict[str, Any] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)

    def model_extra(self) -> dict[str, Any]:
        return {k: v for k, v in self.model.items() if k in BACKEND_OPTIONS}


def load_config(path: str | os.PathLike[str] | None = None) -> FileConfig:
    """Read ``path``, or the file named by GENDERPROBE_CONFIG, or nothing."""
    if path is None:
        env = os.environ.get(CONFIG_ENV)
        if not env:
            return FileConfig()
        path = env
    p = Path(path).expanduser()
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"The config file {p} does not exist.") from None
    except IsADirectoryError:
        raise UserError(f"The config file {p} is a folder; pass a TOML file.") from None
    except UnicodeDecodeError:
        raise UserError(f"The config file {p} is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"The config file {p} is not valid TOML ({exc}).") from None
    except OSError as exc:
        raise UserError(f"Cannot read the config file {p}: {exc.strerror or exc}.") from None
    return validate(data, p)


def validate(data: dict[str, Any], path: Path | None = None) -> FileConfig:
    where = f"The config file {path}" if path else "The configuration"
    config = FileConfig(path=path)
    for section, values in data.items():
        checks = SCHEMA.get(section)
        if checks is None:
            raise UserError(f"{where} has an unknown section [{section}]; known sections: {', '.join(f'[{s}]' for s in SCHEMA)}.")
        if not isinstance(values, dict):
            raise UserError(f"{where} has '{section}' as a value; it must be a [{section}] section.")
        for key, value in values.items():
            check = checks.get(key)
            if check is None:
                raise UserError(f"{where} has an unknown key '{key}' in [{section}]; known keys there: {', '.join(checks)}.")
            problem = check(value)
            if problem:
                shown = "***" if key in SECRET_KEYS else repr(value)
                raise UserError(f"{where} sets {section}.{key} = {shown}, but it {problem}.")
        getattr(config, section).update(values)
    return config


def check_option(section: str, key: str, value: Any, flag: str) -> Any:
    """Validate a command-line value with the file's rules; returns it unchanged."""
    if value is None:
        return None
    problem = SCHEMA[section][key](value)
    if problem:
        raise UserError(f"{flag} {value!r} is not allowed: it {problem}.")
    return value


def merged(flag_value: Any, config: FileConfig, section: str, key: str, default: Any = None) -> Any:
    """The command-line value if given, else the file's, else the default."""
    if flag_value is not None:
        return flag_value
    return getattr(config, section).get(key, default)
