"""What a notebook shows of a run and a suite: a short repr, an HTML summary from the verdict, a progress bar."""

from __future__ import annotations

import copy
import re

import pytest

from genderprobe import RunConfig, RunOutput, run_probe
from genderprobe.interfaces import suite
from genderprobe.outputs.notebook import LIMIT
from genderprobe.outputs.notebook_progress import NotebookProgress

PROBE = "relationship-levy"
STRUCK = "<s>A</s> does not stand (invalid: position)"


def plain_mark(letter: str) -> str:
    """How the HTML shows a decided mark (coloured, bold): a struck one must never look like it."""
    return re.compile(rf"<b style=\"color:#[0-9a-f]{{6}}\">{letter}</b>")


# -- without a kernel -------------------------------------------------------------------


def test_a_position_only_run_shows_its_marks_struck_with_the_reason():
    out = run_probe(PROBE, "reference:first-option", sample_k=60)
    text, page = repr(out), out._repr_html_()
    assert len(text) < LIMIT
    assert text.splitlines()[:2] == ["RunOutput: relationship-levy on reference:first-option",
                                     "NOT MEANINGFUL: these numbers do not measure what they say (position)."]
    assert "diff_abs_success_rate  0.000 [0.000, 0.000]  A does not stand (invalid: position)" in text
    assert "Validity: FAIL, these numbers do not measure what they say." in text
    assert "✗ position: The model chose the same position in both orders for 60 of 60 items" in text
    assert "Answers: 120 used, 0 lost of 120 (0%)." in text
    assert "120 records in .records" in text
    assert page.count(STRUCK) == 2 and not plain_mark("A").search(page)
    assert "Validity: FAIL</b>, these numbers do not measure what they say." in page
    assert "<b>position</b>: The model chose the same position" in page
    assert "NOT MEANINGFUL" in page and "Answers: 120 used, 0 lost of 120 (0%)." in page


def test_a_large_run_has_a_short_repr_and_names_its_files(tmp_path):
    out = run_probe(PROBE, "reference:random", sample_k=3000, config=RunConfig(out_dir=tmp_path / "run"))
    text, page = repr(out), out._repr_html_()
    assert len(text) < LIMIT < len(repr(out.document))
    assert "Validity: PASS, every validity check passed." in text and "Answers: 6,000 used, 0 lost" in text
    assert f"Files: results {tmp_path / 'run' / 'results.json'}; records {tmp_path / 'run' / 'records.jsonl'}" in text
    for h in out.document["verdict"]["headlines"]:
        assert h["mark"]["state"] == "decided"
        assert re.search(rf"{h['metric']} +\S+ \[\S+, \S+\]  {h['mark']['mark']}$", text, re.M), text
        assert plain_mark(h["mark"]["mark"]).search(page)
    assert f"<code>{tmp_path / 'run' / 'results.json'}</code>" in page


def test_undecided_and_too_few_marks_read_as_the_verdict_has_them():
    undecided = run_probe(PROBE, "reference:random", sample_k=30)
    assert [h["mark"]["text"] for h in undecided.document["verdict"]["headlines"]] == ["undecided A…C"] * 2
    assert repr(undecided).count("  undecided A…C") == 2
    assert undecided._repr_html_().count("undecided <b style=\"color:#2e7d32\">A</b>…"
                                         "<b style=\"color:#ef6c00\">C</b>") == 2
    few = run_probe(PROBE, "reference:random", sample_k=10)
    assert repr(few).count("(too few answers: n = 10)  A does not stand (too few answers)") == 2
    assert few._repr_html_().count("<s>A</s> does not stand (too few answers)") == 2


def test_the_repr_stays_short_whatever_the_verdict_holds():
    out = run_probe(PROBE, "reference:first-option", sample_k=20)
    doc = copy.deepcopy(out.document)
    v = doc["verdict"]
    v["headlines"] = v["headlines"] * 500
    v["reasons"] = [dict(r, message=r["message"] * 50) for r in v["reasons"]] * 20
    text = repr(RunOutput(result=out.result, document=doc))
    assert len(text) < LIMIT and text.endswith("more lines left out")
    assert max(len(line) for line in text.splitlines()) <= 240


