"""Typed loaders over the packaged data files (``genderprobe/data``).

Messy labels are normalised once, here, so probes see clean values. One module
per dataset family; shared file access lives in :mod:`genderprobe.datasets.files`.
"""
