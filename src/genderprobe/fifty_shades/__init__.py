"""Fifty Shades of Bias (Hada et al. 2023): the graded-bias judge and the generation pipeline.

The probe is :mod:`genderprobe.probes.fifty_shades`; Best-Worst Scaling, a general
annotation method, is :mod:`genderprobe.bws`."""
