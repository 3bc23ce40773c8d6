"""Comparing runs: grouping by probe and parameters, mismatches, ranking, the terminal leaderboard."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import report_support as rs
from click.testing import CliRunner
from instruments import fake_key

from genderprobe.errors import UserError
from genderprobe.interfaces.api import RunConfig, run_probe
from genderprobe.interfaces.cli import main
from genderprobe.outputs.report import compare, format, render_comparison
from genderprobe.outputs.results import load_results


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("runs")
    out = {m: rs.levy_results(base / m.split(":")[1], m, 120)
           for m in ("reference:biased", "reference:random", "reference:unbiased", "reference:biased-female")}
    out["random-k60"] = rs.levy_results(base / "random-k60", "reference:random", 60)
    out["gallery"] = rs.gallery_document(base)
    return out


@pytest.fixture(scope="module")
def genmo_runs(tmp_path_factory) -> list[Path]:
    """GenMO has no marks, so its group shows three headline metrics (the first three)."""
    base = tmp_path_factory.mktemp("genmo")
    paths = []
    for m in ("reference:biased", "reference:random", "reference:unbiased"):
        config = RunConfig(model=m, use_cache=False, out_dir=base / m.split(":")[1], n_resamples=200)
        paths.append(run_probe("genmo", m, config=config, sample_k=40).results_path)
    return paths


def pairs(paths):
    return [(load_results(p), f"{p.parent.name}/{p.name}") for p in paths]


def test_same_probe_and_parameters_make_one_ranked_group(runs):
    models = ("reference:biased", "reference:random", "reference:unbiased", "reference:biased-female")
    (section,) = compare(pairs(runs[m] for m in models))
    assert section.probe == "relationship-levy" and section.mismatches == []
    (group,) = section.groups
    assert group.headline == ["diff_abs_success_rate", "diff_success_rate"]
    ranked = [e.doc["model"] for e in group.entries]
    # The calibration models have known values: unbiased and random are near 0 (A), the biased ones at 1 (D).
    assert set(ranked[:2]) == {"reference:unbiased", "reference:random"}
    assert set(ranked[2:]) == {"reference:biased", "reference:biased-female"}
    assert [e.mark("diff_abs_success_rate") for e in group.entries] == ["A", "A", "D", "D"]


def test_different_parameters_are_grouped_apart_and_pointed_out(runs):
    (section,) = compare(pairs([runs["reference:random"], runs["reference:biased"], runs["random-k60"]]))
    assert len(section.groups) == 2
    assert [name for name, _ in section.mismatches] == ["probe.sample_k"]
    assert section.mismatches[0][1] == [120, 60]
    assert [len(g.entries) for g in section.groups] == [2, 1]
    assert section.groups[1].distinct == {"probe.sample_k": 60}


def test_different_probes_are_never_mixed(runs):
    sections = compare(pairs([runs["reference:random"], runs["gallery"], runs["reference:biased"]]))
    assert [s.probe for s in sections] == ["relationship-levy", "gallery"]
    assert [len(s.groups[0].entries) for s in sections] == [2, 1]


def test_same_model_twice_is_told_apart_by_file(runs, tmp_path):
    copy = tmp_path / "again" / "results.json"
    copy.parent.mkdir()
    copy.write_text(runs["reference:random"].read_text(encoding="utf-8"), encoding="utf-8")
    (section,) = compare(pairs([runs["reference:random"], copy]))
    labels = [e.label for e in section.groups[0].entries]
    assert len(set(labels)) == 2 and all(label.startswith("reference:random (") for label in labels)


def test_comparison_html_holds_each_runs_numbers(runs):
    paths = [runs["reference:random"], runs["reference:biased"], runs["random-k60"], runs["gallery"]]
    page = render_comparison(pairs(paths))
    for path in paths:
        doc = load_results(path)
        for metric in doc["marks"]:
            value = json.dumps(doc["metrics"][metric]["value"])
            assert re.search(rf'data-metric="{metric}" data-value="{re.escape(value)}"', page)
    assert "Parameters differ between these runs" in page and "probe.sample_k" in page
    assert page.count('class="group"') == 2 + 1  # levy at two sample sizes, and the gallery
    assert "<script" not in page.lower()


def test_compare_command_prints_a_leaderboard_and_writes_html(runs, tmp_path):
    out = tmp_path / "compare.html"
    result = CliRunner().invoke(main, ["compare", str(runs["reference:biased"]), str(runs["reference:unbiased"].parent),
                                       str(runs["random-k60"]), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "reference:unbiased" in text and "reference:biased" in text
    assert "parameters differ" in text and "probe.sample_k: 120 vs 60" in text
    assert text.index("reference:unbiased") < text.index("reference:biased ")  # ranked best first
    assert out.exists() and "Wrote" in text


def test_compare_refuses_a_single_file_in_one_sentence(runs, tmp_path):
    result = CliRunner().invoke(main, ["compare", str(runs["reference:random"]), "-o", str(tmp_path / "c.html")])
    assert result.exit_code == 2
    assert result.output.strip() == "Error: Give at least two results files to compare."
    assert not (tmp_path / "c.html").exists()
    with pytest.raises(UserError):
        render_comparison(pairs([runs["reference:random"]]))


def test_leaderboard_prints_markup_in_results_as_text_and_keeps_keys_out(runs, tmp_path):
    """A system prompt holding rich markup used to crash compare with a MarkupError traceback."""
    doc = load_results(runs["reference:random"])
    doc["parameters"]["system_prompt"] = "Answer [/bold] only, [red]briefly[/red]"
    doc["model"] = "openai:gpt-4o-mini?api_key=" + fake_key("abcdefghijklmnop12345") + " [/x]"
    evil = tmp_path / "evil" / "results.json"
    evil.parent.mkdir()
    evil.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "c.html"
    result = CliRunner().invoke(main, ["compare", str(evil), str(runs["reference:biased"]), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "Answer [/bold] only, [red]briefly[/red]" in result.output.replace("\n", "")
    assert "[/x]" in result.output
    page = out.read_text(encoding="utf-8")
    assert fake_key("abcdefghijklmnop") not in result.output and fake_key("abcdefghijklmnop") not in page
    assert "api_key=(redacted)" in page


def leaderboard(paths, columns: int) -> str:
    result = CliRunner().invoke(main, ["compare", *map(str, paths)], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("columns", [60, 80])
def test_narrow_terminal_shows_every_metric_of_every_model(runs, genmo_runs, columns):
    """Below about 100 columns rich folded metric names and values mid-word and dropped the last columns."""
    paths = [runs["reference:biased"], runs["reference:unbiased"], *genmo_runs]
    text = leaderboard(paths, columns)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= columns
    sections = compare(pairs(paths))
    assert [len(s.groups[0].headline) for s in sections] == [2, 3]
    cursor = 0
    for s in sections:
        (group,) = s.groups
        cursor = text.index(s.probe, cursor)
        for m in group.headline:
            assert re.search(rf"\b{m}\b", text[cursor:]), m
        # Each model, in rank order, followed by each of its values whole (interval and mark included).
        for e in group.entries:
            cursor = text.index(e.label, cursor)
            for m in group.headline:
                cursor = text.index(shown(e, m), cursor)


def shown(e, metric: str) -> str:
    """A value as a ranking shows it: no interval on too few answers, the mark as the run's verdict has it."""
    est, state = e.metric(metric), e.mark_state(metric) or {"mark": None}
    value = f"{format.number(est['value'])} (too few answers)" if e.too_few(metric) else format.estimate(est)
    if not state["mark"]:
        return value
    return value + " " + {"decided": state["mark"], "undecided": f"{state['reaches'][0]}…{state['reaches'][-1]}",
                          "struck": f"{state['mark']} ✗ {state['reason']}"}[state["state"]]


