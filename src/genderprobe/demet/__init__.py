"""The DeMET study (Levy et al. 2024): answer reading, item sampling, scores.

The probes themselves are :mod:`genderprobe.probes.demet` and :mod:`genderprobe.probes.demet_names`."""
