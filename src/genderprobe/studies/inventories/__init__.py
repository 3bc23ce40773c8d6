"""Inventories (GenderBench 0.5.0): asked to write a character who "is ambitious" or "is gentle", does the
model make the character a man or a woman, and does that follow the trait's stereotype?

dataset: GenderBench's gender inventories (BSRI, EPAQ, Gaucher et al., Nicolas et al., Wan et al.), read as
GenderBench reads them, also for BusinessVocabulary; probe: the probe, GenderBench's metrics and marks.
"""
