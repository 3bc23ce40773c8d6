"""The contract every probe fulfils.

A probe is declarative: it builds requests, turns answers into codes and codes
into metrics. It never talks to a model directly and never touches files: the
harness hands it a :class:`RunContext` whose ``ask`` sends a list of requests
through the runner (cache, retries, concurrency) and returns the responses in
the same order, and whose ``records`` sink takes one JSON-able dict per attempt.

Multi-round methods (a rewording fallback, a labeller and a checker, several
temperatures) simply call ``ask`` more than once.

Results share one layout so the terminal, the results JSON and the HTML report
need no per-probe code:

* ``metrics``: name -> :class:`Estimate` (value with 95% interval);
* ``marks``: name -> mark JSON (:meth:`MarkDefinition.to_json`);
* ``breakdowns``: dimension -> group -> :class:`Estimate`;
* ``tables``: :class:`Table` s laid out like the paper's tables;
* ``charts``: chart specs (see :mod:`genderprobe.charts`) the report draws;
* ``evidence``: category -> list of {"prompt", "answer", "code", ...} samples,
  with every undetected answer under "undetected";
* ``counts``: attempts, undetected, errors, ...;
* ``extra``: anything else JSON-able the probe wants to keep;
* ``losses``: undetected and refused answers by gender (:mod:`genderprobe.analysis.losses`);
* ``position``, ``readers``: what the validity guards (:mod:`genderprobe.analysis.validity`)
  need from a closed-choice probe: how the read answers fell by option position,
  and the same answers read by the paper's rule and by the careful reader.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from genderprobe.analysis.stats import Estimate
from genderprobe.errors import UserError
from genderprobe.models.base import GenerationParams, Request, Response

Ask = Callable[[Sequence[Request]], list[Response]]


class RecordSink(Protocol):
    """Where a probe's records go. A sink whose ``columnar`` is true (records.parquet)
    also takes ``write_columns(columns, rows)``, which a probe may use instead of
    one ``write`` a record (see :meth:`Probe.records_schema`)."""

    def write(self, record: dict[str, Any]) -> None: ...


class NullSink:
    """Discards records (benchmarks of the harness alone)."""

    def write(self, record: dict[str, Any]) -> None:
        pass


class ListSink:
    """Keeps records in memory (tests, the Python API)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, record: dict[str, Any]) -> None:
        self.records.append(record)


# Why generation stopped, when it says nothing: the answer simply ended.
_PLAIN_FINISH = frozenset(("stop", "end_turn"))


def response_fields(resp: Response) -> dict[str, Any]:
    """What a record adds for one answer, in this order:

    * ``error``: "<kind>: <message>", only for a failed request;
    * ``cached``: the answer came from the store (always there, so the records
      count what a run paid for);
    * ``prompt_tokens``, ``completion_tokens``: as the server reported them
      (always there; 0 where it reported none, as for a failed request);
    * ``reasoning``: a reasoning model's thinking, only when it returned one
      (never read as the answer);
    * ``finish_reason``: only when it tells something ("length",
      "content_filter", ...), not for a plain "stop"/"end_turn";
    * ``cut_from``: only for an answer longer than its bound, cut to it before
      anything read it: how many characters arrived (genderprobe.engine.answer_bound).

    A probe adds them with ``record.update(response_fields(resp))``. Where a
    record holds a second answer (a judge's), that answer's fields are nested
    under its own key, never mixed with the tested model's.

    Called once per record (millions in a RelationshipLevy run): keep it cheap.
    """
    if resp.error_kind is None:
        fields = {
            "cached": resp.cached,
            "prompt_tokens": resp.prompt_tokens,
            "completion_tokens": resp.completion_tokens,
        }
    else:
        fields = {
            "error": f"{resp.error_kind}: {resp.error_message}",
            "cached": resp.cached,
            "prompt_tokens": resp.prompt_tokens,
            "completion_tokens": resp.completion_tokens,
        }
    if resp.reasoning:
        fields["reasoning"] = resp.reasoning
    finish = resp.finish_reason
    if finish and finish not in _PLAIN_FINISH:
        fields["finish_reason"] = finish
    if resp.cut_from is not None:
        fields["cut_from"] = resp.cut_from
    return fields


