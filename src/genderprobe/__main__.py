"""``python -m genderprobe`` is the ``genderprobe`` command."""

from genderprobe.cli import main

main()
