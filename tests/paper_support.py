"""What the run's row of a GenderBench report table holds in the metric's column (genderprobe.outputs.paper_tables)."""

from __future__ import annotations

from typing import Any

from genderprobe.analysis import validity
from genderprobe.outputs.paper_tables import too_few_text


def run_cell(estimate: dict[str, Any]) -> Any:
    """The value (GenderBench's interval is in the table's own columns), or, on too few answers, the value
    saying so with no interval."""
    return too_few_text(estimate) if validity.too_few(estimate) else estimate["value"]
