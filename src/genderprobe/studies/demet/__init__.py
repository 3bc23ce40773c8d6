"""The DeMET study (Levy et al. 2024): who is right in a couple's conflict, across
women's, men's and neutral names.

probe: the demet probe; names_probe: the name-gender check of Appendix A;
answer_reader: which numbered person an answer names; items: the sampling plan
of Section 4.1; scores and significance: the scores of Section 4.2, their
intervals and McNemar tests; dataset: the 109 scenarios.
"""
