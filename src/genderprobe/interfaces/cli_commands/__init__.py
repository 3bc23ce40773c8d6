"""Commands besides ``run``: each module here exposes ``COMMANDS``, a list of
click commands or groups added to ``genderprobe`` (report, compare, cache, paper).
A study's own commands live in its folder (see genderprobe.registry)."""
