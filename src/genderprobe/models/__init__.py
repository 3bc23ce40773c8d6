"""Model backends, chosen by the prefix of a model spec (``prefix:rest``)."""

from __future__ import annotations

import importlib

from genderprobe.errors import UserError
from genderprobe.models.base import (
    GenerationParams,
    Model,
    ModelOptions,
    Request,
    Response,
)

# prefix -> (module, one-line description). Modules are imported only when used,
# so heavy extras (torch, vllm) cost nothing unless asked for.
BACKENDS: dict[str, tuple[str, str]] = {
    "reference": ("genderprobe.models.reference", "calibration models with known bias"),
    "openai": ("genderprobe.models.openai_compatible", "any OpenAI-compatible chat API"),
    "anthropic": ("genderprobe.models.anthropic_messages", "Anthropic Messages API"),
    "hf": ("genderprobe.models.hf", "local weights with transformers"),
    "vllm": ("genderprobe.models.vllm_engine", "local weights with vLLM (GPU)"),
}


def get_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Build the backend for ``spec`` such as ``openai:gpt-4o-mini``."""
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in BACKENDS and not rest.strip():
        raise UserError(f"Model spec '{spec}' names no model after '{prefix}:'; for example {prefix}:NAME.")
    if not sep or not rest:
        raise UserError(
            f"Model spec '{spec}' has no backend prefix; write it as BACKEND:NAME, "
            f"for example openai:gpt-4o-mini or reference:random."
        )
    if prefix not in BACKENDS:
        known = ", ".join(sorted(BACKENDS))
        raise UserError(f"Unknown model backend '{prefix}' in '{spec}'; known backends: {known}.")
    module_name, _ = BACKENDS[prefix]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UserError(
            f"The '{prefix}' backend needs a package that is not installed ({exc.name}); "
            f"install it with: pip install 'genderprobe[{prefix}]'."
        ) from None
    return module.create(rest, options or ModelOptions())


__all__ = [
    "BACKENDS",
    "GenerationParams",
    "Model",
    "ModelOptions",
    "Request",
    "Response",
    "get_model",
]
