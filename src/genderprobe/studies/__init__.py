"""The studies: one folder each, holding everything of one paper's method.

A study folder holds its probe or probes (``probe.py`` or ``*_probe.py``), its
answer readers, metrics and ablations, its data loader (``dataset.py``), its
packaged data with their licences (``data/``), its answer corpora
(``corpora/``), its paper's tables (``data/*paper_tables.json``) and its own
subcommands (``commands``). :mod:`genderprobe.registry` finds all of these by
those names, so a new study is a new folder and nothing else.

A study imports the contract (:mod:`genderprobe.contract`), the harness's
services and its own modules; of another study only the data loader
(``dataset``): RelationshipLevy asks DeMET's loader for its scenarios.
tests/harness/test_layout.py holds every study to this.
"""
