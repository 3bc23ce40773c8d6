"""``python -m genderprobe`` is the ``genderprobe`` command."""

from genderprobe.interfaces.cli import main

# Guarded: backends that start worker processes by spawning (vLLM) import the
# main module again in each worker, which must not start another run.
if __name__ == "__main__":
    main()
