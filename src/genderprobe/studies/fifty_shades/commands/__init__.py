"""The Fifty Shades subcommands: ``genderprobe bws``, ``genderprobe judge`` and
``genderprobe fifty-shades generate``."""

from genderprobe.studies.fifty_shades.commands import bws, generate, judge

COMMANDS = [*bws.COMMANDS, *judge.COMMANDS, *generate.COMMANDS]
