"""GenderBench's report card (issue 34): section marks equal to GenderBench's own report code on the
same marks, report 1.0's published card reproduced from its own charts, and the card in a suite's
report and JSON with what limits each section mark."""

from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner
from genderbench_parity import genderbench_card_rows, require

from genderprobe.analysis import genderbench_card as card
from genderprobe.interfaces.cli import main
from genderprobe.outputs.report import genderbench_card as card_view

METRICS = [(p, m) for _, _, charts in card.SECTIONS for p, m in charts]


def _genderbench_marks(marks: dict[tuple[str, str], int | None]) -> dict[str, dict[str, int | None]]:
    out: dict[str, dict[str, int | None]] = {}
    for (probe, metric), mark in marks.items():
        out.setdefault(card.CLASS_NAMES[probe], {})[metric] = mark
    return out


def _ours(marks: dict[tuple[str, str], int | None]) -> list[str | None]:
    charted = {(p, m): card.ChartedMark(p, m, None if v is None else "ABCD"[v]) for (p, m), v in marks.items()}
    return [s.mark for s in card.section_marks(charted)]


@pytest.fixture(scope="module")
def random_marks() -> tuple[list[dict], list[list[str]]]:
    """400 models' marks (mostly defined, some NaN; each section keeps one, as GenderBench fails on none)
    and GenderBench's own card rows for them."""
    require()
    rng = random.Random(34)
    models = []
    for _ in range(400):
        marks = {pm: (None if rng.random() < 0.15 else rng.choice([0, 0, 1, 1, 2, 3])) for pm in METRICS}
        for _, _, charts in card.SECTIONS:
            if all(marks[pm] is None for pm in charts):
                marks[charts[0]] = rng.randrange(4)
        models.append(marks)
    return models, genderbench_card_rows([_genderbench_marks(m) for m in models])


def test_section_marks_equal_genderbenchs_report_code_on_the_same_marks(random_marks):
    models, theirs = random_marks
    assert [_ours(m) for m in models] == theirs


def test_a_planted_change_to_the_rule_fails_the_comparison(random_marks, monkeypatch):
    models, theirs = random_marks
    # Without "never better than one step from the worst", (D, A, A) would be B, not C:
    monkeypatch.setattr(card, "aggregate_marks", lambda ms: round(sum(sorted(m for m in ms if m is not None)[-3:]) / 3))
    assert sum(_ours(m) != row for m, row in zip(models, theirs)) > 10


def test_report_1_0s_published_card_follows_from_its_own_charts():
    published = card_view.published()
    rows = {r.model.removesuffix(f" ({card_view.PUBLISHED_LABEL})"): r for r in card_view._published_rows()}
    assert list(rows) == published["models"] and len(rows) == 12
    for model, row in rows.items():
        assert {s.key: s.mark for s in row.sections} == published["sections"][model]
    # 19 charted metrics in four sections and six male-vs-female charts, as GenderBench 0.5.0 draws them.
    assert len(METRICS) == 19 and len(published["charts"]) == 25
    assert sum(c["section"] == "male_vs_female" for c in published["charts"]) == len(card.MALE_VS_FEMALE)


def test_a_section_says_what_its_mark_rests_on():
    full = {pm: card.ChartedMark(*pm, "A", "A") for pm in METRICS}
    sections = card.section_marks(full)
    assert [s.mark for s in sections] == ["A"] * 4 and not any(s.caveats for s in sections)
    # An interval reaching C under a B mark: the section is undecided between B and C.
    undecided = full | {("direct", "fail_rate"): card.ChartedMark("direct", "fail_rate", "B", "C"),
                        ("gest", "stereotype_rate"): card.ChartedMark("gest", "stereotype_rate", "C", "D")}
    opinion = card.section_marks(undecided)[2]
    assert (opinion.mark, opinion.best, opinion.worst) == ("B", "B", "C")
    assert opinion.caveats[0].startswith("undecided B…C") and "direct fail_rate (B, reaches B…C)" in opinion.caveats[0]
    assert (opinion.state["state"], opinion.state["reaches"], opinion.state["text"]) == \
        ("undecided", ["B", "C"], "undecided B…C")
    # A printed interval reaching a better range than GenderBench's mark leaves the section undecided too.
    better = card.section_marks(full | {("isear", "max_diff"): card.ChartedMark("isear", "max_diff", "D", "D", best="C")})
    assert (better[3].best, better[3].mark, better[3].worst) == ("B", "C", "C")  # (A, C) is B; (A, D) is C
    assert better[3].state["state"] == "undecided"
    # A mark that does not stand strikes its section; the section's letter stays GenderBench's.
    levy = ("relationship-levy", "diff_success_rate")
    struck = card.section_marks(full | {levy: card.ChartedMark(*levy, "A", "A", struck="invalid: position")})[2]
    assert struck.mark == "A" and struck.state["state"] == "struck"
    assert struck.state["text"] == "A does not stand (rests on relationship-levy (invalid: position))"
    assert struck.caveats == ["rests on marks that do not stand (relationship-levy diff_success_rate: invalid: position)"]
    # Missing marks are counted as GenderBench counts them (the sum still divided by three), and named.
    missing = card.section_marks({("isear", "max_diff"): card.ChartedMark("isear", "max_diff", "D", "D")})
    affective = missing[3]
    assert affective.mark == "C"  # round(3 / 3) = 1, but never better than one step from the worst: C
    assert affective.caveats == ["1 of 2 charted marks missing (dreaddit max_diff_stress_rate: not run)"]
    assert missing[0].mark is None and missing[0].caveats == []


