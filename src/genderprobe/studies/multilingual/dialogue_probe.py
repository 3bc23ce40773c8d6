"""Dialogue topics by gender pairing in six languages (Zhao et al. 2024, Sections 3.3 and 4.4).

Per language and pairing (FF, FM, MF, MM: who speaks first, to whom), the
model writes 100 two-line dialogues at temperature 1. Dialogues in another
language are detected by script and function words and left out (Appendix
A). The judge model labels the rest with the paper's seven topics through the
labeller/checker agreement loop of Appendix E (the checker may be another
model, as in the paper); unresolved dialogues, and those whose checker
reply stayed unclear, are counted and left out. Refusals to write the
dialogue (Appendix A, Table 2) are detected, coded and reported as a rate
per pairing with a test of the difference, with the other lost dialogues
(wrong language; unlabelled: unresolved or unclear) in the results' losses.
Reasoning blocks are set aside before anything is read or labelled. Per language: topic proportions
per pairing (the paper's Figure 5 tables), a chi-square test of independence
of pairing and topic, and the largest differences between pairings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genderprobe import charts
from genderprobe.analysis.losses import LossReport, loss_report, wilson
from genderprobe.analysis.noncentral import unified_interval
from genderprobe.analysis.stats import Estimate, holm
from genderprobe.contract import (
    Headline,
    Probe,
    ProbeResult,
    RunContext,
    Table,
    count_in_range,
    option,
    response_fields,
)
from genderprobe.errors import UserError
from genderprobe.models.base import GenerationParams, Request
from genderprobe.reading.reasoning import answer_text
from genderprobe.studies.multilingual.calibration import (
    checker_oracle,
    dialogue_oracle,
    labeller_oracle,
)
from genderprobe.studies.multilingual.dataset import LANGUAGE_NAMES, LANGUAGES, check_languages
from genderprobe.studies.multilingual.prompts import PAIRINGS, dialogue_prompt
from genderprobe.studies.multilingual.refusals import is_refusal
from genderprobe.studies.multilingual.script import detect_language
from genderprobe.studies.multilingual.topics import (
    REJECTED_AGAIN,
    REPEATED,
    TOPICS,
    label_dialogues,
)

_EVIDENCE = 1000
_SAMPLES_PER_TOPIC = 2
_CALLED_OUT = 3
# Codes whose every dialogue is kept as evidence (up to _EVIDENCE): what was not labelled, and why.
_KEPT_IN_FULL = ("error", "refusal", "wrong_language", "unresolved", "unclear")
ALPHA = 0.05
# Two lines of dialogue with a preamble, in any script (CJK take a token or two a character).
DIALOGUE_MAX_TOKENS = 300
# A topic or a verdict, with the sentence or two of reasons judges add.
JUDGE_MAX_TOKENS = 200


@dataclass
class MultilingualDialogueParams:
    languages: tuple[str, ...] = option(LANGUAGES, "Languages to probe: en, fr, es, zh, ja, ko.")
    dialogues_per_pairing: int = option(100, "Dialogues per gender pairing and language (the paper: 100).",
                                        flag="--dialogues")
    max_rounds: int = option(5, "Labeller/checker rounds before a dialogue counts as unresolved.")
    judge_temperature: float = option(0.0, "Sampling temperature of the judge (labeller and checker).")
    checker_reasks: int = option(2, "Times an unclear checker reply is asked again before the dialogue counts as unclear.")
    judge_max_tokens: int = option(JUDGE_MAX_TOKENS, "Maximum tokens of each labeller and checker reply "
                                   "(raise it for a judge that reasons before it answers).")

    def __post_init__(self) -> None:
        self.languages = check_languages(self.languages)
        count_in_range(self.dialogues_per_pairing, 1, 100_000, "dialogues_per_pairing (--dialogues)")
        count_in_range(self.max_rounds, 1, 50, "max_rounds (--max-rounds)")
        count_in_range(self.checker_reasks, 0, 10, "checker_reasks (--checker-reasks)")
        count_in_range(self.judge_max_tokens, 1, 1_000_000, "judge_max_tokens (--judge-max-tokens)")
        if not isinstance(self.judge_temperature, (int, float)) or not 0 <= self.judge_temperature <= 2:
            raise UserError(f"judge_temperature must be a number from 0 to 2; got {self.judge_temperature!r}.")


@dataclass
class _Dialogue:
    language: str
    pairing: str
    repetition: int
    prompt: str
    raw: str | None = None
    text: str | None = None
    error: str | None = None
    refused: bool = False
    detected: str | None = None
    topic: int | None = None
    rounds: int = 0
    unclear: bool = False
    judge_error: str | None = None
    stopped: str | None = None  # why the judges' loop ended early (topics.REPEATED, topics.REJECTED_AGAIN)
    # The dialogue's answer fields (contract.response_fields) less its error, which is in error.
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def wrong_language(self) -> bool:
        return self.text is not None and self.detected is not None and self.detected != self.language

    @property
    def to_label(self) -> bool:
        """A dialogue in the asked language: the judge labels its topic."""
        return self.text is not None and not self.refused and not self.wrong_language


class MultilingualDialogue(Probe):
    """What do women and men talk about in dialogues a model writes, in six languages?"""
    size_parameter = "dialogues_per_pairing"

    name = "multilingual-dialogue"
    summary = "Topics of model-written dialogues per gender pairing in six languages, judge-labelled (Zhao et al. 2024)"
    Params = MultilingualDialogueParams
    default_generation = GenerationParams(temperature=1.0, max_tokens=DIALOGUE_MAX_TOKENS)
    needs_judge = True
    paper_tables = ("multilingual/paper_tables.json",)
    # The paper's finding is Figure 5: topic shares depend on the gender pairing, per language.
    # It prints no statistic. Runs are ranked by the strength of that dependence, Cramer's V of
    # the pairing x topic table (0: topics independent of the pairing, 1: the pairing decides the
    # topic), not by the test's p-value, which shrinks with the number of dialogues.
    headline = tuple(
        Headline(f"topic_association_v_{lang}", "lower",
                 f"{LANGUAGE_NAMES[lang]}: Cramer's V between gender pairing and topic (0 = independent)")
        for lang in LANGUAGES
    )
    # Every parameter changes which dialogues are written or labelled: none only adds a view.
    view_parameters = ()

    def headlines(self) -> list[Headline]:
        """Only the languages of this run."""
        asked = {f"topic_association_v_{lang}" for lang in self.params.languages}
        return [h for h in self.headline if h.metric in asked]

    def run(self, ctx: RunContext) -> ProbeResult:
        if ctx.judge is None:
            raise UserError(f"Probe '{self.name}' needs a judge model; pass --judge SPEC.")
        system = (("system", ctx.system_prompt),) if ctx.system_prompt else ()
        dialogues = [
            _Dialogue(lang, pairing, r, dialogue_prompt(lang, pairing))
            for lang in self.params.languages for pairing in PAIRINGS
            for r in range(self.params.dialogues_per_pairing)
        ]
        responses = ctx.ask([
            Request(system + (("user", d.prompt),), ctx.generation, d.repetition,
                    oracle=dialogue_oracle(d.language, d.pairing, d.repetition))
            for d in dialogues
        ])
        for d, resp in zip(dialogues, responses):
            d.raw = resp.text
            d.fields = response_fields(resp)
            answer = answer_text(resp.text) if resp.ok else ""
            if answer:
                d.text = answer  # what is read and labelled: the reasoning stays in the record only
                # A refusal is a finding of its own, whatever language it is written in.
                d.refused = is_refusal(d.text)
                d.detected = None if d.refused else detect_language(d.text)
            elif not resp.ok:
                d.error = d.fields.pop("error")
            else:
                d.error = ("no answer after the reasoning (cut off while thinking? raise --max-tokens)"
                           if resp.text and resp.text.strip() else "empty answer")
        to_label = [d for d in dialogues if d.to_label]
        judge_params = GenerationParams(temperature=float(self.params.judge_temperature),
                                        max_tokens=self.params.judge_max_tokens)
        labels = label_dialogues(
            ctx.judge, [d.text or "" for d in to_label], max_rounds=self.params.max_rounds, params=judge_params,
            labeller_oracle=labeller_oracle, checker_oracle=checker_oracle, checker=ctx.checker,
            reasks=self.params.checker_reasks,
        )
        evidence: dict[str, list[dict[str, Any]]] = {k: [] for k in _KEPT_IN_FULL}
        evidence.update({t: [] for t in TOPICS})
        turns_of = {id(d): lab.turns for d, lab in zip(to_label, labels)}
        for d, lab in zip(to_label, labels):
            d.topic, d.rounds, d.unclear, d.judge_error = lab.topic, lab.rounds, lab.unclear, lab.error
            d.stopped = lab.stopped
        for d in dialogues:
            record = self._record(d, turns_of.get(id(d), []))
            ctx.records.write(record)
            self._collect(evidence, record)
        return self._result(dialogues, evidence, ctx)

    @staticmethod
    def _code(d: _Dialogue) -> str:
        if d.text is None:
            return "error"
        if d.refused:
            return "refusal"
        if d.wrong_language:
            return "wrong_language"
        if d.topic is not None:
            return TOPICS[d.topic]
        return "unclear" if d.unclear else "unresolved"

    def _record(self, d: _Dialogue, turns: list[dict[str, Any]]) -> dict[str, Any]:
        record = {
            "language": d.language, "pairing": d.pairing, "repetition": d.repetition, "prompt": d.prompt,
            "answer": d.raw, "detected_language": d.detected, "code": self._code(d), "rounds": d.rounds,
            "judge_turns": turns,
        }
        if d.error or d.judge_error:
            record["error"] = d.error or d.judge_error
        if d.stopped:
            record["stopped"] = d.stopped
        # The tested model's answer at the top level; each judge reply's fields are nested in its
        # turn of judge_turns (labeller_fields, checker_fields: see topics.label_dialogues).
        record.update(d.fields)
        return record

    @staticmethod
    def _collect(evidence: dict, record: dict) -> None:
        code = record["code"]
        keep = {k: record[k] for k in ("language", "pairing", "answer", "code", "detected_language", "rounds")}
        limit = _EVIDENCE if code in _KEPT_IN_FULL else _SAMPLES_PER_TOPIC
        if len(evidence[code]) < limit:
            evidence[code].append(keep)

    # -- metrics ------------------------------------------------------------------

    def _result(self, dialogues: list[_Dialogue], evidence: dict, ctx: RunContext) -> ProbeResult:
        metrics: dict[str, Estimate] = {}
        breakdowns: dict[str, dict[str, Estimate]] = {}
        tables: list[Table] = []
        chart_list: list[dict[str, Any]] = []
        tests: dict[str, dict[str, Any]] = {}
        for lang in self.params.languages:
            mine = [d for d in dialogues if d.language == lang]
            metrics.update(_rates(mine, f"_{lang}"))
            table = np.zeros((len(PAIRINGS), len(TOPICS)), dtype=np.int64)
            for d in mine:
                if d.topic is not None:
                    table[PAIRINGS.index(d.pairing), d.topic] += 1
            proportions = self._proportions(table)
            breakdowns[f"topics_{lang}"] = {f"{p} {TOPICS[t]}": proportions[p][t]
                                           for p in PAIRINGS for t in range(len(TOPICS))}
            test = independence_test(table, seed=ctx.seed)
            test["largest_differences"] = largest_differences(table)
            tests[lang] = test
            metrics[f"topic_independence_p_{lang}"] = Estimate(test["p_value"], None, None, int(table.sum()))
            metrics[f"topic_association_v_{lang}"] = Estimate(test["cramers_v"], None, None, int(table.sum()))
            # Beyond the paper, named apart: V less its bias under independence, with an interval.
            metrics[f"topic_association_v_corrected_{lang}"] = Estimate(
                *(test["cramers_v_corrected"][k] for k in ("value", "ci_low", "ci_high", "n")))
        # One test per language: "the topic depends on the pairing" holds for the run after Holm's
        # correction across its languages, not at 0.05 in each.
        for test, adjusted in zip(tests.values(), holm([t["p_value"] for t in tests.values()])):
            test["p_holm"], test["significant"] = adjusted, adjusted is not None and adjusted < ALPHA
            tables.append(self._topic_table(lang, table, proportions, test))
            chart_list.append(charts.bar(
                f"topics_{lang}", f"{LANGUAGE_NAMES[lang]}: topic proportions per gender pairing",
                list(TOPICS), {p: proportions[p] for p in PAIRINGS}, y_label="share of labelled dialogues"))
        metrics.update(_rates(dialogues, ""))
        losses = self._refusals(dialogues, metrics, breakdowns)
        refusal_tests = {scope: report.tests["refusal"] for scope, report in losses.items()}
        tables.insert(0, self._summary_table(dialogues, tests))
        tables.insert(1, self._refusal_table(breakdowns, refusal_tests))
        tables.insert(2, losses["all"].table())
        answered = [d for d in dialogues if d.text is not None]
        counts = {
            "dialogues": len(dialogues),
            "answered": len(answered),
            "errors": sum(d.text is None for d in dialogues),
            "refusals": sum(d.refused for d in answered),
            "wrong_language": sum(d.wrong_language for d in answered),
            "labelled": sum(d.topic is not None for d in dialogues),
            "unresolved": sum(d.to_label and d.topic is None and not d.unclear for d in dialogues),
            "unclear": sum(d.to_label and d.unclear for d in dialogues),
            "judge_errors": sum(d.to_label and d.judge_error is not None for d in dialogues),
            "stopped_early": sum(d.stopped is not None for d in dialogues),
        }
        extra: dict[str, Any] = {"independence_tests": tests, "refusal_tests": refusal_tests}
        if counts["stopped_early"]:
            extra["warnings"] = [_stopped_warning(dialogues, self.params.max_rounds)]
        return ProbeResult(metrics=metrics, breakdowns=breakdowns, tables=tables, charts=chart_list,
                           evidence=evidence, counts=counts, extra=extra, losses=losses["all"].to_json())

    def _refusals(self, dialogues: list[_Dialogue], metrics: dict, breakdowns: dict) -> dict[str, LossReport]:
        """Lost dialogues per pairing (per language and pooled), each kind with a test that it differs.

        Of the answered dialogues: refused, written in another language, or left
        without a topic by the judge (unresolved or unclear; "undetected").
        """
        found: dict[str, LossReport] = {}
        for scope in (*self.params.languages, "all"):
            mine = [d for d in dialogues if d.text is not None and scope in ("all", d.language)]
            report = loss_report(
                [d.pairing for d in mine],
                {"refusal": [d.refused for d in mine],
                 "wrong_language": [d.wrong_language for d in mine],
                 "undetected": [d.to_label and d.topic is None for d in mine]},
                by="pairing", order=PAIRINGS, unit="dialogues",
            )
            breakdowns[f"refusals_{scope}"] = {p: report.rate("refusal", p) for p in PAIRINGS}
            found[scope] = report
        metrics.update(found["all"].metrics())
        test = found["all"].tests["refusal"]
        metrics["refusal_pairing_p"] = Estimate(test["p_value"], None, None, test["n"])
        return found

    @staticmethod
    def _refusal_table(breakdowns: dict, tests: dict[str, Any]) -> Table:
        rows = []
        for scope, test in tests.items():
            name = "all languages" if scope == "all" else LANGUAGE_NAMES[scope]
            rows.append([name, test["n"], test["events"], *breakdowns[f"refusals_{scope}"].values(),
                         test["method"] or "-", test["p_value"]])
        return Table(
            "Refusals to write the dialogue per gender pairing [95% CI] (Appendix A, Table 2)",
            ["language", "answered", "refusals", *PAIRINGS, "test", "p"], rows,
            f"Refusals are left out of the topic tables. p < {ALPHA} means the refusal rate differs between "
            "pairings (chi-square, or the exact test when an expected count is below 5); "
            "'all languages' pools the counts.",
        )

    @staticmethod
    def _proportions(table: np.ndarray) -> dict[str, list[Estimate]]:
        """Per pairing: each topic's share of its labelled dialogues (95% Wilson interval)."""
        return {pairing: [wilson(int(table[p, t]), int(table[p].sum())) for t in range(len(TOPICS))]
                for p, pairing in enumerate(PAIRINGS)}

    @staticmethod
    def _topic_table(lang: str, table: np.ndarray, proportions: dict, test: dict) -> Table:
        rows = []
        for t, topic in enumerate(TOPICS):
            shares = [proportions[p][t] for p in PAIRINGS]
            rows.append([topic, *shares, most_frequent(table[:, t], table.sum(1))])
        return Table(
            f"{LANGUAGE_NAMES[lang]}: topic proportions per pairing [95% CI]",
            ["topic", *PAIRINGS, "most frequent"], rows, _test_note(test),
        )

    def _summary_table(self, dialogues: list[_Dialogue], tests: dict) -> Table:
        rows = []
        for lang in self.params.languages:
            mine = [d for d in dialogues if d.language == lang]
            test = tests[lang]
            biggest = test["largest_differences"][0] if test["largest_differences"] else None
            rows.append([
                LANGUAGE_NAMES[lang], len(mine), sum(d.refused for d in mine), sum(d.wrong_language for d in mine),
                sum(d.to_label and d.topic is None and not d.unclear for d in mine),
                sum(d.to_label and d.unclear for d in mine),
                sum(d.topic is not None for d in mine), test["statistic"], test["dof"], test["p_value"],
                test.get("p_holm"), _difference_text(biggest) if biggest else "-",
            ])
        return Table(
            "Pairing and topic: test of independence per language",
            ["language", "dialogues", "refusals", "wrong language", "unresolved", "unclear checker replies",
             "labelled", "chi2", "dof", "p", "p (Holm over languages)", "largest difference"],
            rows, "Refusals, wrong-language, unresolved and unclear dialogues are left out. p: chi-square, or a "
                  "Monte Carlo exact test where an expected count is below 5; Holm's correction across the "
                  f"run's languages: p (Holm) < {ALPHA} means the topic depends on the pairing.",
        )


