"""The GenMO study (Bajaj et al. 2024): stance prompts and parsing, metrics, ablations.

The probe itself is :mod:`genderprobe.probes.genmo`."""