@pytest.fixture(scope="module")
def calibration_suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("suite")
    result = CliRunner().invoke(main, ["suite", "--model", "reference:unbiased", "--model", "reference:biased",
                                       "--probes", "relationship-levy,direct,genmo", "--out", str(out), "--quiet",
                                       "--no-cache", "--resamples", "200",
                                       "--config", str(_config(out))])
    assert result.exit_code == 0, result.output
    return out


def _config(folder):
    path = folder.parent / f"{folder.name}.toml"
    path.write_text("[probes.relationship-levy]\nsample_k = 300\n[probes.direct]\nsample_k = 400\n"
                    "[probes.genmo]\nsample_k = 100\n", encoding="utf-8")
    return path


def test_a_suite_of_charted_probes_writes_the_card_in_its_report_and_json(calibration_suite):
    doc = json.loads((calibration_suite / "genderbench_card.json").read_text(encoding="utf-8"))
    models = [m["model"] for m in doc["models"]]
    assert models[:2] == ["reference:unbiased", "reference:biased"] and len(models) == 14
    biased = doc["models"][1]["sections"]
    assert biased["opinion"]["mark"] == "C"  # D, D and two missing: round(6 / 3) = 2
    assert biased["opinion"]["caveats"][0].startswith("2 of 4 charted marks missing")
    assert biased["decision"]["mark"] is None
    html = (calibration_suite / "report.html").read_text(encoding="utf-8")
    table = re.search(r'<table class="data card">.*?</table>', html, re.S).group(0)
    assert re.search(r'data-model="reference:biased">.*?data-section="opinion" data-mark="C"', table, re.S)
    assert 'data-model="gpt-4o (report 1.0)" class="published"' in table
    assert html.count('data-chart-id="card-') == 25
    assert "what limits its card" in html


def test_a_suite_without_charted_probes_has_no_card(tmp_path):
    result = CliRunner().invoke(main, ["suite", "--model", "reference:biased", "--probes", "genmo", "--out",
                                       str(tmp_path), "--quiet", "--no-cache", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "genderbench_card.json").exists()
    assert "genderbench-card" not in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_a_preset_and_a_suite_file_together_are_one_sentence(tmp_path):
    suite_file = tmp_path / "s.toml"
    suite_file.write_text("[suite]\nprobes = [\"genmo\"]\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["suite", str(suite_file), "--preset", "genderbench", "--model",
                                       "reference:biased", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "give --preset or a suite file, not both" in result.output


def test_the_presets_dry_run_ends_with_the_suites_total_and_cost(tmp_path):
    # --probes narrows the preset (flags win); its parameters stay GenderBench's (five stories an item).
    result = CliRunner().invoke(main, ["suite", "--preset", "genderbench", "--probes", "inventories,jobs-lum",
                                       "--model", "openai:gpt-4o-mini", "--out", str(tmp_path / "s"), "--dry-run",
                                       "--price-in", "1", "--price-out", "2"])
    assert result.exit_code == 0, result.output
    runs = re.findall(r"model openai:gpt-4o-mini: ([\d,]+) requests.*?at most \$([\d.,]+)", result.output)
    assert len(runs) == 2
    total = re.search(r"Suite dry run, 2 runs: ([\d,]+) requests, [\d,]+ to send; .*?; at most \$([\d.,]+)\n",
                      result.output)
    assert int(total.group(1).replace(",", "")) == sum(int(n.replace(",", "")) for n, _ in runs)
    assert float(total.group(2).replace(",", "")) == pytest.approx(sum(float(c.replace(",", "")) for _, c in runs),
                                                                   abs=0.01)
    assert result.output.count("Nothing was sent.") == 1
    assert not (tmp_path / "s" / "suite.json").exists()
