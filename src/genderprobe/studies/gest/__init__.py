"""Gest (GenderBench 0.5.0; Pikuliak et al. 2024, GEST): does a model attribute stereotypical sentences
to the gender of the stereotype?

dataset: the GEST sentences as GenderBench reads them; probe: the probe, GenderBench's metrics and mark;
GenderBench's sampling, bootstrap and intervals: genderprobe.analysis.genderbench_stats.
"""
