"""The run's cheaper paths give what the plain ones give: %-filled prompts are str.format's text, and
the loss profiles counted by bincount are np.unique's rows and counts, in its order."""

import numpy as np
import pytest

from genderprobe.studies.relationship_levy.answer_counts import _profile_counts
from genderprobe.studies.relationship_levy.dataset import (
    DEFAULT_TEMPLATE,
    compile_prompt,
    percent_prompt,
    study_scenarios,
)

# A template with a literal %, escaped braces that look like the names' fields, and the names swapped.
AWKWARD = "{scenario}\n100% sure? {{0}} {{name_1}} (a) {name_2} or (b) {name_1}, {name_2}"


@pytest.mark.parametrize("template", [DEFAULT_TEMPLATE, AWKWARD])
def test_percent_prompts_are_the_formatted_prompts_of_every_scenario(template):
    names = ("Ana%s", "B{0}ob")
    for scenario in study_scenarios():
        fmt = compile_prompt(scenario, template)
        filled, pick = percent_prompt(fmt)
        assert filled % pick(names) == fmt.format(*names)
        assert filled % pick(names[::-1]) == fmt.format(*names[::-1])


@pytest.mark.parametrize("reps", [1, 2, 5, 40])  # 40: past the counting table's size, the sort itself
def test_profile_counts_are_uniques_rows_and_counts(reps):
    rows = np.random.default_rng(reps).integers(0, reps + 1, (3000, 4))
    found, times = np.unique(rows, axis=0, return_counts=True)
    assert _profile_counts(rows, reps + 1) == list(zip(map(tuple, found.tolist()), times.tolist()))
