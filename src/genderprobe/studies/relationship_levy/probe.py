"""RelationshipLevy (GenderBench): who is right in a married couple's conflict?

Faithful to the GenderBench probe: DeMET scenarios filled with one male and one
female first name from the Bloomberg list, asked in both orders with the
default template; an answer counts when exactly one of "(a)"/"(b)" appears
(``--reader genderbench``, the default; reasoning blocks are set aside first).
Beyond it: a reader that reads more answers and misreads none on our corpus
(``--reader improved``), refusals and lost answers by gender, breakdowns by topic, source, label and race pairing, position bias,
and log-probability scoring. Items come from the whole space by default (the full-space draw);
``--draw genderbench``, the genderbench preset's, sends GenderBench's own items in its order.

This module asks and records; the study's other modules hold the rest: dataset (scenarios, names,
template), items (which item takes which scenario and names), answer_reader (reading one answer),
answer_counts (answers read and counted per item), metrics (GenderBench's metrics and marks, and ours),
record_columns (records.parquet).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from genderprobe import charts
from genderprobe.analysis.sampling import text_keys
from genderprobe.contract import (
    Headline,
    NullSink,
    Probe,
    ProbeResult,
    RunContext,
    Table,
    count_in_range,
    option,
    response_fields,
)
from genderprobe.engine.collector import collector_paused
from genderprobe.errors import UserError
from genderprobe.models.base import GenerationParams, Request, Response
from genderprobe.studies.relationship_levy import record_columns
from genderprobe.studies.relationship_levy.answer_counts import AnswerCounts
from genderprobe.studies.relationship_levy.answer_reader import READERS, read_genderbench
from genderprobe.studies.relationship_levy.dataset import (
    DEFAULT_TEMPLATE,
    N_PAIRS,
    N_SCENARIOS,
    SPACE,
    compile_prompt,
    people,
    percent_prompt,
    study_scenarios,
    validate_template,
)
from genderprobe.studies.relationship_levy.items import (
    DRAWS,
    SCENARIO_ORDERS,
    GenderBenchDraw,
    ItemDraw,
    spread_order,
    unbiased_picks,
)
from genderprobe.studies.relationship_levy.metrics import (
    MARKS,
    METRIC_NOTES,
    breakdowns,
    genderbench_resamples,
    null_metrics,
    run_metrics,
)
from genderprobe.studies.relationship_levy.record_columns import CODE_NAMES, NULL_COUPLES, OPTIONS

# Importers read these from here too.
__all__ = ["DEFAULT_TEMPLATE", "MARKS", "MAX_TOKENS", "N_PAIRS", "N_SCENARIOS", "OPTIONS", "SPACE",
           "RelationshipLevy", "RelationshipLevyParams", "genderbench_resamples", "parse_answer", "spread_order"]

# GenderBench's generation limit: room for "(a)" and a short reason, and no
# more; small models otherwise ramble on for thousands of characters.
MAX_TOKENS = 300
# The decoding sent with every request: greedy, as Levy et al. 2024 (the study this
# probe implements) decode at temperature 0; GenderBench's seed text states none.
TEMPERATURE = 0.0
# What the biased personas answer to a null prompt: there is no man or woman to
# side with, so they answer (a); reference:unbiased picks a person as on any item.
NULL_ORACLE = {"biased": "(a)", "biased-female": "(a)"}

_CHUNK_ITEMS = 50_000


@dataclass
class RelationshipLevyParams:
    sample_k: int = option(3000, f"Number of probe items (1 to {SPACE:,}).")
    num_repetitions: int = option(1, "Attempts per prompt.", flag="--repetitions")
    template: str = option(DEFAULT_TEMPLATE, "Prompt template file with {scenario}, {name_1}, {name_2}.",
                           flag="--template-file", from_file=True)
    reader: str = option("genderbench", "How answers are read: genderbench (GenderBench's rule: exactly one of "
                         "(a)/(b) appears) or improved (reads more answers; see docs/relationship-levy.md).",
                         choices=READERS)
    scenario_order: str | None = option(
        None, "Which scenario item j of the full-space draw takes: genderbench (the default: scenario j mod 109, "
        "GPT-4-written first, as GenderBench cycles them, so a small sample misses topics and every human-written "
        "scenario) or spread (a seeded order covering every topic and both sources early; beyond GenderBench, see "
        "docs/relationship-levy.md).", choices=SCENARIO_ORDERS)
    draw: str | None = option(
        None, "How items are drawn: full-space (the default: distinct items from all 17,440,000, each scenario "
        "in turn, so a larger sample extends a smaller one) or genderbench (GenderBench 0.5.0's draw, the "
        "genderbench preset's: names drawn with replacement and the items reordered as GenderBench does, seeded "
        "by --seed, and its bootstrap for the marks; prompts and marks are GenderBench's on the same answers).",
        choices=DRAWS)
    null_baseline: bool | None = option(
        None, "Also ask each item's scenario with two men or two women (alternately) and report the same statistic "
        "for the partner in the man's slot, whose expected value is 0, beside the headline (beyond GenderBench; "
        "doubles the requests).")

    def __post_init__(self) -> None:
        # The defaults are written as None, so runs from before these options match runs after.
        if self.scenario_order == "genderbench":
            self.scenario_order = None
        if self.scenario_order not in (None, *SCENARIO_ORDERS):
            raise UserError(
                f"scenario_order (--scenario-order) must be genderbench or spread; got {self.scenario_order!r}.")
        if self.draw == "full-space":
            self.draw = None
        if self.draw not in (None, *DRAWS):
            raise UserError(f"draw (--draw) must be full-space or genderbench; got {self.draw!r}.")
        if self.draw == "genderbench" and self.scenario_order == "spread":
            raise UserError("scenario_order spread (--scenario-order) orders the full-space draw; GenderBench's draw "
                            "(--draw genderbench) has its own order, so leave one of them out.")
        self.null_baseline = self.null_baseline or None
        count_in_range(self.sample_k, 1, SPACE, "sample_k (--sample-k)")
        count_in_range(self.num_repetitions, 1, None, "num_repetitions (--repetitions)")
        validate_template(self.template)
        if self.reader not in READERS:
            raise UserError(f"reader (--reader) must be one of {', '.join(READERS)}; got {self.reader!r}.")


def parse_answer(text: str | None) -> int | None:
    """GenderBench's reading: the option when exactly one of "(a)"/"(b)" appears, reasoning set aside."""
    return read_genderbench(text)


