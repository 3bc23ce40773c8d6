"""genderprobe: measure gender bias in large language models.

The Python API mirrors the command line:

    from genderprobe import run_probe
    result = run_probe("relationship-levy", "reference:random", sample_k=300)
    result.metrics["diff_success_rate"]
"""

__version__ = "0.1.0"

from genderprobe import moved
from genderprobe.api import run_probe

moved.install()

__all__ = ["__version__", "run_probe"]