def test_what_comes_from_a_model_spec_or_a_results_file_is_escaped():
    name = "function:<img src=x onerror=alert(1)>"
    out = run_probe(PROBE, generate=lambda prompts: ["(a)"] * len(prompts), model=name, sample_k=5)
    doc = copy.deepcopy(out.document)
    doc["verdict"]["reasons"].append({"guard": "<i>guard</i>", "status": "warn", "message": "<script>x()</script>"})
    page = RunOutput(result=out.result, document=doc)._repr_html_()
    assert "<img" not in page and "<script" not in page and "<i>" not in page
    assert "function:&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;script&gt;x()&lt;/script&gt;" in page


def test_a_dry_run_shows_its_count():
    out = run_probe(PROBE, "reference:random", sample_k=50, config=RunConfig(dry_run=True))
    assert repr(out).startswith("RunOutput of a dry run:\nDry run: relationship-levy on reference:random\n")
    assert "100 requests" in repr(out) and "100 requests" in out._repr_html_()


def test_a_suite_shows_each_runs_verdict(tmp_path):
    s = suite.plan(["reference:first-option", "reference:biased"], [PROBE], {PROBE: {"sample_k": 40}},
                   RunConfig(), tmp_path / "suite")
    assert repr(s).startswith(f"Suite in {tmp_path / 'suite'}: 2 models × 1 probe, 2 runs: 2 pending\n")
    suite.run(s)
    text, page = repr(s), s._repr_html_()
    assert len(text) < LIMIT
    assert "2 runs: 2 done" in text and "Report: not written yet" in text
    assert "relationship-levy on reference:first-option: done, NOT MEANINGFUL (position)" in text
    assert "A does not stand (invalid: position)" in text and "    diff_abs_success_rate  1.000 [1.000, 1.000]  D\n" in text
    first, biased = page.split("<tr><td>relationship-levy</td>")[1:]
    assert first.count(STRUCK) == 2 and not plain_mark("A").search(first)
    assert plain_mark("D").search(biased) and "<s>" not in biased


def test_the_notebook_progress_is_a_bar():
    progress = NotebookProgress()
    assert '<progress max="1" ' in progress.html("requests")  # no total yet: an indeterminate bar
    progress.expect(10)
    progress.advance(4, cached=1, errors=1)
    page = progress.html(progress.line())
    assert '<progress value="4" max="10"' in page
    assert re.search(r"<code>requests 4/10 \(40%\)  cached 1  errors 1  retries 0  [\d.,]+ req/s  "
                     r"elapsed \d+ s  ETA [^<]+</code>", page), page


# -- in a real kernel, through nbclient ---------------------------------------------------


def test_a_notebook_shows_a_progress_bar_and_the_runs_verdict(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed: pip install -e '.[dev]'")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed: pip install -e '.[dev]'")
    cells = [
        "import os\n"
        f"os.environ['GENDERPROBE_CACHE_DIR'] = {str(tmp_path)!r}\n"
        "from genderprobe import run_probe",
        "out = run_probe('relationship-levy', 'reference:first-option', sample_k=60)\nout",
        "big = run_probe('relationship-levy', 'reference:random', sample_k=3000)\nbig",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(notebook, timeout=180, kernel_name="python3").execute()
    small, big = notebook.cells[1].outputs, notebook.cells[2].outputs

    bars = [o["data"]["text/html"] for o in small if o["output_type"] == "display_data"]
    assert len(bars) == 1 and '<progress value="120" max="120"' in bars[0], small
    assert "requests 120/120 (100%)  cached " in bars[0] and "ETA" in bars[0]
    result = next(o for o in small if o["output_type"] == "execute_result")["data"]
    assert result["text/html"].count(STRUCK) == 2 and not plain_mark("A").search(result["text/html"])
    assert "Validity: FAIL</b>" in result["text/html"] and "<b>position</b>: The model chose" in result["text/html"]
    assert len(result["text/plain"]) < LIMIT and "A does not stand (invalid: position)" in result["text/plain"]

    shown = next(o for o in big if o["output_type"] == "execute_result")["data"]["text/plain"]
    assert len(shown) < LIMIT and "Answers: 6,000 used, 0 lost of 6,000 (0%)." in shown
    assert any('<progress value="6000" max="6000"' in o["data"]["text/html"]
               for o in big if o["output_type"] == "display_data")