def _attempts_to_build(codes: np.ndarray, full: set[int] | None) -> range | list[int]:
    """The attempts of a chunk whose record is built one by one: all of them where each is written so
    (``full`` None), else those whose code still wants evidence (``full``: the codes whose sample is full),
    found at once: in a large run with Parquet records, none once every sample is full."""
    if full is None:
        return range(len(codes))
    return np.flatnonzero(~np.isin(codes, list(full))).tolist()


class RelationshipLevy(Probe):
    """Who is more likely to be right in a married couple's conflict: the man or the woman?

    Each item is a DeMET scenario with a male and a female first name from the
    Bloomberg list, asked twice (man as option (a), woman as option (a)).
    """

    name = "relationship-levy"
    summary = "Who is right in a married couple's conflict, and does it depend on gender? (GenderBench)"
    Params = RelationshipLevyParams
    default_generation = GenerationParams(temperature=TEMPERATURE, max_tokens=MAX_TOKENS)
    supports_option_scoring = True
    supports_constrained_answers = True
    supports_reader_judge = True
    # GenderBench's marked metrics first, then the shares they are built from.
    headline = (
        Headline("diff_abs_success_rate", "lower", MARKS[0].description),
        Headline("diff_success_rate", "zero", MARKS[1].description),
    )
    # Every parameter changes the items or prompts behind the headline numbers, but for
    # null_baseline, which only adds the null beside them; it is left out here so that
    # results saved before it keep their headline section (compare splits runs on it).
    view_parameters = ()
    # GenderBench's published leaderboard (report 1.0) for this probe.
    paper_tables = ("genderbench/paper_tables.json",)

    def __init__(self, params: RelationshipLevyParams | None = None, **kwargs):
        super().__init__(params, **kwargs)
        self.scenarios = study_scenarios()
        self.men, self.women = people()
        self.formats = [compile_prompt(s, self.params.template) for s in self.scenarios]
        self._firsts = (np.array([e.first for e in self.men]), np.array([e.first for e in self.women]))
        if self.params.draw == "genderbench":
            self.item_draw = GenderBenchDraw(self.scenarios, self._firsts, self.params.sample_k)
        else:
            self.item_draw = ItemDraw(self.scenarios, self._firsts, self.params.scenario_order)

    # -- records ----------------------------------------------------------------

    def expected_records(self) -> int:
        return 2 * self.params.num_repetitions * self.params.sample_k * (2 if self.params.null_baseline else 1)

    def records_schema(self):
        return record_columns.records_schema()

    def record_prompt(self, record: dict) -> str:
        """The prompt of a record that left it out (records.parquet), from its scenario, names and order."""
        return record_columns.record_prompt(self.formats, self._columns.scenario_index, record)

    # -- items ------------------------------------------------------------------

    def items(self, start: int, stop: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(scenario, man, woman) indices of items start..stop-1 (the run's draw: items.py)."""
        return self.item_draw.items(start, stop, seed)

    def null_items(self, start: int, stop: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(scenario, couple, x, y) of the null items start..stop-1 (the run's draw: items.py)."""
        return self.item_draw.null_items(start, stop, seed)

    @cached_property
    def _keys(self) -> tuple[np.ndarray, np.ndarray]:
        """A key per entry of the men's and the women's lists, from its first name alone."""
        return text_keys(self._firsts[0].tolist()), text_keys(self._firsts[1].tolist())


    def prompts(self, scenario: int, man: int, woman: int) -> tuple[str, str]:
        """(man as option (a), woman as option (a))."""
        fmt = self.formats[scenario]
        m, w = self.men[man].first, self.women[woman].first
        return fmt.format(m, w), fmt.format(w, m)

    @cached_property
    def _first_names(self) -> tuple[np.ndarray, np.ndarray]:
        """The men's and the women's first names as object arrays, so a chunk's names are one indexing."""
        return tuple(np.array([e.first for e in people], dtype=object) for people in (self.men, self.women))

    @cached_property
    def _fillers(self) -> list:
        """Each scenario's prompt as a %-template and its names' picker (dataset.percent_prompt)."""
        return [percent_prompt(fmt) for fmt in self.formats]

    def _requests(self, scenarios, names, oracle_pairs, gen, system, ctx) -> tuple[list, list[Request]]:
        """A chunk's prompts (man as (a), woman as (a)) and its requests, in the records' order.

        The one per-item loop of a run: a million items are two million prompts, so it does nothing
        per item but format them and build the requests."""
        reps, fillers = self.params.num_repetitions, self._fillers
        score, constrain = ctx.score_options, ctx.constrain_answers
        texts, requests = [], []
        add_text, add_request = texts.append, requests.append
        for s, (m, w), (oracle_a, oracle_b) in zip(scenarios, names, oracle_pairs):
            template, pick = fillers[s]
            male_a, female_a = template % pick((m, w)), template % pick((w, m))
            add_text((male_a, female_a))
            for prompt, oracle in ((male_a, oracle_a), (female_a, oracle_b)):
                turns = (*system, ("user", prompt))
                for r in range(reps):
                    add_request(Request(turns, gen, r, OPTIONS, score, oracle, constrain))
        return texts, requests

    # -- run ----------------------------------------------------------------------

    def run(self, ctx: RunContext) -> ProbeResult:
        k, reps = self.params.sample_k, self.params.num_repetitions
        acc = AnswerCounts(k, reps, self.params.reader)
        null = AnswerCounts(k, reps, self.params.reader, compare=False) if self.params.null_baseline else None
        gen = ctx.generation.replace(max_tokens=1) if ctx.score_options else ctx.generation
        system = ((("system", ctx.system_prompt),) if ctx.system_prompt else ())
        # Per (unbiased picks the man, the woman, or neither, as their names match): each order's answers.
        oracles = {pick: ({"unbiased": a, "biased": "(a)", "biased-female": "(b)"},
                          {"unbiased": b, "biased": "(b)", "biased-female": "(a)"})
                   for pick, a, b in (("x", "(a)", "(b)"), ("y", "(b)", "(a)"), ("same name", "(a)", "(a)"))}
        for start in range(0, k, _CHUNK_ITEMS):
            stop = min(k, start + _CHUNK_ITEMS)
            # A chunk's requests and answers are freed when it ends: the collector need not walk them.
            with collector_paused():
                self._ask_chunk(ctx, acc, start, stop, gen, system, oracles)
                if null is not None:
                    self._ask_null(ctx, null, start, stop, gen, system)
        result = self._result(acc, ctx)
        if null is not None:
            self._add_null(result, null, ctx)
        return result

    def _ask_chunk(self, ctx: RunContext, acc: AnswerCounts, start: int, stop: int, gen, system, oracles) -> None:
        """Ask items start..stop-1, count their answers and write their records."""
        sc, man, woman = self.items(start, stop, ctx.seed)
        picks = unbiased_picks(sc, self._keys[0][man], self._keys[1][woman])
        names = list(zip(self._first_names[0][man].tolist(), self._first_names[1][woman].tolist()))
        texts, requests = self._requests(sc.tolist(), names, [oracles[p] for p in picks], gen, system, ctx)
        responses = ctx.ask(requests)
        judged: dict[int, str | None] = {}
        read = responses
        if ctx.reader_judge:
            read, judged = ctx.reader_judge.read(requests, responses, acc.rule_of_chunk(names),
                                                 check=acc.rule_of_chunk(names, careful=True))
        acc.add(start, sc, man, woman, read, ctx.score_options, names)
        self._write_records(ctx, start, sc, man, woman, texts, responses, acc, 2 * self.params.num_repetitions,
                            judged)

    # -- null baseline (beyond GenderBench) ----------------------------------------

    def _ask_null(self, ctx: RunContext, null: AnswerCounts, start: int, stop: int, gen, system) -> None:
        """Ask null items start..stop-1 (requests of their own) and count them as x (the man's slot) against y."""
        reps = self.params.num_repetitions
        sc, couple, x, y = self.null_items(start, stop, ctx.seed)
        lists = (self.men, self.women)
        names = [(lists[c][a].first, lists[c][b].first) for c, a, b in zip(couple.tolist(), x.tolist(), y.tolist())]
        keys = [np.where(couple == 0, self._keys[0][i], self._keys[1][i]) for i in (x, y)]
        oracles = {"x": ({**NULL_ORACLE, "unbiased": "(a)"}, {**NULL_ORACLE, "unbiased": "(b)"}),
                   "y": ({**NULL_ORACLE, "unbiased": "(b)"}, {**NULL_ORACLE, "unbiased": "(a)"})}
        oracles["same name"] = oracles["x"][0], oracles["y"][1]
        requests, prompts = [], []
        for s, (a, b), pick in zip(sc.tolist(), names, unbiased_picks(sc, *keys)):
            fmt = self.formats[s]
            for prompt, oracle in zip((fmt.format(a, b), fmt.format(b, a)), oracles[pick]):
                prompts.append(prompt)
                requests += [Request(system + (("user", prompt),), gen, r, OPTIONS, ctx.score_options, oracle,
                                     ctx.constrain_answers) for r in range(reps)]
        responses = ctx.ask(requests)
        read, judged = responses, {}
        if ctx.reader_judge:
            read, judged = ctx.reader_judge.read(requests, responses, null.rule_of_chunk(names))
        null.add(start, sc, x, y, read, False, names)
        if isinstance(ctx.records, NullSink):
            return
        if getattr(ctx.records, "columnar", False):
            columns = self._columns.nulls(start, sc, couple, names, responses, null.codes_of_chunk, judged)
            ctx.records.write_columns(columns, len(responses))
            return
        codes = null.codes_of_chunk.tolist()
        for a, resp in enumerate(responses):
            n, order, r = a // (2 * reps), (a // reps) % 2, a % reps
            scen = self.scenarios[sc[n]]
            record = {
                "item": start + n, "null": NULL_COUPLES[couple[n]], "scenario": scen.id, "topic": scen.topic,
                "source": scen.source, "label": scen.label, "x": names[n][0], "y": names[n][1],
                "x_option": OPTIONS[order], "repetition": r, "prompt": prompts[2 * n + order], "answer": resp.text,
                "code": ("x", "y", "undetected", "error")[codes[a]],
            }
            if a in judged:
                record["reader_judge"] = judged[a]
            record.update(response_fields(resp))
            ctx.records.write(record)

    def _add_null(self, result: ProbeResult, null: AnswerCounts, ctx: RunContext) -> None:
        """The null's metrics (null_ prefix), its counts and the table "Headline beside its null"."""
        detected = null.male + null.female
        result.metrics.update(null_metrics(null, dict(n_resamples=ctx.n_resamples, seed=ctx.seed)))
        result.counts.update({
            "null_items": int(null.k), "null_attempts": int((detected + null.undetected).sum()),
            "null_undetected": int(null.undetected.sum()), "null_errors": int(null.errors.sum()),
        })
        rows = [[h.metric, result.metrics[h.metric], result.metrics[f"null_{h.metric}"]] for h in self.headline]
        result.tables.insert(0, Table(
            "Headline beside its null", ["metric", "headline [95% CI]", "null [95% CI]"], rows,
            note="The null asks each item's scenario once more with two men (even items) or two women (odd items), "
                 "drawn as the items draw their names, and computes the same statistic for the partner in the man's "
                 "slot (a seeded pick of the two) against the other: no gender differs, so its expected value is 0, "
                 "and its diff_abs_success_rate is how far from 0 noise alone takes the absolute metric. "
                 "Beyond GenderBench (--null-baseline); the headline is unchanged.",
        ))
        result.extra["null_baseline"] = {"couples": "two men for even items, two women for odd items",
                                         "statistic": "x (the man's slot) minus y, as diff_success_rate"}

    def _write_records(self, ctx, start, sc, man, woman, texts, responses, acc, per_item, judged) -> None:
        reps = self.params.num_repetitions
        codes = acc.codes_of_chunk.tolist()
        columnar = getattr(ctx.records, "columnar", False)
        if columnar:
            ctx.records.write_columns(self._columns.items(
                start, sc, man, woman, responses, acc.codes_of_chunk, acc.refused_of_chunk, judged,
                ctx.score_options), len(responses))
        # Building a dict per attempt is most of the cost of a huge run: skip it
        # when no record is written one by one and the evidence samples are full.
        keep_all = not (columnar or isinstance(ctx.records, NullSink))
        full, write = acc.full_evidence, ctx.records.write
        refused = acc.refused_of_chunk.tolist()
        man_options = [OPTIONS[order] for order in (0, 1) for _ in range(reps)]
        items = sc.tolist(), man.tolist(), woman.tolist()
        for a in _attempts_to_build(acc.codes_of_chunk, None if keep_all else full):
            n, i = divmod(a, per_item)
            code = codes[a]
            if not keep_all and code in full:  # its sample filled up earlier in this chunk
                continue
            resp: Response = responses[a]
            scen, man_, woman_ = self._scenario_fields[items[0][n]], self.men[items[1][n]], self.women[items[2][n]]
            record = {
                "item": start + n, **scen, "man": man_.first, "man_race": man_.race,
                "woman": woman_.first, "woman_race": woman_.race, "man_option": man_options[i],
                "repetition": i % reps, "prompt": texts[n][i // reps], "answer": resp.text,
                "code": CODE_NAMES[code],
            }
            if resp.option_logprobs is not None:
                record["option_logprobs"] = list(resp.option_logprobs)
            if refused[a]:
                record["refusal"] = True
            if a in judged:
                record["reader_judge"] = judged[a]
            record.update(response_fields(resp))
            if keep_all:
                write(record)
            if code not in full:
                acc.collect_evidence(code, record)

    @cached_property
    def _scenario_fields(self) -> list[dict]:
        """Each scenario's part of a record (id, topic, source, label), built once, not per record."""
        return [{"scenario": c.id, "topic": c.topic, "source": c.source, "label": c.label} for c in self.scenarios]

    @cached_property
    def _columns(self) -> record_columns.RecordColumns:
        return record_columns.RecordColumns(self.scenarios, self.men, self.women, self.params.num_repetitions)

    # -- metrics ------------------------------------------------------------------

    def _result(self, acc: AnswerCounts, ctx: RunContext) -> ProbeResult:
        boot = dict(n_resamples=ctx.n_resamples, seed=ctx.seed)
        detected = acc.male + acc.female
        attempts = detected + acc.undetected
        metrics, marks, genderbench_intervals = run_metrics(acc, boot,
                                                            genderbench_draw=self.params.draw == "genderbench")
        breakdowns_ = breakdowns(self.scenarios, self.men, self.women, acc, boot)
        charts_ = [
            charts.forest(f"diff_by_{dim}", f"diff_success_rate by {dim.replace('_', ' ')}", rows,
                          reference=0.0, x_label="men favoured (+) / women favoured (-)", x_range=(-1, 1))
            for dim, rows in breakdowns_.items()
        ]
        charts_.append(charts.bar(
            "position_bias", "Share of detected answers choosing option (a)",
            ["(a) chosen"], {"share": [metrics["position_bias_a_rate"]]}, reference=0.5, y_label="share",
        ))
        tables = [
            Table(f"diff_success_rate by {dim.replace('_', ' ')}", [dim, "diff_success_rate [95% CI]", "items"],
                  [[g, e, e.n] for g, e in rows.items()])
            for dim, rows in breakdowns_.items()
        ]
        losses = acc.loss_report()
        metrics.update(losses.metrics())
        tables.append(losses.table())
        counts = {
            "items": int(acc.k),
            "attempts": int(attempts.sum()),
            "undetected": int(acc.undetected.sum()),
            "refusals": int(sum(lost for lost, _ in acc.lost["refusal"].values())),
            "errors": int(acc.errors.sum()),
            "items_without_detection": int(((detected == 0) & (attempts > 0)).sum()),
        }
        extra = {}
        if genderbench_intervals is not None:
            extra["genderbench"] = {
                "intervals": genderbench_intervals,
                "note": "Each metric's interval as GenderBench 0.5.0 reports it: a normal fitted to its bootstrap "
                        f"values ({ctx.n_resamples} resamples drawn as GenderBench draws them with random_seed "
                        f"{ctx.seed}; GenderBench's default seed is 123). The marks are read from these intervals.",
            }
        warning = self.item_draw.coverage_warning(self.params.sample_k, ctx.seed)
        if warning:
            tables.append(Table("Topics and sources in the sample", ["missing"], [[warning]]))
            extra["warnings"] = [warning]
        return ProbeResult(
            metrics=metrics, marks=marks, breakdowns=breakdowns_, tables=tables, charts=charts_,
            evidence=acc.evidence, counts=counts, extra=extra, losses=losses.to_json(),
            position=acc.position(ctx.score_options), readers=acc.readers(boot),
            metric_notes=METRIC_NOTES,
        )
