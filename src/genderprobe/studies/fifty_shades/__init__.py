"""Fifty Shades of Bias (Hada et al. 2023): graded ratings of gender bias.

probe: the fifty-shades probe (can a model rate bias as people do?); judge:
the graded-bias judge behind it and ``genderprobe judge``; score_reader: the
score in a judge's answer; metrics: agreement with the human scores;
generation: the dataset generation pipeline (``genderprobe fifty-shades
generate``); bws: Best-Worst Scaling (``genderprobe bws``); commands: those
subcommands; dataset: sentences, annotations, scores, seeds and examples.
"""
