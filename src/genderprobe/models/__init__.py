"""Model backends, chosen by the prefix of a model spec (``prefix:rest``).

A backend is a module with ``create(name, options) -> Model``: the built-in ones
are listed in ``BACKENDS``; other distributions add theirs through the
``genderprobe.backends`` entry points (:mod:`genderprobe.plugins`,
docs/plugins.md), whose name is the prefix. Built-ins win on a clash.

A room of the harness: it may import the contract, the plugins and the base
(errors, models.base); never the engine or anything above it.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from genderprobe import plugins
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

# The built-in backends that give log-likelihoods of raw text (their Model.supports_loglikelihood; a test
# keeps the two in step), known from the spec alone, so a suite plans without loading torch or a model.
LOGLIKELIHOOD_BACKENDS = frozenset({"reference", "hf"})
# Settings after an OpenAI-compatible model's name (openai:MODEL?loglikelihood=1&bos=TEXT): a server gives
# log-likelihoods of raw text where the user says it does (genderprobe.models.openai_compatible).
OPENAI_SETTINGS: dict[str, type] = {"loglikelihood": bool, "bos": str}


def gives_loglikelihood(spec: str) -> bool:
    """Whether the model ``spec`` names can score raw text by log-likelihood (plugins: not known, so no); an
    OpenAI-compatible server does where the spec says so (openai:MODEL?loglikelihood=1)."""
    prefix, _, name = spec.partition(":")
    if prefix == "openai":
        from genderprobe.models.local_prompts import split_spec

        return split_spec(name, OPENAI_SETTINGS)[1].get("loglikelihood", False)
    return prefix in LOGLIKELIHOOD_BACKENDS


@cache
def plugin_backends() -> dict[str, plugins.Plugin]:
    """Spec prefix -> the plugin that adds that backend (not loaded until used).

    A prefix that a built-in backend or an earlier plugin already has is not
    used, with one warning sentence.
    """
    found: dict[str, plugins.Plugin] = {}
    for plugin in plugins.declared(plugins.BACKENDS):
        if plugin.name in BACKENDS:
            plugin.reject("a built-in backend has that prefix; rename the entry point")
        elif plugin.name in found:
            plugin.reject(f"the distribution '{found[plugin.name].distribution}' already adds a backend with that prefix")
        else:
            found[plugin.name] = plugin
    return found


def plugin_backend(plugin: plugins.Plugin) -> ModuleType:
    """The module a backend plugin names; a :class:`UserError` when it cannot be loaded or has no ``create``."""
    module = plugin.load()
    if not callable(getattr(module, "create", None)):
        raise UserError(plugin.problem(f"'{plugin.entry_point.value}' has no create(name, options) function"))
    return module


def plugin_descriptions() -> dict[str, tuple[str, str]]:
    """Spec prefix -> (one-line description, distribution), for the plugin backends.

    Loads them: the description is the first line of the module's docstring. One
    that cannot be loaded says so, with one warning sentence.
    """
    found: dict[str, tuple[str, str]] = {}
    for prefix, plugin in plugin_backends().items():
        try:
            what = (plugin_backend(plugin).__doc__ or "").strip().partition("\n")[0]
        except UserError as exc:
            plugins.log.warning(str(exc))
            what = "cannot be loaded (see the warning)"
        found[prefix] = (what, plugin.distribution)
    return found


def get_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Build the backend for ``spec`` such as ``openai:gpt-4o-mini``."""
    prefix, sep, rest = spec.partition(":")
    # Read even for a built-in prefix, so a plugin that a built-in shadows is reported.
    plugin = plugin_backends().get(prefix)
    known = prefix in BACKENDS or plugin is not None
    if sep and known and not rest.strip():
        raise UserError(f"Model spec '{spec}' names no model after '{prefix}:'; for example {prefix}:NAME.")
    if not sep or not rest:
        raise UserError(
            f"Model spec '{spec}' has no backend prefix; write it as BACKEND:NAME, "
            f"for example openai:gpt-4o-mini or reference:random."
        )
    if not known:
        names = ", ".join(sorted([*BACKENDS, *plugin_backends()]))
        raise UserError(f"Unknown model backend '{prefix}' in '{spec}'; known backends: {names}.")
    module = plugin_backend(plugin) if plugin is not None else _builtin_backend(prefix)
    return module.create(rest, options or ModelOptions())


def _builtin_backend(prefix: str) -> ModuleType:
    try:
        return importlib.import_module(BACKENDS[prefix][0])
    except ModuleNotFoundError as exc:
        raise UserError(
            f"The '{prefix}' backend needs a package that is not installed ({exc.name}); "
            f"install it with: pip install 'genderprobe[{prefix}]'."
        ) from None


__all__ = [
    "BACKENDS",
    "LOGLIKELIHOOD_BACKENDS",
    "GenerationParams",
    "Model",
    "ModelOptions",
    "Request",
    "Response",
    "get_model",
    "plugin_backends",
    "plugin_descriptions",
]
