"""Executors: where a run's missing requests are answered.

``local`` (the default) answers them in this process. ``ray`` fans them out to
Ray workers, one backend each, and streams the answers back to this process,
whose runner remains the only store writer: cache, resume and results are
those of a local run.
"""

from __future__ import annotations

from typing import Any

from genderprobe.errors import UserError
from genderprobe.models import get_model
from genderprobe.models.base import Model, ModelOptions

EXECUTORS = ("local", "ray")


def open_model(
    spec: str,
    options: ModelOptions,
    *,
    executor: str = "local",
    concurrency: int = 8,
    ray_address: str | None = None,
    ray_workers: int | None = None,
    **ray_settings: Any,
) -> tuple[Model, int]:
    """The model to run and the runner concurrency that keeps it busy."""
    if executor == "local":
        return get_model(spec, options), concurrency
    if executor == "ray":
        if ray_workers is not None and (isinstance(ray_workers, bool) or not isinstance(ray_workers, int) or ray_workers < 1):
            raise UserError(f"--ray-workers must be a whole number at least 1; got {ray_workers!r}.")
        from genderprobe.engine.executors.ray_pool import RayPool

        pool = RayPool(spec, options, workers=ray_workers, address=ray_address,
                       concurrency=concurrency, **ray_settings)
        return pool, pool.runner_concurrency
    raise UserError(f"Unknown executor '{executor}'; use one of: {', '.join(EXECUTORS)}.")
