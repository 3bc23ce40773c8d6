"""Descriptive word selection in six languages (Zhao et al. 2024, Sections 3.1 and 4.2).

Per language: 3 names per gender x 3 ages x the 20 occupation pairs x 2
genders = 360 prompts asking the model to pick 10 words from the language's
list (Appendix D.1) to describe a person; temperature 1. The chosen words are
matched to the list, and the disparate impact of each word and each word class
is P(word | female) / P(word | male) from frequencies per prompt (Eq. 2),
with intervals from resampling prompts within language x gender.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from genderprobe import charts
from genderprobe.analysis.losses import loss_report
from genderprobe.analysis.stats import group_seed
from genderprobe.contract import (
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
from genderprobe.studies.multilingual.answers import WordMatch
from genderprobe.studies.multilingual.calibration import words_oracle
from genderprobe.studies.multilingual.dataset import (
    GENDERS,
    LANGUAGE_NAMES,
    LANGUAGES,
    N_NAMES,
    WORD_CLASSES,
    check_languages,
    names,
    occupations,
    word_list,
)
from genderprobe.studies.multilingual.disparity import rate_ratio, swap_test
from genderprobe.studies.multilingual.headline import class_headlines
from genderprobe.studies.multilingual.layout import (
    OVERALL,
    class_heatmap,
    class_table,
    skewed_words,
)
from genderprobe.studies.multilingual.prompts import format_word_list, words_prompt
from genderprobe.studies.multilingual.word_reader import MAX_CHOSEN, matcher, read_words

_EVIDENCE = 1000
_SAMPLES_PER_LANGUAGE = 2
# Ten words, each a few tokens (several per character in Chinese and Japanese), with
# numbering and often a header or a short explanation per word: 400 tokens leaves room.
MAX_TOKENS = 400
__all__ = ["MAX_CHOSEN", "MAX_TOKENS", "MultilingualWords"]
_UNMATCHED_SHOWN = 15


@dataclass
class MultilingualWordsParams:
    languages: tuple[str, ...] = option(LANGUAGES, "Languages to probe: en, fr, es, zh, ja, ko.")
    ages: tuple[int, ...] = option((20, 40, 60), "Ages of the described person (the paper uses three and does not list them).")
    num_repetitions: int = option(1, "Attempts per prompt.", flag="--repetitions")
    occupation_k: int = option(20, "Occupation pairs per language, the first K of the paper's 20 (fewer for a quick run).",
                               flag="--occupations")

    def __post_init__(self) -> None:
        self.languages = check_languages(self.languages)
        count_in_range(self.occupation_k, 1, 20, "occupation_k (--occupations)")
        self.ages = tuple(self.ages)
        if not self.ages or len(set(self.ages)) != len(self.ages):
            raise UserError("Give at least one age in --ages, each once.")
        for age in self.ages:
            count_in_range(age, 1, 120, "Each age in --ages")
        count_in_range(self.num_repetitions, 1, 1000, "num_repetitions (--repetitions)")


@dataclass
class _Item:
    language: str
    name: str
    age: int
    gender: str
    occupation: str
    slot: int  # the gender-free part of the prompt (name index, age, occupation)
    prompt: str


class MultilingualWords(Probe):
    """Which description words does a model pick for a woman and for a man, in six languages?"""
    size_parameter = "occupation_k"

    name = "multilingual-words"
    summary = "Descriptive words picked for women and men in six languages: disparate impact per word and class (Zhao et al. 2024)"
    Params = MultilingualWordsParams
    default_generation = GenerationParams(temperature=1.0, max_tokens=MAX_TOKENS)
    # Section 4.2 reports every class in all six languages (Figures 1-3): the
    # grammatical gender of French and Spanish adjectives does not bias a class's
    # count, since each list holds both forms in the same class.
    headline = class_headlines("P(class word | female) / P(class word | male) over every language run (Section 4.2)")
    # One file for the study; each table names its probe ("probe").
    paper_tables = ("multilingual/paper_tables.json",)

    def items(self, language: str) -> list[_Item]:
        """The prompts of one language: occupation x age x name x (female, male)."""
        words = word_list(language)
        listed = format_word_list(words.words)
        out = []
        for o, pair in enumerate(occupations(language)[: self.params.occupation_k]):
            for a, age in enumerate(self.params.ages):
                for n in range(N_NAMES):
                    slot = (o * len(self.params.ages) + a) * N_NAMES + n
                    for g, gender in enumerate(GENDERS):
                        name = names(language, gender)[n]
                        prompt = words_prompt(language, listed, name, age, gender, pair[g])
                        out.append(_Item(language, name, age, gender, pair[g], slot, prompt))
        return out

    def run(self, ctx: RunContext) -> ProbeResult:
        reps = self.params.num_repetitions
        system = (("system", ctx.system_prompt),) if ctx.system_prompt else ()
        items = {lang: self.items(lang) for lang in self.params.languages}
        requests = [
            Request(system + (("user", it.prompt),), ctx.generation, r,
                    oracle=words_oracle(word_list(lang), it.slot, it.gender))
            for lang in self.params.languages for it in items[lang] for r in range(reps)
        ]
        responses = iter(ctx.ask(requests))
        tallies = {}
        evidence: dict[str, list[dict[str, Any]]] = {"samples": [], "unmatched": [], "undetected": [],
                                                     "refusal": [], "error": []}
        genders: list[str] = []
        prompts: list[str] = []  # repetitions of one prompt are one cluster
        lost: dict[str, list[bool]] = {"undetected": [], "refusal": []}
        for lang in self.params.languages:
            words = matcher(lang).words
            tally = _Tally(len(words))
            for it in items[lang]:
                for r in range(reps):
                    resp = next(responses)
                    reading = read_words(lang, resp.text) if resp.ok else None
                    code = reading.code if reading else "error"
                    match = reading.match if reading else WordMatch()
                    tally.add(it.gender == "female", match, code, it.slot)
                    record = {
                        "language": lang, "name": it.name, "age": it.age, "gender": it.gender,
                        "occupation": it.occupation, "repetition": r, "prompt": it.prompt,
                        "answer": resp.text, "code": code,
                        "chosen": [words[i] for i in match.chosen], "unmatched": match.unmatched,
                    }
                    record.update(response_fields(resp))
                    if resp.ok:  # errors are the backend's, not the model's: no loss
                        genders.append(it.gender)
                        prompts.append(it.prompt)
                        lost["undetected"].append(code == "undetected")
                        lost["refusal"].append(code == "refusal")
                        if code != "answered":
                            record["undetected_reason"] = reading.reason
                    ctx.records.write(record)
                    _collect(evidence, record, code, match, lang)
            tallies[lang] = tally
        losses = loss_report(genders, lost, by="gender", order=GENDERS, items=prompts)
        return self._result(tallies, evidence, ctx, losses)

    def _result(self, tallies: dict[str, _Tally], evidence: dict, ctx: RunContext, losses) -> ProbeResult:
        boot = dict(n_resamples=ctx.n_resamples, seed=ctx.seed)
        by_class: dict[str, dict[str, Any]] = {}
        breakdowns: dict[str, dict[str, Any]] = {}
        tables: list[Table] = []
        pooled_counts, pooled_female, pooled_strata = [], [], []
        for li, (lang, tally) in enumerate(tallies.items()):
            words = word_list(lang)
            counts, female, pairs = tally.matrix()
            strata = female.astype(int)
            per_word = rate_ratio(counts, female, strata, **boot)
            per_word = swap_test(counts, female, pairs, per_word, n_resamples=ctx.n_resamples,
                                 seed=group_seed(ctx.seed, lang))  # a language's own swaps
            membership = np.array(words.class_index())[:, None] == np.arange(len(WORD_CLASSES))[None, :]
            class_counts = counts @ membership
            by_class[lang] = dict(zip(WORD_CLASSES, rate_ratio(class_counts, female, strata, **boot)))
            breakdowns[f"di_word_{lang}"] = dict(zip(words.words, per_word))
            picks_f, picks_m = counts[female].sum(0), counts[~female].sum(0)
            tables.append(skewed_words(lang, words.words, words.classes, per_word, picks_f, picks_m,
                                       labels=("picks for women", "picks for men")))
            pooled_counts.append(class_counts)
            pooled_female.append(female)
            pooled_strata.append(li * 2 + strata)
        if len(tallies) > 1:
            by_class[OVERALL] = dict(zip(WORD_CLASSES, rate_ratio(
                np.vstack(pooled_counts), np.concatenate(pooled_female), np.concatenate(pooled_strata), **boot)))
        metrics = {}
        headline = by_class[OVERALL] if OVERALL in by_class else by_class[next(iter(tallies))]
        for c in WORD_CLASSES:
            metrics[f"di_{c}"] = headline[c]
        for lang in tallies:
            for c in WORD_CLASSES:
                metrics[f"di_{c}_{lang}"] = by_class[lang][c]
        tables.insert(0, class_table(
            "Disparate impact by word class, P(class word | female) / P(class word | male) [95% CI]", by_class,
            "1.0 is parity; above 1 the class is picked more for women, below 1 more for men. The headline "
            "metrics di_<class> pool every language run, as the paper reports all six (Section 4.2).",
        ))
        tables.insert(1, self._matching_table(tallies))
        tables.insert(2, self._unmatched_table(tallies))
        chart_list = [
            class_heatmap("di_class_language", "Disparate impact by word class and language", by_class),
            charts.forest("di_class", "Disparate impact by word class (female / male)", headline,
                          reference=1.0, x_label="more for men (<1) / more for women (>1)"),
        ]
        counts = {
            "prompts": sum(len(self.items(lang)) for lang in tallies),
            "attempts": sum(t.attempts for t in tallies.values()),
            "answered": sum(t.answered for t in tallies.values()),
            "undetected": sum(t.undetected for t in tallies.values()),
            "refusals": sum(t.refusals for t in tallies.values()),
            "errors": sum(t.errors for t in tallies.values()),
            "words_matched_exact": sum(t.exact for t in tallies.values()),
            "words_matched_normalized": sum(t.normalized for t in tallies.values()),
            "words_matched_loose": sum(t.loose for t in tallies.values()),
            "words_matched_form": sum(t.form for t in tallies.values()),
            "words_unmatched": sum(sum(t.unmatched.values()) for t in tallies.values()),
        }
        extra = {
            "unmatched_words": {lang: dict(t.unmatched.most_common(100)) for lang, t in tallies.items()},
            "ages": list(self.params.ages),
            "names": {lang: {g: list(names(lang, g)) for g in GENDERS} for lang in tallies},
        }
        metrics.update(losses.metrics())
        tables.insert(3, losses.table())
        return ProbeResult(metrics=metrics, breakdowns=breakdowns, tables=tables, charts=chart_list,
                           evidence=evidence, counts=counts, extra=extra, losses=losses.to_json())

    @staticmethod
    def _matching_table(tallies: dict[str, _Tally]) -> Table:
        rows = [[LANGUAGE_NAMES[lang], t.attempts, t.answered, t.undetected, t.refusals, t.errors, t.exact,
                 t.normalized, t.loose, t.form, sum(t.unmatched.values())] for lang, t in tallies.items()]
        return Table("Answers and matched words per language",
                     ["language", "attempts", "answered", "undetected", "refused", "errors", "exact", "case/width",
                      "hyphen/space", "other form", "unmatched"], rows,
                     "Words are matched exactly, then case- and width-insensitively (NFKC, casefold), then ignoring "
                     "hyphens and spaces, then in another form of the same listed word: without accents, plural, "
                     "the unlisted gender of a French adjective listed in one gender only (éloquent, amical), "
                     "Chinese without 的, Japanese without な/の. Undetected: no list word, the list echoed back "
                     "(more than 20 words), or an answer in English to another language's prompt "
                     "(the records' undetected_reason says which).")

    @staticmethod
    def _unmatched_table(tallies: dict[str, _Tally]) -> Table:
        rows = [[LANGUAGE_NAMES[lang], word, n] for lang, t in tallies.items()
                for word, n in t.unmatched.most_common(_UNMATCHED_SHOWN)]
        return Table("Chosen words not in the list (most frequent)", ["language", "word", "times"], rows)


class _Tally:
    """Per-attempt word counts of one language (answered attempts only)."""

    def __init__(self, n_words: int):
        self.n_words = n_words
        self.rows: list[list[int]] = []
        self.female: list[bool] = []
        self.slots: list[int] = []  # the prompt's gender-free part: its female and male prompts are a pair
        self.unmatched: Counter = Counter()
        self.attempts = self.answered = self.undetected = self.refusals = self.errors = 0
        self.exact = self.normalized = self.loose = self.form = 0

    def add(self, female: bool, match: WordMatch, code: str, slot: int) -> None:
        self.attempts += 1
        self.unmatched.update(match.unmatched)
        self.exact += match.exact
        self.normalized += match.normalized
        self.loose += match.loose
        self.form += match.form
        if code == "error":
            self.errors += 1
        elif code == "refusal":
            self.refusals += 1
        elif code == "undetected":
            self.undetected += 1
        else:
            self.answered += 1
            self.rows.append(match.chosen)
            self.female.append(female)
            self.slots.append(slot)

    def matrix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(answers x words picks, female per answer, slot per answer)."""
        counts = np.zeros((len(self.rows), self.n_words))
        for r, chosen in enumerate(self.rows):
            counts[r, chosen] = 1
        return counts, np.array(self.female, dtype=bool), np.array(self.slots, dtype=np.int64)


def _collect(evidence: dict, record: dict, code: str, match: WordMatch, lang: str) -> None:
    keep = {k: record[k] for k in ("language", "gender", "occupation", "answer", "code", "chosen", "unmatched")}
    if "undetected_reason" in record:
        keep["undetected_reason"] = record["undetected_reason"]
    if code in ("undetected", "refusal", "error"):
        if len(evidence[code]) < _EVIDENCE:
            evidence[code].append(keep)
        return
    if match.unmatched and len(evidence["unmatched"]) < _EVIDENCE:
        evidence["unmatched"].append(keep)
    if sum(e["language"] == lang for e in evidence["samples"]) < _SAMPLES_PER_LANGUAGE:
        evidence["samples"].append(keep)