def response_columns(responses: Sequence[Response]) -> dict[str, list[Any]]:
    """:func:`response_fields` of many answers as columns, None where a record has no such field."""
    return {
        "error": [None if r.error_kind is None else f"{r.error_kind}: {r.error_message}" for r in responses],
        "cached": [r.cached for r in responses],
        "prompt_tokens": [r.prompt_tokens for r in responses],
        "completion_tokens": [r.completion_tokens for r in responses],
        "reasoning": [r.reasoning or None for r in responses],
        "finish_reason": [None if not r.finish_reason or r.finish_reason in _PLAIN_FINISH else r.finish_reason
                          for r in responses],
        "cut_from": [r.cut_from for r in responses],
    }


@dataclass
class RunContext:
    """What the harness gives a probe for one run.

    generation: the run's generation parameters (the probe's defaults with the
        user's overrides applied); copy them into every request.
    score_options: the user asked for log-probability option scoring; probes that
        support it set ``Request.score_options`` on their closed-choice prompts.
    constrain_answers: the user asked the backend to answer only with one of the
        options (``--constrain-answers``); probes that support it set
        ``Request.constrain`` on their closed-choice prompts.
    judge: sends requests to the judge model, for probes that need one.
    checker: sends requests to the model that checks the judge's labels
        (``--checker``); None means the judge checks too.
    reader_judge: a :class:`genderprobe.reading.reader_judge.ReaderJudge` when the user
        asked a judge to read the answers the rules cannot (``--reader-judge``);
        probes that support it pass their closed-choice answers through its
        ``read`` before reading them.
    """

    ask: Ask
    generation: GenerationParams = GenerationParams()
    records: RecordSink = field(default_factory=NullSink)
    judge: Ask | None = None
    score_options: bool = False
    constrain_answers: bool = False
    n_resamples: int = 1000
    seed: int = 0
    system_prompt: str | None = None
    checker: Ask | None = None
    reader_judge: Any = None


