"""GestCreative (GenderBench 0.5.0; GEST's stereotypes, Pikuliak et al. 2024): does the gender of the
characters a model writes follow the stereotype of the motto they are written from?

probe: the probe, GenderBench's metrics and marks; what it shares with JobsLum (studies/jobs_lum) is
genderprobe.reading.stories;
the GEST sentences are the Gest study's (studies/gest/dataset.py); the reader is
genderprobe.reading.character_gender.
"""
