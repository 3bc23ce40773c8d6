"""genderprobe's version, in one place: results and reports record it."""

__version__ = "0.2.0"