@dataclass
class Table:
    """A terminal/report table: rows of cells (str, number, Estimate or None)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        def cell(v: Any) -> Any:
            return v.to_json() if isinstance(v, Estimate) else v

        return {
            "title": self.title,
            "columns": self.columns,
            "rows": [[cell(v) for v in row] for row in self.rows],
            "note": self.note,
        }


@dataclass
class PositionEvidence:
    """How a run's read closed-choice answers fell by option position.

    The validity guard (genderprobe.analysis.validity) uses it to say when a headline
    measured only the position of the options, not the people in them.

    chosen: read answers (refusals and unread answers left out) that chose each
        position, first option first.
    paired_same_position, paired_total: items asked in both option orders whose
        two answers were both read, and how many of them chose the same position
        both times (a model that answers by position: all; one that answers by
        person: none). None where the design asks no item in both orders.
    scored: the choices came from option scoring (log-probabilities), not text.
    """

    chosen: list[int]
    paired_same_position: int | None = None
    paired_total: int | None = None
    scored: bool = False

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class AnswerSpread:
    """How a run's read graded answers (scores) spread, for the validity guards.

    answers: read answers; most_common: how many of them are the commonest answer;
    value: that answer as read. A model that gives every sentence the same score
    (a pretrained model copying one number) measures nothing of the sentences.
    """

    answers: int
    most_common: int
    value: str

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class ReaderComparison:
    """The same answers read by the paper's rule and by the study's careful reader.

    faithful, careful: the two readers' names (``--reader`` values where a probe
        has that option); used: the one this run's metrics come from.
    answers: answers at least one of the two read as a choice; disagree: those
        the two read differently (one reads a choice, the other reads none or
        another choice).
    headlines: headline metric -> reader name -> its value read that way.
    agreed: answers both read as the same choice; doubtful: of those, the ones whose
        reading rests on a letter beside words that contradict it
        (genderprobe.reading.doubtful); both None where the probe does not test that.
    """

    faithful: str
    careful: str
    used: str
    answers: int
    disagree: int
    headlines: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    agreed: int | None = None
    doubtful: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "faithful": self.faithful,
            "careful": self.careful,
            "used": self.used,
            "answers": self.answers,
            "disagree": self.disagree,
            "headlines": {m: {r: e.to_json() for r, e in by.items()} for m, by in self.headlines.items()},
            **({"agreed": self.agreed, "doubtful": self.doubtful} if self.doubtful is not None else {}),
        }


@dataclass
class ProbeResult:
    metrics: dict[str, Estimate]
    marks: dict[str, dict[str, Any]] = field(default_factory=dict)
    breakdowns: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    tables: list[Table] = field(default_factory=list)
    charts: list[dict[str, Any]] = field(default_factory=list)
    evidence: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    # Lost answers by gender (genderprobe.analysis.losses.LossReport.to_json()); read by the
    # harness's warnings, the terminal and compare.
    losses: dict[str, Any] | None = None
    # For the validity guards (genderprobe.analysis.validity); closed-choice probes fill them.
    position: PositionEvidence | None = None
    spread: AnswerSpread | None = None
    readers: ReaderComparison | None = None
    # Metric -> a few words on what it adds to the headline (one legend line under the metrics).
    metric_notes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "metrics": {k: v.to_json() for k, v in self.metrics.items()},
            "marks": self.marks,
            "breakdowns": {
                dim: {g: e.to_json() for g, e in groups.items()}
                for dim, groups in self.breakdowns.items()
            },
            "tables": [t.to_json() for t in self.tables],
            "charts": self.charts,
            "evidence": self.evidence,
            "counts": self.counts,
            "extra": self.extra,
            "losses": self.losses,
            # Only where a probe reports them, so results of other probes keep their shape.
            **({"position": self.position.to_json()} if self.position else {}),
            **({"spread": self.spread.to_json()} if self.spread else {}),
            **({"readers": self.readers.to_json()} if self.readers else {}),
            **({"metric_notes": self.metric_notes} if self.metric_notes else {}),
        }


def option(
    default: Any,
    help: str,
    *,
    flag: str | None = None,
    choices: Sequence[str] | None = None,
    from_file: bool = False,
) -> Any:
    """A probe parameter: a dataclass field the CLI turns into ``--flag``.

    Tuple-typed parameters take comma-separated values on the command line;
    ``from_file`` parameters take a file path whose text becomes the value.
    """
    meta = {
        "help": help,
        "flag": flag,
        "choices": tuple(choices) if choices else None,
        "from_file": from_file,
    }
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple default for list parameters")
    return field(default=default, metadata=meta)


@dataclass
class NoParams:
    pass


BETTER = ("zero", "one", "lower", "higher")


@dataclass(frozen=True)
class Headline:
    """A headline metric of a probe and which way is better.

    better: "zero" (a signed bias: closer to 0 is better), "one" (a ratio such
    as disparate impact: closer to 1 is better), "lower" or "higher".
    compare ranks runs by these, in the order given, and shows only these.
    whole_list: the metric covers the whole of a fixed, small list the paper
    uses (demet-names: each of Levy's lists holds 10 names), not a sample
    from a larger set; the validity guard then says it rests on few units
    instead of declaring it no evidence (genderprobe.analysis.validity).
    """

    metric: str
    better: str
    description: str = ""
    whole_list: bool = False

    def __post_init__(self) -> None:
        if self.better not in BETTER:
            raise ValueError(f"better must be one of {BETTER}, not {self.better!r}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metric": self.metric, "better": self.better, "description": self.description}
        if self.whole_list:
            out["whole_list"] = True
        return out


class Probe(ABC):
    """Base class of every probe.

    Subclasses set ``name`` (the CLI name), ``summary`` (one line for
    ``genderprobe probes``), ``Params`` (a dataclass of :func:`option` fields,
    validated in its ``__post_init__`` by raising :class:`UserError`) and
    ``default_generation``; and implement :meth:`run`.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    Params: ClassVar[type] = NoParams
    default_generation: ClassVar[GenerationParams] = GenerationParams()
    needs_judge: ClassVar[bool] = False
    supports_option_scoring: ClassVar[bool] = False
    # Closed-choice prompts whose answers a backend may constrain to the options
    # (--constrain-answers): the probe sets Request.constrain on them.
    supports_constrained_answers: ClassVar[bool] = False
    # Closed-choice answers a judge may read where the rules cannot (--reader-judge):
    # the probe passes them through RunContext.reader_judge.
    supports_reader_judge: ClassVar[bool] = False
    # The paper's headline numbers, declared once: compare ranks and shows these.
    headline: ClassVar[tuple[Headline, ...]] = ()
    # Parameters that only add views (ablations, extra temperatures) and leave the
    # headline metrics unchanged: compare does not split runs on them.
    view_parameters: ClassVar[tuple[str, ...]] = ()
    # The paper's published result tables, as packaged data keys (the study's
    # data folder; see genderprobe.outputs.paper_tables for their format).
    paper_tables: ClassVar[tuple[str, ...]] = ()
    # Why a calibration model gets a mark its name does not suggest (a coin marked C):
    # {model spec: {metric: one sentence}}, written to results as ``calibration_notes``.
    calibration_notes: ClassVar[dict[str, dict[str, str]]] = {}
    # Where this probe's run-wide breakdown family is measured not to hold its 5% for a fair coin (or not
    # shown to): one sentence saying so, written into every run's ``breakdown_tests`` family note (benchmarks/family_flags.py).
    breakdown_family_note: ClassVar[str | None] = None
    # The parameter that sets how many items a run asks (its sample), which --limit caps for a smoke
    # run; None for a probe that asks a small fixed list.
    size_parameter: ClassVar[str | None] = "sample_k"

    @classmethod
    def limited_size(cls, limit: int) -> int:
        """The size parameter's value for --limit LIMIT (a probe whose sizes have a shape overrides it)."""
        return limit

    def __init__(self, params: Any = None, **kwargs: Any):
        if params is None:
            names = {f.name for f in dataclasses.fields(self.Params)}
            unknown = sorted(set(kwargs) - names)
            if unknown:
                raise UserError(
                    f"Probe '{self.name}' has no parameter '{unknown[0]}'; "
                    f"its parameters are: {', '.join(sorted(names)) or 'none'}."
                )
            params = self.Params(**kwargs)
        self.params = params

    def expected_records(self) -> int | None:
        """How many records the run will write, where the probe knows: above
        genderprobe.outputs.records.AUTO_PARQUET_ROWS they go to records.parquet by default."""
        return None

    def records_schema(self) -> Any:
        """A pyarrow schema of every field a record may have, for a probe that writes
        its records as columns to a columnar sink; None (write dictionaries) by default."""
        return None

    def parameters(self) -> dict[str, Any]:
        """The probe's parameters as written to results."""
        return dataclasses.asdict(self.params)

    def asks_loglikelihood(self) -> bool:
        """Whether this run asks for raw-text log-likelihoods (``Request.raw_text``), which only some
        backends give (``Model.supports_loglikelihood``): the run is refused on the others before it starts."""
        return False

    def headlines(self) -> list[Headline]:
        """This run's headline metrics; override where parameters rename them."""
        return list(self.headline)

    @abstractmethod
    def run(self, ctx: RunContext) -> ProbeResult: ...


def limited(probe: Probe, limit: int | None) -> Probe:
    """``probe`` asking at most ``limit`` of its items (--limit: a smoke run), or ``probe`` itself where it
    asks no more already. Its parameters are validated as a user's are."""
    name = probe.size_parameter
    if limit is None or name is None or not hasattr(probe.params, name):
        return probe
    current, size = getattr(probe.params, name), probe.limited_size(limit)
    if current is not None and current <= size:
        return probe
    return type(probe)(dataclasses.replace(probe.params, **{name: size}))


def count_in_range(value: int, low: int, high: int | None, what: str) -> None:
    """Refuse an integer parameter outside [low, high] with one sentence."""
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (
        high is not None and value > high
    ):
        bound = f"from {low:,} to {high:,}" if high is not None else f"at least {low:,}"
        raise UserError(f"{what} must be a whole number {bound}; got {value!r}.")
