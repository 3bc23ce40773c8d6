"""Every genderprobe probe as an inspect_ai task (``pip install 'genderprobe[inspect]'``).

    inspect eval genderprobe/relationship_levy --model openai/gpt-4o-mini -T sample_k=300

The task runs the probe's own ``run()``; inspect answers its requests, one
round of samples per ``ask`` (see :mod:`.driver`), so the metrics are those
``genderprobe run`` computes from the same answers. See docs/inspect.md.
"""

from genderprobe.interfaces.inspect_tasks.tasks import TASKS, probe_task

__all__ = ["TASKS", "probe_task"]
