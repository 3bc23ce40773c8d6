"""WinoBias (Zhao et al. 2018): does a model resolve a pronoun to an occupation by the occupation's
gender stereotype?

dataset: the test split's four parts (type 1 and type 2, pro- and anti-stereotypical) as twin pairs;
probe: the question asked of a chat model, accuracy per part and the pro-anti gap.
"""
