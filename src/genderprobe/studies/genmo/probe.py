"""GenMO (Bajaj et al. 2024): is the same action judged differently for a man and a woman?

Faithful to the paper: each parallel story pair is asked with a Table 7
template placed after each story (CoT by default, the paper's main results
and the headline; non-CoT or both on request), at temperature 0 with at most 500 tokens
and a fixed seed; stances are parsed strictly; PM, PMR, FBR, MBR and PMR per
environment follow Section 4. Beyond it: bootstrap intervals over pairs, a
sign test of FBR against 0.5, undetected stances counted and listed, the
Section 5 ablations (robustness to names and paraphrase, temperature), and a
null baseline (``--null-baseline``: each renamable story asked again with another
name of the same gender, its flip rate beside PMR). Data hygiene: pair 562
(identical stories) is left out unless asked for, and the loader's repairs
are recorded in the results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from genderprobe import charts
from genderprobe.analysis.losses import LossReport, loss_report
from genderprobe.analysis.sampling import permute
from genderprobe.analysis.stats import Estimate, bootstrap_ratio
from genderprobe.contract import (
    Headline,
    PositionEvidence,
    Probe,
    ProbeResult,
    RunContext,
    Table,
    count_in_range,
    option,
    response_fields,
)
from genderprobe.errors import UserError
from genderprobe.models.base import GenerationParams, Request, Response
from genderprobe.studies.genmo.ablation import (
    PARAPHRASED_TEMPLATES,
    VARIANT_LABELS,
    VARIANTS,
    name_pool,
    rename_main_character,
)
from genderprobe.studies.genmo.dataset import (
    ENVIRONMENTS,
    N_PAIRS,
    SOURCES,
    StoryPair,
    repairs,
    story_pairs,
)
from genderprobe.studies.genmo.metrics import GenmoSummary, pair_outcomes, stance_kept, summarise
from genderprobe.studies.genmo.refusals import is_refusal, judge_reading
from genderprobe.studies.genmo.stance import (
    CODE_NAMES,
    ERROR,
    IMMORAL,
    LETTERS,
    MORAL,
    TEMPLATE_LABELS,
    TEMPLATES,
    UNDETECTED,
    parse_stance,
    prompt_for,
    stance_answer,
)

GENDERS = ("male", "female")
TEMPLATE_CHOICES = ("cot", "noncot", "both")
ENVIRONMENT_LABELS = ("normalised", "exact")
# The paper sets a seed but does not publish it; ours is fixed and documented.
GENERATION_SEED = 2024
_EVIDENCE_PER_KIND = 5  # mismatched pairs per direction and template


def metric_prefix(template: str) -> str:
    """A metric name says its template: "pm" is always CoT (the paper's main Table 2),
    "noncot_pm" always non-CoT (Table 8), whichever templates the run asked."""
    return "" if template == "cot" else f"{template}_"


def _headline(prefix: str) -> tuple[Headline, ...]:
    return (
        Headline(f"{prefix}pmr", "lower", "PMR: share of pairs whose two stories got different stances (RQ1)"),
        Headline(f"{prefix}fbr_minus_half", "zero",
                 "FBR - 0.5: share of mismatches favouring the woman, less the balanced half (RQ2)"),
        Headline(f"{prefix}pm", "lower", "PM: number of pairs with different stances (RQ1)"),
    )
_MAX_UNDETECTED_EVIDENCE = 1000
# Fields of a record that count what an answer cost, kept out of the evidence.
_ACCOUNTING = frozenset(("cached", "prompt_tokens", "completion_tokens"))


def _as_tuple(value: Any) -> tuple:
    """Accept "a,b" as well as ("a", "b"), a lone value, or None from the Python API."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (int, float)):
        return (value,)
    return tuple(value)


@dataclass
class GenmoParams:
    sample_k: int | None = option(None, "Number of story pairs; fewer than all draws a seeded subset. "
                                  "Default: all (907, or 908 with --include-identical-pairs).")
    template: str = option("cot", "Evaluation template of Table 7: cot (the paper's main results), noncot, "
                           "or both side by side.", choices=TEMPLATE_CHOICES)
    ablation: tuple[str, ...] = option((), "Robustness ablations of Table 4: names, paraphrase, both.")
    ablation_k: int = option(100, "Stories per gender in the robustness sample.")
    temperatures: tuple[float, ...] = option((), "Temperatures of the Table 5 ablation, e.g. 0,0.2,0.5,0.8,1.")
    environment_labels: str = option(
        "normalised", "Environment grouping: normalised (every spelling mapped, as the paper's Table 2) or "
        "exact (only exactly spelled labels, as its Tables 1 and 8).", choices=ENVIRONMENT_LABELS)
    include_identical_pairs: bool = option(
        False, "Also ask pair 562, whose male and female stories are the same text (left out by default; "
        "the paper counted it among its 908).")
    null_baseline: bool | None = option(
        None, "Also ask both stories of every pair whose main character can be renamed again with another name "
        "of the same gender, and report how often the stance changes favourability with no gender change (the "
        "null flip rate) beside PMR (beyond the paper; about 260 pairs).")

    def __post_init__(self) -> None:
        self.null_baseline = self.null_baseline or None  # off is None, as in runs from before the option
        if self.sample_k is not None:
            count_in_range(self.sample_k, 1, N_PAIRS, "sample_k (--sample-k)")
        count_in_range(self.ablation_k, 1, N_PAIRS, "ablation_k (--ablation-k)")
        if self.template not in TEMPLATE_CHOICES:
            raise UserError(f"Unknown template '{self.template}'; use cot, noncot or both.")
        if self.environment_labels not in ENVIRONMENT_LABELS:
            raise UserError(f"Unknown environment grouping '{self.environment_labels}'; use normalised or exact.")
        self.ablation = _as_tuple(self.ablation)
        for name in self.ablation:
            if name not in VARIANTS:
                raise UserError(f"Unknown ablation '{name}'; use names, paraphrase or both (comma-separated).")
        if len(set(self.ablation)) != len(self.ablation):
            raise UserError("Each ablation may be named once in --ablation.")
        try:
            self.temperatures = tuple(float(t) for t in _as_tuple(self.temperatures))
        except (TypeError, ValueError):
            raise UserError("--temperatures takes comma-separated numbers such as 0,0.2,0.5,0.8,1.") from None
        for t in self.temperatures:
            if not 0 <= t <= 2:
                raise UserError(f"Temperature {t} is outside 0 to 2; give values such as 0,0.2,0.5,0.8,1.")
        if len(set(self.temperatures)) != len(self.temperatures):
            raise UserError("Each temperature may be named once in --temperatures.")


@dataclass(frozen=True)
class _Story:
    """One prompt to send: which pair, which gender, what text."""

    position: int  # in the run's selection of pairs
    pair: StoryPair
    gender: str
    story: str


@dataclass
class _RunState:
    """What every round of a run adds to: answer tallies and undetected evidence."""

    attempts: int = 0
    undetected: int = 0  # refusals included: no stance was read
    refusals: int = 0
    errors: int = 0
    evidence: dict[str, list[dict[str, Any]]] | None = None

    def __post_init__(self) -> None:
        self.evidence = {"female_favoured": [], "male_favoured": [], "undetected": [], "error": []}


@dataclass
class _Answers:
    """Stance codes of one round, aligned with its stories, and which unread answers refused."""

    codes: np.ndarray
    responses: list[Response]
    refused: np.ndarray


class Genmo(Probe):
    """Does a model judge the same action differently when the main character is a man or a woman?

    Each GenMO story pair is asked twice (male and female main character) with a
    template of Bajaj et al. 2024, Table 7; a pair is a prediction mismatch when
    its two stances differ in favourability (Moral > Both, Can't say > Immoral).
    """

    name = "genmo"
    summary = "Are moral judgements of the same action different for men and women? (GenMO, Bajaj et al. 2024)"
    Params = GenmoParams
    default_generation = GenerationParams(temperature=0.0, max_tokens=500, seed=GENERATION_SEED)
    supports_reader_judge = True
    # The paper's main results (Table 2) use the CoT template.
    headline = _headline("")
    # null_baseline only adds a view too; it is left out so that results saved before it
    # keep their headline section (compare splits runs on it).
    view_parameters = ("ablation", "ablation_k", "temperatures", "environment_labels")
    paper_tables = ("genmo/paper_tables.json",)

    def __init__(self, params: GenmoParams | None = None, **kwargs: Any):
        super().__init__(params, **kwargs)
        # The pairs a run may ask: pair 562 (identical stories) only on request.
        self.all_pairs = tuple(p for p in story_pairs() if self.params.include_identical_pairs or not p.identical)
        if self.params.sample_k is not None and self.params.sample_k > len(self.all_pairs):
            raise UserError(
                f"sample_k (--sample-k) is {self.params.sample_k} but only {len(self.all_pairs)} pairs can be "
                "asked; pair 562 (identical stories) is left out unless you add --include-identical-pairs."
            )
        self._pools = {g: name_pool(g) for g in GENDERS}

    # -- items ----------------------------------------------------------------

    def selected_pairs(self, seed: int) -> tuple[StoryPair, ...]:
        """The run's pairs in dataset order: all, or a seeded subset of sample_k (the first sample_k of
        :meth:`drawn_pairs`, so a larger sample extends a smaller one)."""
        k, n = self.params.sample_k, len(self.all_pairs)
        if k is None or k == n:
            return self.all_pairs
        chosen = np.sort(permute(np.arange(k), n, seed, stream=0))
        return tuple(self.all_pairs[i] for i in chosen.tolist())

    def drawn_pairs(self, seed: int) -> tuple[StoryPair, ...]:
        """Every pair in the order the seeded permutation draws them: a sample of k is the first k
        (--until-decided reads its pairs in this order, a round's new pairs after the old)."""
        n = len(self.all_pairs)
        return tuple(self.all_pairs[i] for i in permute(np.arange(n), n, seed, stream=0).tolist())

    def headlines(self) -> list[Headline]:
        """CoT's metrics for cot and both (the paper's main template), non-CoT's for noncot."""
        return list(_headline(metric_prefix(self.main_templates()[-1])))

    def main_templates(self) -> tuple[str, ...]:
        """Templates of the main run, the primary (reported unprefixed) last."""
        return ("noncot", "cot") if self.params.template == "both" else (self.params.template,)

    # -- asking ---------------------------------------------------------------

    def _ask(self, ctx: RunContext, state: _RunState, stories: list[_Story], template: str,
             template_text: str, gen: GenerationParams, variant: str) -> _Answers:
        system = (("system", ctx.system_prompt),) if ctx.system_prompt else ()
        # The stance letters, in the template's order: what the reader judge names and
        # reference:first-option answers (options are no part of the cache key).
        options = tuple(LETTERS)
        requests = [
            Request(system + (("user", prompt_for(s.story, template_text)),), gen,
                    options=options, oracle=_oracle(s, template))
            for s in stories
        ]
        responses = ctx.ask(requests)
        read, judged = responses, {}
        if ctx.reader_judge:
            read, judged = ctx.reader_judge.read(requests, responses, lambda _, text: judge_reading(text))
        codes = np.array(
            [parse_stance(r.text) if r.ok else ERROR for r in read], dtype=np.int8
        )
        refused = np.array([code == UNDETECTED and is_refusal(r.text) for r, code in zip(read, codes.tolist())],
                           dtype=bool)
        for i, (s, req, resp, code, refusal) in enumerate(zip(stories, requests, responses, codes.tolist(),
                                                             refused.tolist())):
            record = _record(s, req, resp, code, template, variant, refusal)
            if i in judged:
                record["reader_judge"] = judged[i]
            ctx.records.write(record)
            kind = "undetected" if code == UNDETECTED else "error" if code == ERROR else None
            if kind and len(state.evidence[kind]) < _MAX_UNDETECTED_EVIDENCE:
                # The record less its accounting: why an answer went unread (an error, a reasoning
                # model's thinking, a "length" finish) stays; tokens and the store's flag do not.
                sample = {k: v for k, v in record.items() if k not in _ACCOUNTING}
                state.evidence[kind].append({**sample, "code": CODE_NAMES[code]})
        state.attempts += len(stories)
        state.undetected += int((codes == UNDETECTED).sum())
        state.refusals += int(refused.sum())
        state.errors += int((codes == ERROR).sum())
        return _Answers(codes, responses, refused)

    def _ask_pairs(self, ctx: RunContext, state: _RunState, pairs: tuple[StoryPair, ...], template: str,
                   gen: GenerationParams, variant: str) -> tuple[np.ndarray, np.ndarray, list[_Story], _Answers]:
        """(male codes, female codes, stories, answers) of every pair."""
        stories = [_Story(i, p, g, p.story(g)) for i, p in enumerate(pairs) for g in GENDERS]
        answers = self._ask(ctx, state, stories, template, TEMPLATES[template], gen, variant)
        grid = answers.codes.reshape(len(pairs), 2)
        return grid[:, 0], grid[:, 1], stories, answers

    # -- run ------------------------------------------------------------------

    def run(self, ctx: RunContext) -> ProbeResult:
        pairs = self.selected_pairs(ctx.seed)
        groups = self._groups(pairs)
        ids = np.array([p.index for p in pairs])
        boot = dict(n_resamples=ctx.n_resamples, seed=ctx.seed)
        summaries: dict[str, GenmoSummary] = {}
        main_codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        losses: dict[str, LossReport] = {}
        state = _RunState()
        # Drawn before any request so an impossible sample costs nothing.
        samples = {g: self._robustness_sample(pairs, g, ctx.seed) for g in GENDERS} if self.params.ablation else {}
        for template in self.main_templates():
            male, female, stories, answers = self._ask_pairs(
                ctx, state, pairs, template, ctx.generation, "original")
            main_codes[template] = (male, female)
            summaries[template] = summarise(male, female, groups, ids, **boot)
            losses[template] = _losses(stories, answers)
            _collect_mismatch_evidence(state.evidence, template, pairs, stories, answers)
        primary = self.main_templates()[-1]

        robustness = (self._robustness(ctx, state, pairs, samples, primary, main_codes[primary], boot)
                      if samples else {})
        by_temperature = self._temperatures(ctx, state, pairs, primary, main_codes[primary], groups, ids, boot)
        result = self._result(summaries, losses, primary, robustness, by_temperature, ctx.generation.temperature,
                              state, pairs)
        if self.params.null_baseline:
            self._null(ctx, state, pairs, primary, main_codes[primary], result, boot)
        result.position = stance_positions(*main_codes[primary])
        return result

    def _null(self, ctx: RunContext, state: _RunState, pairs: tuple[StoryPair, ...], template: str,
              original: tuple[np.ndarray, np.ndarray], result: ProbeResult, boot: dict) -> None:
        """Each story of a renamable pair asked again with its main character renamed within its gender
        (the names ablation's draw): the share whose favourability changes is the null flip rate."""
        renamed = []
        for pos, pair in enumerate(pairs):
            names = [rename_main_character(pair, g, self._pools[g], ctx.seed) for g in GENDERS]
            if all(names):
                renamed += [_Story(pos, pair, g, n.story) for g, n in zip(GENDERS, names)]
        answers = self._ask(ctx, state, renamed, template, TEMPLATES[template], ctx.generation, "null")
        positions = np.array([s.position for s in renamed[::2]], np.int64)
        before = np.stack([original[0][positions], original[1][positions]], 1)
        after = answers.codes.reshape(-1, 2)
        flips = pair_outcomes(before.ravel(), after.ravel())  # (story, renamed story): same gender
        flipped = flips.mismatch.reshape(-1, 2).astype(float)
        read = flips.detected.reshape(-1, 2).astype(float)
        p = metric_prefix(template)
        m = result.metrics
        m[f"{p}null_pmr"] = bootstrap_ratio(flipped.sum(1), read.sum(1), **boot)
        for g, gender in enumerate(GENDERS):
            m[f"{p}null_pmr_{gender}"] = bootstrap_ratio(flipped[:, g], read[:, g], **boot)
        gender_swap = pair_outcomes(*original)
        det = gender_swap.detected[positions]
        m[f"{p}pmr_null_pairs"] = bootstrap_ratio(gender_swap.mismatch[positions][det].astype(float), **boot)
        result.counts.update({"null_pairs": int(positions.size), "null_attempts": len(renamed),
                              "null_undetected": int((answers.codes == UNDETECTED).sum()),
                              "null_errors": int((answers.codes == ERROR).sum())})
        result.tables.insert(0, Table(
            f"Headline beside its null ({TEMPLATE_LABELS[template]})",
            ["metric", "headline [95% CI]", "null [95% CI]"],
            [["PMR, all pairs", m[f"{p}pmr"], None],
             [f"PMR, the {positions.size} pairs the null renames", m[f"{p}pmr_null_pairs"], m[f"{p}null_pmr"]],
             ["null: male stories", None, m[f"{p}null_pmr_male"]],
             ["null: female stories", None, m[f"{p}null_pmr_female"]]],
            note="The null asks each story of a pair whose main character can be renamed again with another name "
                 "of the same gender (the names ablation's draw), and counts the stories whose stance changes "
                 "favourability, as PMR counts pairs: no gender changes, so PMR at or below it is not told apart "
                 "from how often the model changes its mind anyway. First-person and unnamed stories cannot be "
                 "renamed; compare the null with PMR on the same pairs. Beyond the paper (--null-baseline).",
        ))

    def _groups(self, pairs: tuple[StoryPair, ...]) -> dict[str, tuple[np.ndarray, tuple[str, ...]]]:
        exact = self.params.environment_labels == "exact"
        env = np.array([ENVIRONMENTS.index(p.environment_exact if exact else p.environment) for p in pairs])
        source = np.array([SOURCES.index(p.source) for p in pairs])
        return {"environment": (env, ENVIRONMENTS), "source": (source, SOURCES)}

    def _robustness(self, ctx: RunContext, state: _RunState, pairs: tuple[StoryPair, ...],
                    samples: dict[str, list[tuple[int, str]]], template: str,
                    original: tuple[np.ndarray, np.ndarray], boot: dict) -> dict[str, dict[str, Any]]:
        """Table 4: share of sampled stories whose stance survives each variation."""
        out: dict[str, dict[str, Any]] = {}
        for variant in self.params.ablation:
            text = PARAPHRASED_TEMPLATES[template] if variant in ("paraphrase", "both") else TEMPLATES[template]
            row: dict[str, Any] = {}
            for gi, gender in enumerate(GENDERS):
                renames = variant in ("names", "both")
                stories = [_Story(pos, pairs[pos], gender, renamed if renames else pairs[pos].story(gender))
                           for pos, renamed in samples[gender]]
                answers = self._ask(ctx, state, stories, template, text, ctx.generation, variant)
                before = original[gi][[s.position for s in stories]]
                row[gender] = stance_kept(before, answers.codes, **boot)
            out[variant] = row
        return out

    def _robustness_sample(self, pairs: tuple[StoryPair, ...], gender: str, seed: int) -> list[tuple[int, str]]:
        """(position, renamed story) of a seeded sample of stories that name their main character."""
        eligible = []
        for pos, pair in enumerate(pairs):
            renamed = rename_main_character(pair, gender, self._pools[gender], seed)
            if renamed is not None:
                eligible.append((pos, renamed.story))
        k = self.params.ablation_k
        if k > len(eligible):
            raise UserError(
                f"The robustness ablation needs {k} {gender} stories naming their main character but the run's "
                f"pairs hold {len(eligible)}; lower --ablation-k or raise --sample-k."
            )
        stream = 1 if gender == "male" else 2
        chosen = np.sort(permute(np.arange(k), len(eligible), seed, stream=stream))
        return [eligible[i] for i in chosen.tolist()]

    def _temperatures(self, ctx: RunContext, state: _RunState, pairs: tuple[StoryPair, ...], template: str,
                      original: tuple[np.ndarray, np.ndarray], groups: dict, ids: np.ndarray,
                      boot: dict) -> dict[float, GenmoSummary]:
        """Table 5: the main run repeated at each temperature (the main one reused)."""
        out = {}
        for t in self.params.temperatures:
            if ctx.generation.temperature is not None and t == ctx.generation.temperature:
                male, female = original
            else:
                gen = ctx.generation.replace(temperature=t)
                male, female, _, _ = self._ask_pairs(ctx, state, pairs, template, gen, f"temperature {t:g}")
            out[t] = summarise(male, female, groups, ids, **boot)
        return out

    # -- results --------------------------------------------------------------

    def _result(self, summaries: dict[str, GenmoSummary], losses: dict[str, LossReport], primary: str,
                robustness: dict,
                by_temperature: dict[float, GenmoSummary], main_temperature: float | None, state: _RunState,
                pairs: tuple[StoryPair, ...]) -> ProbeResult:
        main = summaries[primary]
        metrics: dict[str, Estimate] = {}
        for template, s in summaries.items():
            metrics.update(s.metrics(metric_prefix(template)))
            metrics.update({f"{metric_prefix(template)}{k}": v for k, v in losses[template].metrics().items()})
        p = metric_prefix(primary)
        for variant, row in robustness.items():
            for gender in GENDERS:
                metrics[f"{p}stance_kept_{variant}_{gender}"] = row[gender]
        for t, s in by_temperature.items():
            metrics[f"{p}pm_t{t:g}"] = Estimate(float(s.pm), n=s.pairs_detected)
            metrics[f"{p}pmr_t{t:g}"] = s.pmr
            metrics[f"{p}fbr_t{t:g}"] = s.fbr
        mean = _temperature_mean(by_temperature, main_temperature)
        metrics.update({f"{p}{k}": v for k, v in mean.items()})

        tables = [_paper_table(summaries, self._data_note())]
        if len(summaries) == 2:
            tables.append(_table3(summaries))
        tables.append(_undetected_table(summaries))
        for template, report in losses.items():
            table = report.table()
            table.title += f" ({TEMPLATE_LABELS[template]})"
            tables.append(table)
        tables.append(Table(
            f"PMR by source ({TEMPLATE_LABELS[primary]})", ["source", "PMR [95% CI]", "pairs read"],
            [[g, e, e.n] for g, e in main.by_group["source"].items()]))
        if robustness:
            tables.append(_table4(robustness))
        if by_temperature:
            tables.append(_table5(by_temperature, primary, mean))

        counts = {
            "pairs": main.pairs,
            "pairs_in_dataset": N_PAIRS,
            "pairs_left_out_of_data": N_PAIRS - len(self.all_pairs),
            "pairs_detected": main.pairs_detected,
            "mismatches": main.pm,
            "attempts": state.attempts,
            "undetected": state.undetected,
            "refusals": state.refusals,
            "errors": state.errors,
        }
        extra = {
            "primary_template": primary,
            "templates": {t: TEMPLATES[t] for t in summaries},
            "pairs_left_out": {t: s.left_out for t, s in summaries.items()},
            "fbr_sign_test_p": {t: s.fbr_sign_test_p for t, s in summaries.items()},
            "environment_labels": self.params.environment_labels,
            "pair_indices": [p.index for p in pairs] if len(pairs) < len(self.all_pairs) else "all",
            "data_changes": self._data_changes(pairs),
            "losses_by_template": {t: r.to_json() for t, r in losses.items()},
        }
        if robustness:
            extra["paraphrased_template"] = PARAPHRASED_TEMPLATES[primary]
        return ProbeResult(
            metrics=metrics,
            breakdowns={dim: rows for dim, rows in main.by_group.items()},
            tables=tables,
            charts=_charts(summaries, robustness, by_temperature),
            evidence=state.evidence,
            counts=counts,
            extra=extra,
            losses=losses[primary].to_json(),
        )


    def _data_changes(self, pairs: tuple[StoryPair, ...]) -> dict[str, list[dict[str, Any]]]:
        """What the loader and the probe changed in the released data, for this run's pairs."""
        asked = {p.index for p in pairs}
        kept = {p.index for p in self.all_pairs}
        return {
            "left_out": [{"pair": p.index, "reason": "its male and female stories are identical"}
                         for p in story_pairs() if p.index not in kept],
            "repaired": [r.to_json() for r in repairs() if r.pair in asked],
        }

    def _data_note(self) -> str:
        left = N_PAIRS - len(self.all_pairs)
        if not left:
            return ""
        return (f" {len(self.all_pairs)} of the {N_PAIRS} released pairs can be asked: pair 562 (identical "
                "stories) is left out (--include-identical-pairs asks it); see extra.data_changes.")


def _temperature_mean(by_temperature: dict[float, GenmoSummary], main_temperature: float | None) -> dict[str, Estimate]:
    """PM, PMR and FBR averaged over the runs at temperatures other than the main
    run's (the paper compares temperature 0 with the average of its 4 other runs).
    Point values only: the runs ask the same pairs, so they are not independent."""
    runs = [s for t, s in by_temperature.items() if t != main_temperature]
    if not runs:
        return {}
    pmrs = [s.pmr.value for s in runs if s.pmr.value is not None]
    fbrs = [s.fbr.value for s in runs if s.fbr.value is not None]
    return {
        "pm_temperature_mean": Estimate(float(np.mean([s.pm for s in runs])), n=len(runs)),
        "pmr_temperature_mean": Estimate(float(np.mean(pmrs)) if pmrs else None, n=len(pmrs)),
        "fbr_temperature_mean": Estimate(float(np.mean(fbrs)) if fbrs else None, n=len(fbrs)),
    }


def stance_positions(male: np.ndarray, female: np.ndarray) -> PositionEvidence:
    """Read stances by their position in the template's fixed list (A. Moral first).

    Every story is asked with the options in one order, so no item is asked in both
    orders: a model answering A throughout cannot be told from one judging every
    action moral, and the validity guard says so."""
    codes = np.concatenate([male, female]).astype(np.int64)
    return PositionEvidence(chosen=np.bincount(codes[codes < len(LETTERS)], minlength=len(LETTERS)).tolist())


def _losses(stories: list[_Story], answers: _Answers) -> LossReport:
    """Unread answers by the story's gender: refusals, and the rest as undetected.

    Failed requests are left out: they say nothing about how the model treats either gender."""
    answered = answers.codes != ERROR
    kept = [s for s, ok in zip(stories, answered.tolist()) if ok]
    codes, refused = answers.codes[answered], answers.refused[answered]
    # A pair's two stories are one item asked in both genders: the test pairs them.
    return loss_report([s.gender for s in kept], {"undetected": (codes == UNDETECTED) & ~refused, "refusal": refused},
                       by="gender", order=GENDERS, items=[s.pair.index for s in kept])


def _record(s: _Story, req: Request, resp: Response, code: int, template: str, variant: str,
            refusal: bool = False) -> dict[str, Any]:
    """One answer as written to records.jsonl."""
    record: dict[str, Any] = {
        "pair": s.pair.index,
        "gender": s.gender,
        "environment": s.pair.environment,
        "source": s.pair.source,
        "template": template,
        "variant": variant,
        "temperature": req.params.temperature,
        "story": s.story,
        "prompt": req.prompt,
        "answer": resp.text,
        "stance": CODE_NAMES[code],
    }
    if refusal:
        record["refusal"] = True
    record.update(response_fields(resp))
    return record


def _oracle(story: _Story, template: str) -> dict[str, Any]:
    """What each calibration persona answers to this story.

    unbiased: one stance per pair, whatever the gender (it cycles over the four
    stances by pair so that agreement is not trivially "always Moral");
    biased: the man's action Moral, the woman's Immoral; biased-female: the
    reverse; random: any of the four.
    """
    male = story.gender == "male"
    return {
        "unbiased": stance_answer(story.pair.index % 4, template),
        "biased": stance_answer(MORAL if male else IMMORAL, template),
        "biased-female": stance_answer(IMMORAL if male else MORAL, template),
        "random": tuple(stance_answer(c, template) for c in range(4)),
    }


def _collect_mismatch_evidence(evidence: dict, template: str, pairs: tuple[StoryPair, ...],
                               stories: list[_Story], answers: _Answers) -> None:
    """A few mismatched pairs in each direction, both answers side by side; each
    template has its own quota, so the first template asked cannot fill it."""
    grid = answers.codes.reshape(len(pairs), 2)
    out = pair_outcomes(grid[:, 0], grid[:, 1])
    for kind, flags in (("female_favoured", out.female_favoured), ("male_favoured", out.male_favoured)):
        have = sum(e["template"] == template for e in evidence[kind])
        for pos in np.flatnonzero(flags)[: max(0, _EVIDENCE_PER_KIND - have)].tolist():
            m, f = 2 * pos, 2 * pos + 1
            evidence[kind].append({
                "pair": pairs[pos].index, "template": template, "environment": pairs[pos].environment,
                "prompt": stories[m].story, "answer": answers.responses[m].text,
                "code": CODE_NAMES[int(grid[pos, 0])],
                "female_prompt": stories[f].story, "female_answer": answers.responses[f].text,
                "female_code": CODE_NAMES[int(grid[pos, 1])],
            })


# -- tables and charts ----------------------------------------------------------


def _paper_table(summaries: dict[str, GenmoSummary], data_note: str = "") -> Table:
    rows = []
    for template, s in summaries.items():
        env = s.by_group["environment"]
        rows.append([TEMPLATE_LABELS[template], s.pm, s.pmr, s.fbr, s.mbr, *[env[e] for e in ENVIRONMENTS]])
    return Table(
        "GenMO RQ1-RQ3 (layout of the paper's Tables 2 and 8)",
        ["template", "PM", "PMR", "FBR", "MBR", *ENVIRONMENTS],
        rows,
        note="PMR = PM / pairs with both stances read; the environment columns are PMR within each "
             "environment (the paper prints Work, Relationship and Family); FBR sign test p-values: "
             + ", ".join(f"{TEMPLATE_LABELS[t]} {s.fbr_sign_test_p:.3g}" for t, s in summaries.items()) + "."
             + data_note,
    )


def _table3(summaries: dict[str, GenmoSummary]) -> Table:
    n, c = summaries["noncot"], summaries["cot"]
    return Table("Non-CoT vs CoT (layout of the paper's Table 3)", ["", "Non-CoT", "CoT"],
                 [["PM", n.pm, c.pm], ["PMR", n.pmr, c.pmr], ["FBR", n.fbr, c.fbr]])


def _undetected_table(summaries: dict[str, GenmoSummary]) -> Table:
    rows = [[TEMPLATE_LABELS[t], s.attempts, s.undetected, s.errors, len(s.left_out)] for t, s in summaries.items()]
    return Table("Undetected stances", ["template", "answers", "undetected", "errors", "pairs left out of PMR"],
                 rows, note="The left-out pairs are listed in extra.pairs_left_out.")


def _table4(robustness: dict[str, dict[str, Any]]) -> Table:
    rows = [[VARIANT_LABELS[v], r["male"], r["female"]] for v, r in robustness.items()]
    return Table("Robustness (layout of the paper's Table 4): share of stories keeping their stance",
                 ["Variation", "Male story", "Female story"], rows,
                 note="Over sampled stories whose stance was read both times; n in the results JSON.")


def _table5(by_temperature: dict, primary: str, mean: dict[str, Estimate]) -> Table:
    rows = [[f"{t:g}", s.pm, s.pmr, s.fbr] for t, s in by_temperature.items()]
    if mean:
        n = mean["pm_temperature_mean"].n
        rows.append([f"mean of the other temperatures ({n} run{'s' if n != 1 else ''})",
                     mean["pm_temperature_mean"].value, mean["pmr_temperature_mean"], mean["fbr_temperature_mean"]])
    return Table(f"Effect of temperature (layout of the paper's Table 5, {TEMPLATE_LABELS[primary]})",
                 ["Temperature", "PM", "PMR", "FBR"], rows)


def _charts(summaries: dict[str, GenmoSummary], robustness: dict, by_temperature: dict) -> list[dict]:
    labels = {TEMPLATE_LABELS[t]: s for t, s in summaries.items()}
    out = [
        charts.bar("fbr_mbr", "Share of mismatches favouring each gender", ["FBR (women favoured)",
                   "MBR (men favoured)"], {k: [s.fbr, s.mbr] for k, s in labels.items()},
                   y_label="share of mismatches", reference=0.5),
        charts.bar("pmr_by_environment", "Prediction mismatch rate by environment", list(ENVIRONMENTS),
                   {k: [s.by_group["environment"][e] for e in ENVIRONMENTS] for k, s in labels.items()},
                   y_label="PMR"),
    ]
    if robustness:
        out.append(charts.bar(
            "robustness", "Share of stories keeping their stance", [VARIANT_LABELS[v] for v in robustness],
            {"Male story": [r["male"] for r in robustness.values()],
             "Female story": [r["female"] for r in robustness.values()]}, y_label="share"))
    if by_temperature:
        out.append(charts.bar(
            "temperature", "Prediction mismatch rate by temperature", [f"{t:g}" for t in by_temperature],
            {"PMR": [s.pmr for s in by_temperature.values()]}, y_label="PMR"))
    return out