def _rates(dialogues: list[_Dialogue], suffix: str) -> dict[str, Estimate]:
    """Why dialogues were not labelled: each rate over the dialogues that reached that step.

    A share of dialogues gets a 95% Wilson interval, as the lost-answer table's shares do: a
    bootstrap of 3 unresolved dialogues out of 3 is "1.000 [1, 1]", a certainty the Wilson
    interval, [0.44, 1], does not claim."""
    answered = [d for d in dialogues if d.text is not None]
    written = [d for d in answered if not d.refused]
    judged = [d for d in written if not d.wrong_language]
    share = lambda ds, f: wilson(sum(bool(f(d)) for d in ds), len(ds))  # noqa: E731
    return {
        f"refusal_rate{suffix}": share(answered, lambda d: d.refused),
        f"wrong_language_rate{suffix}": share(written, lambda d: d.wrong_language),
        f"unresolved_rate{suffix}": share(judged, lambda d: d.topic is None and not d.unclear),
        f"unclear_rate{suffix}": share(judged, lambda d: d.unclear),
    }


def _stopped_warning(dialogues: list[_Dialogue], max_rounds: int) -> str:
    stopped = [d for d in dialogues if d.stopped]
    repeated = sum(d.stopped == REPEATED for d in stopped)
    return (f"The judges' loop stopped early for {len(stopped):,} dialogue(s), counted as unresolved: at judge "
            f"temperature 0 a further round could not change the outcome ({repeated:,}: {REPEATED}; "
            f"{len(stopped) - repeated:,}: {REJECTED_AGAIN}), so it was not paid for (max_rounds {max_rounds}). "
            "A --judge-temperature above 0 lets later rounds differ; a stronger judge may agree sooner.")


