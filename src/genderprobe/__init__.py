"""genderprobe: measure gender bias in large language models.

The Python API mirrors the command line. ``run_probe`` returns a ``RunOutput``
whose ``result`` holds the metrics, each an ``Estimate`` (value and 95%
confidence interval); docs/python-api.md describes every field.

>>> from genderprobe import run_probe
>>> out = run_probe("relationship-levy", "reference:biased", sample_k=50)
>>> out.result.metrics["diff_success_rate"].value
1.0
>>> out.document["model"]
'reference:biased'

Your own generator is a function from a list of prompts to a list of texts.
Its name keys its answers in the response store, so a rerun asks it nothing:

>>> def always_a(prompts):
...     return ["(a)" for _ in prompts]
>>> out = run_probe("relationship-levy", generate=always_a, sample_k=50)
>>> out.document["model"]
'function:always_a'
>>> out.result.metrics["position_bias_a_rate"].value
1.0
>>> run_probe("relationship-levy", generate=always_a, sample_k=50).document["run"]["cached"]
100

``run_probe`` works inside a notebook as is; async code can ``await arun_probe(...)``.
"""

from typing import Any

from genderprobe import moved
from genderprobe.version import __version__

moved.install()

__all__ = ["RunConfig", "RunOutput", "__version__", "arun_probe", "run_probe"]


def __getattr__(name: str) -> Any:
    # The API is imported on first use: the command line's --help needs none of it.
    if name in ("run_probe", "arun_probe", "RunConfig", "RunOutput"):
        from genderprobe.interfaces import api

        return getattr(api, name)
    raise AttributeError(f"module 'genderprobe' has no attribute {name!r}")
