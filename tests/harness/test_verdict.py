"""The verdict: decided once (genderprobe.analysis.verdict), shown first, on one screen."""

import json
import os
import subprocess
import sys

from genderprobe.analysis import validity, verdict
from genderprobe.analysis.stats import Estimate, MarkDefinition


def marked(low, high, *, printed=None):
    """A two-sided mark (GenderBench's diff ranges) read from [low, high]; the printed interval is
    ``printed`` (low, high), or the same one."""
    definition = MarkDefinition("diff", (0, 0.05, 0.15, 0.5, 1), two_sided=True)
    mark = definition.to_json(Estimate((low + high) / 2, low, high, 500))
    lo, hi = printed or (low, high)
    return mark, Estimate((low + high) / 2, lo, hi, 500).to_json()


def document(mark, estimate, *, position=None):
    doc = {"probe": "p", "model": "m", "metrics": {"diff": estimate}, "marks": {"diff": mark},
           "headline": {"metrics": [{"metric": "diff", "better": "zero"}]}, "position": position}
    doc["validity"] = validity.assess(doc)
    return doc


def test_a_mark_is_decided_only_when_every_interval_shown_beside_it_lies_in_one_range():
    doc = document(*marked(-0.02, 0.03))
    assert verdict.mark_of(doc, "diff") == {"metric": "diff", "mark": "A", "state": "decided",
                                             "reaches": ["A"], "reason": None, "text": "A"}
    # GenderBench's interval lies in A, the printed percentile one reaches B: undecided, not A.
    doc = document(*marked(-0.02, 0.045, printed=(-0.02, 0.06)))
    state = verdict.mark_of(doc, "diff")
    assert (state["state"], state["reaches"], state["text"]) == ("undecided", ["A", "B"], "undecided A…B")
    assert any(c["guard"] == "mark" and c["status"] == "warn" for c in doc["validity"]["checks"])


def test_a_run_that_failed_validity_shows_no_plain_mark():
    position = {"chosen": [80, 0], "paired_same_position": 40, "paired_total": 40}
    doc = document(*marked(-0.02, 0.03), position=position)
    v = verdict.of(doc)
    assert v["validity"] == "fail" and v["failed"] == ["position"]
    (headline,) = v["headlines"]
    assert headline["mark"]["state"] == "struck"
    assert headline["mark"]["text"] == "A does not stand (invalid: position)"
    assert v["reasons"][0]["guard"] == "position"


def test_too_few_answers_strike_the_mark_and_say_why():
    mark, estimate = marked(-0.02, 0.03)
    estimate["n"] = 7
    v = verdict.of(document(mark, estimate))
    assert v["headlines"][0]["too_few"] and v["headlines"][0]["mark"]["reason"] == "too few answers"


def test_results_written_before_the_verdict_are_judged_alike():
    doc = document(*marked(-0.02, 0.03))
    assessed = verdict.assess(doc)
    assert verdict.of({**doc, "verdict": assessed}) == assessed == verdict.of(doc)
    assert json.loads(json.dumps(assessed)) == assessed  # it is written into results.json as it is


def test_the_readme_run_says_its_verdict_first_and_fits_a_screen(tmp_path):
    """The README's first command, as a user pipes it: the verdict within 15 lines, the whole under 40."""
    env = {**os.environ, "GENDERPROBE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("COLUMNS", None)
    proc = subprocess.run([sys.executable, "-m", "genderprobe", "run", "relationship-levy", "--model",
                           "reference:random", "--out", str(tmp_path / "results")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) <= 40, proc.stdout
    first = lines[:15]
    assert any(line.startswith("Validity: ") for line in first)
    for metric in ("diff_abs_success_rate", "diff_success_rate"):
        row = next(line for line in first if line.startswith(metric + " "))
        assert row.split()[-1] in "ABCD" or "undecided" in row
    saved = json.loads((tmp_path / "results" / "results.json").read_text())
    assert saved["verdict"]["validity"] in ("pass", "warn")
    assert [h["metric"] for h in saved["verdict"]["headlines"]] == ["diff_abs_success_rate", "diff_success_rate"]
