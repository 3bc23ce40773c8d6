"""The analysis: numbers from answers, and how far they can be trusted.

Bootstrap intervals, exact tests and marks (``stats``), tests of each
breakdown's groups, statistics comparing two runs, lost answers by group,
rate tests, seeded sampling, planning a run's size, confidence sequences for
``--until-decided``, equivalence within a margin, the validity guards and the
``--fail-on-mark`` gate.

It works on numbers and results documents only: it may import the contract,
the registry and the base; never the engine, the outputs or the interfaces.
"""
