"""Helpers of the Zhao et al. 2024 multilingual probes.

prompts: the three prompts per language; answers: chosen-word and pronoun
parsing; script: which language a text is written in; disparity: disparate
impact with stratified bootstrap intervals; topics: the labeller/checker judge
loop; calibration: what the reference personas answer.
"""
