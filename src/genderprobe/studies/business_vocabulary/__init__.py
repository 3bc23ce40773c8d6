"""BusinessVocabulary (GenderBench 0.5.0): do the reference letters, motivational letters and performance
evaluations a model writes for men and for women use stereotypically male and female words differently?

dataset: the templates, Bloomberg's names (from hiring_bloomberg's data) and the six word lists (the gender
inventories from the inventories study's data, GEST's stereotypes from the direct study's data);
probe: the probe, GenderBench's evaluator, metrics and mark.
"""
