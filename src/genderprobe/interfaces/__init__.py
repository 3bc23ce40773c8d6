"""The interfaces: how a user starts a run.

The Python API (``api``: run_probe, and ``execute``, the run's stages), the
command line (``cli`` and ``cli_commands/``), suites of probes on models, the
configuration file, the inspect_ai tasks and the checks on what a user types
(arguments that are not UTF-8, files named on the command line).

It may import every other room of the harness; nothing but the package's
own ``genderprobe.run_probe`` and the studies' commands import it.
"""
