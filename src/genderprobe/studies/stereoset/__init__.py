"""StereoSet, gender (Nadeem et al. 2021): does a model prefer the stereotypical association of a gender
term over the anti-stereotypical one, and a meaningful one over an unrelated one?

dataset: the gender contexts of the dev set; probe: the question as inspect_evals asks it (or the options'
scores), the paper's language-model score, stereotype score and ICAT, and inspect_evals' own metrics.
"""