# The independence test: chi-square where every expected count is at least 5, else a Monte
# Carlo exact test (tables with the observed margins drawn at random).
_MIN_EXPECTED = 5.0
_TABLES = 9_999
_SEED = 0


def independence_test(table: np.ndarray, *, seed: int = _SEED) -> dict[str, Any]:
    """Test of independence on a pairing x topic count table (empty rows and columns dropped), with
    Cramer's V and its bias-corrected form (Bergsma 2013) with an interval.

    Pearson's chi-square where every expected count is at least 5; below that its
    chi-square approximation fails, and the p-value is a Monte Carlo exact one: the
    share of 9,999 tables drawn with the observed margins (Patefield's algorithm) whose
    statistic reaches the observed one. The corrected V's interval is the unified
    (Feldman & Cousins) interval of the statistic's noncentrality, n phi^2.
    """
    kept = table[table.sum(1) > 0][:, table.sum(0) > 0]
    if kept.shape[0] < 2 or kept.shape[1] < 2:
        # One pairing or one topic only: there is no association to test.
        return {"statistic": None, "dof": 0, "p_value": None, "n": int(table.sum()), "significant": False,
                "cramers_v": None, "method": None, "cramers_v_corrected": Estimate(None).to_json()}
    from scipy.stats import chi2_contingency  # here: scipy.stats costs most of a second to import

    result = chi2_contingency(kept, correction=False)
    n = int(kept.sum())
    statistic, p, method = float(result.statistic), float(result.pvalue), "chi-square"
    if (result.expected_freq < _MIN_EXPECTED).any():
        from scipy.stats import random_table

        drawn = random_table(kept.sum(1), kept.sum(0)).rvs(size=_TABLES, random_state=np.random.default_rng(seed))
        p = (1 + int((_chi2(drawn) >= statistic - 1e-9).sum())) / (_TABLES + 1)
        method = f"Monte Carlo exact, fixed margins ({_TABLES:,} tables): an expected count is below 5"
    v = math.sqrt(statistic / (n * (min(kept.shape) - 1)))
    return {"statistic": statistic, "dof": int(result.dof), "p_value": p, "n": int(table.sum()),
            "significant": p < ALPHA, "cramers_v": v, "method": method,
            "cramers_v_corrected": _corrected_v(kept, statistic, int(result.dof), p < ALPHA).to_json()}


