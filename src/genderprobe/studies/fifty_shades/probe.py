"""Fifty Shades of Bias (Hada et al. 2023): can a model rate how biased a sentence is, as people do?

Faithful to Section 6.1.1: each of the 1,000 sentences is rated 0-1 with the
Appendix A.3 prompt and 8 in-context examples (2 from each quarter of the human
score, never the sentence itself) as chat turns; 5 runs with different examples.
The headline Pearson r and MSE against the human normalised (BWS) scores are
the paper's: each run scored on its own, averaged over the runs, overall and
by seed type and prompt type (Table 6). Scoring each sentence's mean over the
runs instead is kept as a named extra (``*_of_mean_score``). ``--reasons K``
asks for the reason of the score (Appendix A.4) for K sentences in each of the
paper's 3 score bins (Section 7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from genderprobe import charts
from genderprobe.analysis.losses import loss_report
from genderprobe.analysis.sampling import permute
from genderprobe.analysis.stats import (
    Estimate,
    bootstrap_ratio,
    bootstrap_statistic,
    rowwise_pearson,
)
from genderprobe.contract import (
    AnswerSpread,
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
from genderprobe.models.base import Request
from genderprobe.studies.fifty_shades import bws
from genderprobe.studies.fifty_shades import metrics as fm
from genderprobe.studies.fifty_shades.dataset import (
    N_SENTENCES,
    PROMPT_TYPES,
    SEED_TYPES,
    RatedSentence,
    annotations,
    rated_sentences,
)
from genderprobe.studies.fifty_shades.judge import (
    DEFAULT_GENERATION,
    EXAMPLES_PER_BIN,
    IC_SAMPLING,
    N_BINS,
    READERS,
    RUNS,
    ExamplePool,
    ExampleSampler,
    answer_code,
    build_scoring_requests,
    mean_scores,
    reason_oracle,
    reasoning_messages,
    score_bins,
    score_matrix,
)

# Section 5's score bins, used by Section 7 to sample sentences for reasons.
ANALYSIS_BINS = (0.0, 0.316, 0.579, 1.0)
# Table 2 of the paper: SHR Pearson and Spearman (mean, sd) over 100 repetitions.
PAPER_SHR = ((0.8634, 0.0061), (0.8691, 0.0061))
_EVIDENCE_RATED = 5
_MAX_UNDETECTED_EVIDENCE = 1000


@dataclass
class FiftyShadesParams:
    sample_k: int = option(N_SENTENCES, f"Number of sentences to rate (1 to {N_SENTENCES:,}).")
    runs: int = option(RUNS, "Runs with different in-context examples, averaged.")
    examples_per_bin: int = option(EXAMPLES_PER_BIN, "In-context examples per quarter of the human score (0: none).")
    ic_sampling: str = option("per-run", "Draw examples once per run (as the authors) or per sentence.",
                              choices=IC_SAMPLING)
    reasons: int = option(0, "Ask for the reason of the score for K sentences per score bin (paper: 20).")
    reader: str = option("first-line", "How scores are read: first-line (the authors' scripts) or score-line "
                         "(the first bare or labelled score on any line).", choices=READERS)

    def __post_init__(self) -> None:
        count_in_range(self.sample_k, 1, N_SENTENCES, "sample_k (--sample-k)")
        count_in_range(self.runs, 1, 100, "runs (--runs)")
        count_in_range(self.examples_per_bin, 0, 50, "examples_per_bin (--examples-per-bin)")
        count_in_range(self.reasons, 0, N_SENTENCES, "reasons (--reasons)")
        if self.ic_sampling not in IC_SAMPLING:
            raise UserError(f"Unknown in-context sampling '{self.ic_sampling}'; choose {' or '.join(IC_SAMPLING)}.")
        if self.reader not in READERS:
            raise UserError(f"Unknown score reader '{self.reader}'; choose {' or '.join(READERS)}.")


def pearson_estimate(human: np.ndarray, model: np.ndarray, boot: dict) -> Estimate:
    """Pearson r with a bootstrap interval; undefined (None) when either side is constant."""
    keep = ~np.isnan(model)
    h, m = human[keep], model[keep]
    if h.size < 3 or np.ptp(h) == 0 or np.ptp(m) == 0:
        return Estimate(None, None, None, int(h.size))
    return bootstrap_statistic([h, m], rowwise_pearson, **boot)


class FiftyShades(Probe):
    """Rate the degree of gender bias of the 1,000 Fifty Shades sentences and compare with people.

    The model's 0-1 ratings (Appendix A.3 prompt, 8 in-context examples, 5 runs)
    are correlated with the human Best-Worst Scaling scores (Hada et al. 2023).
    """

    name = "fifty-shades"
    summary = "Can the model rate how gender-biased a sentence is, as people do? (Fifty Shades of Bias)"
    Params = FiftyShadesParams
    default_generation = DEFAULT_GENERATION
    headline = (
        Headline("pearson_r", "higher", "Pearson r with the human scores, each run's r averaged over runs (Table 6)"),
        Headline("mse", "lower", "mean squared error against the human scores, each run's averaged over runs (Table 6)"),
    )
    # Reasons are extra requests after the scores; they change no score.
    view_parameters = ("reasons",)
    paper_tables = ("fifty_shades/paper_tables.json",)

    def __init__(self, params: FiftyShadesParams | None = None, **kwargs: Any):
        super().__init__(params, **kwargs)
        self.sentences = rated_sentences()
        self.pool = ExamplePool.fifty_shades()

    def items(self, seed: int) -> np.ndarray:
        """Indices of the sampled sentences (a larger sample extends a smaller one)."""
        return permute(np.arange(self.params.sample_k), N_SENTENCES, seed, 7)

    def run(self, ctx: RunContext) -> ProbeResult:
        p = self.params
        idx = self.items(ctx.seed)
        chosen = [self.sentences[i] for i in idx.tolist()]
        sampler = ExampleSampler(self.pool, per_bin=p.examples_per_bin, seed=ctx.seed, mode=p.ic_sampling)
        requests, attempts = build_scoring_requests(
            [s.text for s in chosen], sampler, p.runs, ctx.generation,
            pool_index=idx.tolist(), human_texts=[s.normalized_text for s in chosen],
            system_prompt=ctx.system_prompt,
        )
        responses = ctx.ask(requests)
        k = len(chosen)
        scores, errors, refused = score_matrix(responses, k, p.runs, p.reader)
        # Every answer read by both readers too (text rules: cheap), for the validity guard.
        by_reader = {r: scores if r == p.reader else score_matrix(responses, k, p.runs, r)[0] for r in READERS}
        evidence: dict[str, list[dict]] = {"rated": [], "undetected": [], "refusal": [], "error": []}
        for attempt, resp in zip(attempts, responses):
            s = chosen[attempt.sentence]
            value = scores[attempt.sentence, attempt.run]
            code = answer_code(resp.ok, value, refused[attempt.sentence, attempt.run])
            record = {
                "kind": "score",
                "uid": s.uid,
                "run": attempt.run,
                "seed_type": s.seed_type,
                "prompt_type": s.prompt_type,
                "human_score": s.normalized,
                "examples": [self.sentences[e].uid for e in attempt.examples],
                "prompt": s.text,
                "answer": resp.text,
                "score": None if np.isnan(value) else float(value),
                "code": code,
            }
            record.update(response_fields(resp))
            ctx.records.write(record)
            limit = _EVIDENCE_RATED if code == "rated" else _MAX_UNDETECTED_EVIDENCE
            if len(evidence[code]) < limit:
                evidence[code].append({k_: record[k_] for k_ in ("uid", "run", "prompt", "answer", "code", "human_score")})
        mean = mean_scores(scores)
        reasons = self._reasons(ctx, chosen, mean) if p.reasons else []
        if reasons:
            evidence["reasons"] = reasons
        result = self._result(ctx, chosen, scores, errors, refused, mean, evidence, reasons)
        human = np.array([s.normalized for s in chosen])
        result.readers = fm.reader_comparison(human, by_reader, p.reader, result.metrics,
                                              n_resamples=ctx.n_resamples, seed=ctx.seed)
        return result

    # -- reasons (Section 7) ---------------------------------------------------------

    def _reasons(self, ctx: RunContext, chosen: list[RatedSentence], mean: np.ndarray) -> list[dict]:
        human = np.array([s.normalized for s in chosen])
        bins = np.digitize(human, ANALYSIS_BINS[1:-1])
        rng = np.random.default_rng([ctx.seed, 4])
        picked: list[int] = []
        for b in range(len(ANALYSIS_BINS) - 1):
            candidates = np.flatnonzero((bins == b) & ~np.isnan(mean))
            picked.extend(rng.permutation(candidates)[: self.params.reasons].tolist())
        requests = [
            Request(reasoning_messages(chosen[i].text, float(mean[i])), ctx.generation,
                    oracle=reason_oracle(chosen[i].normalized_text))
            for i in picked
        ]
        responses = ctx.ask(requests) if requests else []
        out = []
        for i, request, resp in zip(picked, requests, responses):
            s = chosen[i]
            record = {
                "kind": "reason",
                "uid": s.uid,
                "bin": int(bins[i]) + 1,
                "human_score": s.normalized,
                "model_score": float(mean[i]),
                "prompt": request.prompt,
                "answer": resp.text,
                "reason": resp.text if resp.ok else None,
                "code": "reason" if resp.ok else "error",
            }
            record.update(response_fields(resp))
            ctx.records.write(record)
            out.append({k_: record[k_] for k_ in ("uid", "bin", "human_score", "model_score", "prompt", "reason", "code")})
        return out

    # -- metrics -----------------------------------------------------------------------

    def _result(self, ctx, chosen, scores, errors, refused, mean, evidence, reasons) -> ProbeResult:
        boot = dict(n_resamples=ctx.n_resamples, seed=ctx.seed)
        shr = bws.split_half_reliability(annotations(), repetitions=100, seed=0).summary()
        human = np.array([s.normalized for s in chosen])
        seed_type = np.array([s.seed_type for s in chosen])
        prompt_type = np.array([s.prompt_type for s in chosen])
        # Lost answers: refused, or with no score to read (errors are neither: no answer came).
        unread = np.isnan(scores) & ~errors & ~refused
        undetected = unread.sum(axis=1)
        answered = (~errors).sum(axis=1).astype(float)
        losses = self._losses(seed_type, unread, refused, errors)

        # Headline: the paper's way, each run scored and the runs averaged (Section 6.1.1).
        def r_of(sel):
            return fm.runs_mean_pearson(human[sel], scores[sel], **boot)

        def mse_of(sel):
            return fm.runs_mean_mse(human[sel], scores[sel], **boot)

        everyone = np.ones(len(chosen), bool)
        p_value = fm.largest_run_p_value(human, scores)
        metrics: dict[str, Estimate] = {
            "pearson_r": r_of(everyone),
            "mse": mse_of(everyone),
            "pearson_p_value": Estimate(p_value, None, None, fm.sentences_scored(scores)),
            # Named extras: each sentence's mean over the runs, scored once (less run noise).
            "pearson_r_of_mean_score": pearson_estimate(human, mean, boot),
            "mse_of_mean_score": bootstrap_ratio((mean - human) ** 2, **boot),
            "undetected_rate": bootstrap_ratio(
                undetected.astype(float), np.where(answered > 0, answered, np.nan), **boot
            ),
            "refusal_rate": bootstrap_ratio(
                refused.sum(axis=1).astype(float), np.where(answered > 0, answered, np.nan), **boot
            ),
            **losses.metrics(),
        }

        groups = {"seed_type": (seed_type, SEED_TYPES), "prompt_type": (prompt_type, PROMPT_TYPES)}
        breakdowns: dict[str, dict[str, Estimate]] = {}
        table_rows: list[list[Any]] = [
            ["all", "", metrics["pearson_r"], p_value, metrics["mse"], fm.sentences_scored(scores)]
        ]
        for dim, (labels, names) in groups.items():
            r_rows, mse_rows = {}, {}
            for g in names:
                sel = labels == g
                if not sel.any():
                    continue
                r_rows[g], mse_rows[g] = r_of(sel), mse_of(sel)
                table_rows.append([dim.replace("_", " "), g, r_rows[g], fm.largest_run_p_value(human[sel], scores[sel]),
                                   mse_rows[g], fm.sentences_scored(scores[sel])])
            breakdowns[f"pearson_r_by_{dim}"] = r_rows
            breakdowns[f"mse_by_{dim}"] = mse_rows

        bins = score_bins(human, N_BINS)
        bin_names = [f"{b / N_BINS:.2f}-{(b + 1) / N_BINS:.2f}" for b in range(N_BINS)]
        bin_mse, bin_bias = {}, {}
        for b, label in enumerate(bin_names):
            sel = bins == b
            if sel.any():
                bin_mse[label] = mse_of(sel)
                bin_bias[label] = fm.runs_mean_error(human[sel], scores[sel], **boot)
        breakdowns["mse_by_human_score_bin"] = bin_mse
        breakdowns["mean_error_by_human_score_bin"] = bin_bias

        tables = [
            Table(
                "Table 6 layout: Pearson r and MSE against the human scores",
                ["subset", "group", "r [95% CI]", "p-value (largest run)", "MSE [95% CI]", "sentences"],
                table_rows,
                note="As the paper: r and MSE of each run, averaged over the runs (intervals: bootstrap over "
                     "sentences). r is 'undefined' when a run's scores are constant.",
            ),
            Table(
                "Error by human score bin",
                ["human score", "MSE [95% CI]", "mean error (model - human) [95% CI]", "sentences"],
                [[label, bin_mse[label], bin_bias[label], bin_mse[label].n] for label in bin_mse],
            ),
            losses.table(),
            self._table2(shr),
        ]
        if reasons:
            tables.append(Table(
                "Reasons for scores (Appendix A.4)",
                ["uid", "bin", "human", "model", "reason"],
                [[r["uid"], r["bin"], r["human_score"], r["model_score"], r["reason"]] for r in reasons],
            ))

        edges = np.linspace(0, 1, 11)
        defined = ~np.isnan(mean)
        charts_ = [
            charts.histogram(
                "score_histogram", "Degree of gender bias: human (BWS) and model scores (Figure 1)", edges,
                {"human": np.histogram(human, bins=edges)[0].tolist(),
                 "model": np.histogram(mean[defined], bins=edges)[0].tolist()},
                x_label="degree of gender bias (0 least, 1 most negatively biased)",
            ),
            charts.scatter(
                "model_vs_human", "Model score against human score", list(zip(human[defined], mean[defined])),
                x_label="human (BWS) score", y_label="model score", identity_line=True,
                labels=[str(s.uid) for s, d in zip(chosen, defined) if d],
            ),
            charts.bar(
                "error_by_bin", "Error by human score bin", list(bin_mse),
                {"MSE": list(bin_mse.values()), "mean error": list(bin_bias.values())},
                y_label="error", reference=0.0,
            ),
            charts.forest(
                "pearson_by_subset", "Pearson r by seed type and prompt type",
                {f"{dim.split('_by_')[1].replace('_', ' ')}: {g}": e
                 for dim in ("pearson_r_by_seed_type", "pearson_r_by_prompt_type")
                 for g, e in breakdowns[dim].items()},
                reference=0.0, x_label="Pearson r", x_range=(-1, 1),
            ),
        ]
        counts = {
            "sentences": len(chosen),
            "attempts": int(scores.size),
            "undetected": int(undetected.sum()),
            "refusals": int(refused.sum()),
            "errors": int(errors.sum()),
            "sentences_without_score": int((~defined).sum()),
            "reasons": len(reasons),
        }
        reason_of = {r["uid"]: r["reason"] for r in reasons}
        per_sentence = [
            {"uid": s.uid, "seed_type": s.seed_type, "prompt_type": s.prompt_type, "human_score": s.normalized,
             "model_score": None if np.isnan(mean[i]) else float(mean[i]),
             "run_scores": [None if np.isnan(v) else float(v) for v in scores[i]],
             **({"reason": reason_of[s.uid]} if s.uid in reason_of else {})}
            for i, s in enumerate(chosen)
        ]
        return ProbeResult(
            metrics=metrics, breakdowns=breakdowns, tables=tables, charts=charts_, evidence=evidence,
            counts=counts, extra={"per_sentence": per_sentence, "human_reliability": shr},
            losses=losses.to_json(), spread=_spread(scores),
        )

    @staticmethod
    def _losses(seed_type: np.ndarray, unread: np.ndarray, refused: np.ndarray, errors: np.ndarray):
        """Lost answers by the sentence's seed type: a sentence names no gender of its own to split by."""
        answered = ~errors
        groups = np.repeat(seed_type[:, None], unread.shape[1], axis=1)[answered]
        # A sentence's runs are one cluster.
        sentence = np.repeat(np.arange(unread.shape[0])[:, None], unread.shape[1], axis=1)[answered]
        order = [t for t in SEED_TYPES if (groups == t).any()]
        return loss_report(groups.tolist(), {"undetected": unread[answered].tolist(),
                                             "refusal": refused[answered].tolist()},
                           by="seed_type", order=order, items=sentence.tolist())

    def _table2(self, shr: dict[str, Any]) -> Table:
        """Table 2: the human annotations the scores come from, with their split-half reliability."""
        ann = annotations()
        per_tuple = np.bincount(ann.tuple_of)
        (pp, ps), (sp, ss) = PAPER_SHR
        return Table(
            "Table 2: human annotations (released data) and split-half reliability",
            ["", "comments", "annotations per tuple", "annotations", "SHR Pearson", "SHR Spearman"],
            [
                ["released data", ann.n_items, f"{per_tuple.min()}-{per_tuple.max()}", len(ann),
                 f"{shr['pearson_mean']:.4f} ± {shr['pearson_sd']:.4f}",
                 f"{shr['spearman_mean']:.4f} ± {shr['spearman_sd']:.4f}"],
                ["paper", 1000, "2-3", 5285, f"{pp:.4f} ± {ps:.4f}", f"{sp:.4f} ± {ss:.4f}"],
            ],
            note="SHR: mean ± sd over 100 random splits of each tuple's annotations.",
        )


def _spread(scores: np.ndarray) -> AnswerSpread:
    """The read scores' spread over every run (what the validity guard reads)."""
    read = scores[~np.isnan(scores)]
    if not read.size:
        return AnswerSpread(0, 0, "")
    values, counts = np.unique(np.round(read, 6), return_counts=True)
    top = int(counts.argmax())
    return AnswerSpread(int(read.size), int(counts[top]), f"{values[top]:g}")