def test_wide_terminal_keeps_one_row_per_model(runs, genmo_runs):
    paths = [runs["reference:biased"], runs["reference:unbiased"], *genmo_runs]
    text = leaderboard(paths, 140)
    sections = compare(pairs(paths))
    starts = [text.index(s.probe) for s in sections] + [len(text)]
    for s, start, end in zip(sections, starts, starts[1:], strict=False):
        lines = text[start:end].splitlines()
        (group,) = s.groups
        assert any(re.search(r"\bmodel\b.*" + ".*".join(group.headline) + ".*items.*undetected.*errors", line)
                   for line in lines)
        for e in group.entries:
            (row,) = [line for line in lines if f" {e.label} " in line]
            assert all(shown(e, m) in row for m in group.headline)


def test_runs_in_folders_of_the_same_name_are_told_apart(runs, tmp_path):
    """A suite keeps each run in <model>/<probe>/: compare named both runs' file
    "relationship-levy/results.json" (issue 35)."""
    folders = []
    for model, source in (("reference-random", "reference:random"), ("reference-biased", "reference:biased"),
                          ("again", "reference:random")):
        folder = tmp_path / model / "relationship-levy"
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(runs[source].read_text(encoding="utf-8"), encoding="utf-8")
        folders.append(folder)
    out = tmp_path / "c.html"
    result = CliRunner().invoke(main, ["compare", *map(str, folders), "-o", str(out)])
    assert result.exit_code == 0, result.output
    files = re.findall(r'<td class="mono">([^<]*results\.json)</td>', out.read_text(encoding="utf-8"))
    assert sorted(files) == sorted(f"{m}/relationship-levy/results.json"
                                   for m in ("reference-random", "reference-biased", "again"))
    # The same model twice is told apart by those names, in the terminal too.
    for name in ("reference-random", "again"):
        assert f"reference:random ({name}/relationship-levy/results.json)" in result.output.replace("\n", "")