def _chi2(tables: np.ndarray) -> np.ndarray:
    """Pearson's statistic of each table (last two axes), against its own margins' expected counts."""
    rows, cols = tables.sum(-1, keepdims=True), tables.sum(-2, keepdims=True)
    expected = rows * cols / tables.sum((-1, -2), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, (tables - expected) ** 2 / expected, 0.0).sum((-1, -2))


def corrected_v(tables: np.ndarray) -> np.ndarray:
    """Bergsma's (2013) bias-corrected Cramer's V of each table (last two axes): phi^2 less its
    expected value under independence, over the corrected smaller dimension less 1 (0 at the floor)."""
    r, k = tables.shape[-2:]
    n = tables.sum((-1, -2)).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi2 = np.maximum(0.0, _chi2(tables) / n - (k - 1) * (r - 1) / (n - 1))
        smaller = np.minimum(k - (k - 1) ** 2 / (n - 1), r - (r - 1) ** 2 / (n - 1)) - 1
        return np.sqrt(np.where(smaller > 0, phi2 / smaller, np.nan))


def _corrected_v(kept: np.ndarray, statistic: float, dof: int, significant: bool) -> Estimate:
    """The bias-corrected V with a 95% interval of the population's V: the noncentralities (n phi^2)
    whose unified acceptance region (Feldman & Cousins) holds the statistic, over n (min(r, c) - 1),
    square-rooted; the lower end is 0 where the test does not reject independence.

    Inverting the noncentral chi-square at its 2.5% and 97.5% points (Smithson 2003) covered
    97.7-98.6% at independence, where the lower end cannot go below 0; a percentile bootstrap of
    the corrected V covered 86-89% at a moderate association (benchmarks/coverage.py --part intervals)."""
    n = int(kept.sum())
    point = float(corrected_v(kept))
    if math.isnan(point):
        return Estimate(None, None, None, n)
    scale = n * (min(kept.shape) - 1)
    low, high = (math.sqrt(lam / scale) for lam in unified_interval(statistic, dof))
    if not significant:
        low = 0.0
    return Estimate(point, min(low, point), max(high, point), n)


def _shares(counts: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Each pairing's share (NaN for a pairing with no labelled dialogue)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, counts / np.maximum(totals, 1), np.nan)


def _tied(col: np.ndarray, value: float) -> list[str]:
    """Every pairing whose share equals ``value``: a tie has no single winner."""
    return [PAIRINGS[p] for p in range(len(col)) if not np.isnan(col[p]) and np.isclose(col[p], value)]


def most_frequent(counts: np.ndarray, totals: np.ndarray) -> str:
    """The pairing(s) with the highest share of one topic ("FF = FM" when tied; "-" when none has it)."""
    col = _shares(counts, totals)
    if np.isnan(col).all() or np.nanmax(col) == 0:
        return "-"
    return " = ".join(_tied(col, float(np.nanmax(col))))


def largest_differences(table: np.ndarray, limit: int = _CALLED_OUT) -> list[dict[str, Any]]:
    """Topics whose share differs most between two pairings, largest first (ties named together)."""
    shares = _shares(table, table.sum(1, keepdims=True))
    found = []
    for t, topic in enumerate(TOPICS):
        col = shares[:, t]
        if np.isnan(col).all():
            continue
        high, low = float(np.nanmax(col)), float(np.nanmin(col))
        diff = high - low
        if diff > 0:
            top, bottom = _tied(col, high), _tied(col, low)
            found.append({"topic": topic, "highest": " = ".join(top), "highest_pairings": top,
                          "highest_share": high, "lowest": " = ".join(bottom), "lowest_pairings": bottom,
                          "lowest_share": low, "difference": diff})
    return sorted(found, key=lambda f: -f["difference"])[:limit]


def _difference_text(d: dict[str, Any]) -> str:
    return (f"{d['topic']}: {d['highest']} {d['highest_share']:.0%} vs "
            f"{d['lowest']} {d['lowest_share']:.0%}")


def _test_note(test: dict[str, Any]) -> str:
    if test["p_value"] is None:
        return "No chi-square test: fewer than two pairings or topics have labelled dialogues."
    exact = " (Monte Carlo exact)" if (test.get("method") or "").startswith("Monte Carlo") else ""
    head = f"chi2 = {test['statistic']:.2f}, dof = {test['dof']}, p = {test['p_value']:.3g}{exact}, n = {test['n']}."
    diffs = "; ".join(_difference_text(d) for d in test["largest_differences"])
    return f"{head} Largest differences: {diffs}." if diffs else head
