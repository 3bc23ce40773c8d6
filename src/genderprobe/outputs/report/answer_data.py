"""The answers a page's browser holds: each run's sample as rows, the facets they are filtered by, and their texts.

A page holds at most :data:`PAGE_ANSWERS` answers, shared by its runs (each
run at least :data:`MIN_PER_RUN`), sampled by :mod:`answer_sample`. Texts are
kept once however often they recur (a repeated answer, a sentence asked five
times), and each row names its texts and facet values by number.

The rows' layout, which the page's script reads (templates/answer_browser.js):
``u`` the run, ``p`` the prompt, ``a`` the answer with reasoning set aside,
``t`` the reasoning, ``j`` the reader judge's reply, ``e`` the error (each an
index into ``texts``, absent where there is none), ``f`` each facet's value
(an index into the facet's ``values``, -1 where the row has none), ``r`` each
reader's reading where the run's two readers read the answer differently
([[reader, reading], ...]), and ``id`` where the answer is in the run. A run
read by two readers names them in ``readers`` (the paper's rule, the careful
reader, the one its metrics use).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genderprobe.errors import UserError
from genderprobe.outputs.records import read_records
from genderprobe.outputs.report import answer_reading as ar
from genderprobe.outputs.report.answer_sample import stratified
from genderprobe.outputs.report.secrets import redact

# Every answer of a default run (RelationshipLevy's 3,000 items asked in both orders) fits.
PAGE_ANSWERS = 6_000
MIN_PER_RUN = 200
# Texts longer than this are shown by their beginning and end (HiringBloomberg's prompts hold
# eight resumes, 12,500 characters): the page stays a few megabytes; `genderprobe answers` has them whole.
TEXT_CHARS = 2_000
TEXT_HEAD = 1_400
# The page's texts, at most (about as many bytes): a run whose texts are long shows fewer answers.
PAGE_TEXT_CHARS = 6_000_000
# A field is a breakdown group where its values recur: at most this many, and each on three rows on average.
MAX_GROUP_VALUES = 40
# Facets with up to this many values are buttons (one click each); longer ones are lists.
CHIPS_UP_TO = 12
_LAST_READINGS = (ar.UNDETECTED, ar.REFUSAL, ar.ERROR)


@dataclass
class RunAnswers:
    """One run for the browser: its results, the name the page gives them, and its records."""

    doc: dict[str, Any]
    source: str
    records: Any = None  # the records file's path, or the records themselves (a list); None: none kept


@dataclass
class Facet:
    key: str  # "reading", "read_by", "gender", "chose", "readers", "probe", "model", "run", or "group:<field>"
    label: str
    values: list[str]
    counts: list[int] = field(default_factory=list)  # rows of the sample holding each value

    def __post_init__(self) -> None:
        self.counts = self.counts or [0] * len(self.values)

    @property
    def chips(self) -> bool:
        return len(self.values) <= CHIPS_UP_TO


@dataclass
class RunNote:
    """What the page says of one run's answers."""

    label: str
    probe: str
    model: str
    folder: str | None  # the run's folder, for the command that exports every answer
    total: int | None = None  # answers in the run
    shown: int = 0  # answers on the page
    readings: list[tuple[str, int]] = field(default_factory=list)  # over the whole run
    problem: str | None = None  # why the page holds none of its answers
    readers: list[str] | None = None  # its two readers and the one its metrics use, where records name both


@dataclass
class Answers:
    runs: list[RunNote]
    facets: list[Facet]
    rows: list[dict[str, Any]]
    texts: list[str]

    @property
    def shown(self) -> int:
        return len(self.rows)

    @property
    def sampled(self) -> bool:
        return any(r.total is not None and r.shown < r.total for r in self.runs)

    def payload(self) -> dict[str, Any]:
        return {"facets": [{"key": f.key, "label": f.label, "values": f.values} for f in self.facets],
                "runs": [{"label": r.label, "probe": r.probe, "model": r.model, "folder": r.folder, "shown": r.shown,
                          "readers": r.readers} for r in self.runs],
                "texts": self.texts, "rows": self.rows}


@dataclass
class _Row:
    run: int
    record: dict[str, Any]
    reading: ar.Reading


def gather(runs: Sequence[RunAnswers], budget: int | None = None) -> Answers:
    """The page's answers: at most ``budget`` (default :data:`PAGE_ANSWERS`), shared by the runs."""
    budget = PAGE_ANSWERS if budget is None else budget
    per_run = max(min(MIN_PER_RUN, budget), budget // max(1, len(runs)))
    labels = _labels(runs)
    notes, kept = [], []
    for i, run in enumerate(runs):
        doc = redact(run.doc)  # a key pasted into a model spec or an answer must not reach the page
        note = RunNote(labels[i], str(doc.get("probe")), str(doc.get("model")), _folder(run.records))
        notes.append(note)
        records, note.problem = _open(run)
        if records is None:
            continue
        try:
            sample = stratified(records, per_run)
            chars = sum(_chars(record) for _, record, _ in sample.kept)
            allowed = PAGE_TEXT_CHARS // len(runs)
            if chars > allowed:  # long texts: a smaller sample of the run, drawn the same way
                sample = sample.smaller(max(1, len(sample.kept) * allowed // chars))
        except UserError as exc:
            note.problem = str(exc)
            continue
        note.total, note.shown = sample.total, len(sample.kept)
        note.readings = sorted(sample.readings.items(), key=lambda kv: _reading_order(kv[0]))
        note.readers = _two_readers(doc, sample.read_differently)
        kept += [_Row(i, redact(record), reading) for _, record, reading in sample.kept]
    facets = _facets(notes, kept)
    texts: dict[str, int] = {}
    return Answers(notes, facets, [_row(r, facets, notes, texts) for r in kept], list(texts))


def _two_readers(doc: dict[str, Any], read_differently: int) -> list[str] | None:
    """[the paper's rule, the careful reader, the one the metrics use] of a run read by both, where its
    records say which answers they read differently (records written before they did say nothing)."""
    readers = doc.get("readers")
    if not isinstance(readers, dict) or not all(isinstance(readers.get(k), str) for k in ("faithful", "careful")):
        return None
    if read_differently == 0 and readers.get("disagree"):
        return None
    return [readers["faithful"], readers["careful"], str(readers.get("used") or readers["faithful"])]


def _chars(record: dict[str, Any]) -> int:
    """About what a record's texts take on the page, shortened as shown."""
    return sum(min(len(str(record.get(k) or "")), TEXT_CHARS + 100) for k in ("prompt", "answer"))


def shortened(text: str) -> str:
    """A long text's beginning and end, saying how much is left out and where it is whole."""
    if len(text) <= TEXT_CHARS:
        return text
    tail = TEXT_CHARS - TEXT_HEAD
    cut = len(text) - TEXT_CHARS
    return (f"{text[:TEXT_HEAD]}\n[... {cut:,} characters left out here; genderprobe answers RUN exports the "
            f"whole text ...]\n{text[-tail:]}")


def _labels(runs: Sequence[RunAnswers]) -> list[str]:
    labels = [f"{r.doc.get('probe')} on {redact(str(r.doc.get('model')))}" for r in runs]
    return [f"{label} ({r.source})" if labels.count(label) > 1 else label for label, r in zip(labels, runs)]


def _folder(records: Any) -> str | None:
    return str(Path(records).parent) if isinstance(records, (str, Path)) else None


def _open(run: RunAnswers) -> tuple[Iterable[dict[str, Any]] | None, str | None]:
    """The run's records to read, or why there are none."""
    if run.records is None:
        return None, ("the run kept no records (it was run without --out, or with --no-records)"
                      if not run.doc.get("records_file") else "its records file was not given to the report")
    if isinstance(run.records, list):
        return run.records, None
    path = Path(run.records)
    if not path.is_file():
        return None, f"its records file {path} is not there"
    # A Parquet file of RelationshipLevy leaves the prompts out: they are rebuilt from the run's own template.
    return read_records(path, prompts=True, results=run.doc), None


def _reading_order(reading: str) -> tuple[int, str]:
    return (_LAST_READINGS.index(reading) + 1 if reading in _LAST_READINGS else 0, reading)


def _natural(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def _facets(notes: list[RunNote], rows: list[_Row]) -> list[Facet]:
    if not rows:
        return []
    used = sorted({r.run for r in rows})
    facets = []
    for key, label in (("probe", "probe"), ("model", "model")):
        values = sorted({getattr(notes[u], key) for u in used})
        if len(values) > 1:
            facets.append(Facet(key, label, values))
    if len(used) > len({(notes[u].probe, notes[u].model) for u in used}):
        facets.append(Facet("run", "run", [notes[u].label for u in used]))
    facets.append(Facet("reading", "reading", sorted({r.reading.reading for r in rows}, key=_reading_order)))
    if any(r.reading.read_by == ar.JUDGE for r in rows):
        facets.append(Facet("read_by", "read by", [ar.RULES, ar.JUDGE]))
    genders = sorted({r.reading.gender for r in rows if r.reading.gender})
    if genders:
        facets.append(Facet("gender", "gender", genders))
    meanings = {r.reading.chose for r in rows}
    if meanings - {None}:
        facets.append(Facet("chose", "chose", [m for m in ar.MEANINGS if m in meanings]))
    if any(notes[u].readers for u in used):
        facets.append(Facet("readers", "the two readers", ["agree", "disagree"]))
    seen: dict[str, Counter] = {}
    for r in rows:
        for name, value in ar.groups(r.record).items():
            seen.setdefault(name, Counter())[value] += 1
    for name, values in seen.items():
        if 2 <= len(values) <= MAX_GROUP_VALUES and 3 * len(values) <= values.total():
            facets.append(Facet(f"group:{name}", name.replace("_", " "), sorted(values, key=_natural)))
    return facets


def _value(facet: Facet, row: _Row, note: RunNote) -> str | None:
    if facet.key in ("probe", "model"):
        return getattr(note, facet.key)
    if facet.key == "run":
        return note.label
    if facet.key == "reading":
        return row.reading.reading
    if facet.key == "read_by":
        return row.reading.read_by
    if facet.key == "gender":
        return row.reading.gender
    if facet.key == "chose":
        return row.reading.chose
    if facet.key == "readers":
        return None if not note.readers else "disagree" if row.reading.readers else "agree"
    value = row.record.get(facet.key.removeprefix("group:"))
    return None if value is None or isinstance(value, (dict, list)) else str(value)


def _row(row: _Row, facets: list[Facet], notes: list[RunNote], texts: dict[str, int]) -> dict[str, Any]:
    def text(value: str) -> int:
        return texts.setdefault(shortened(value), len(texts))

    record = row.record
    answer, reasoning = ar.answer_and_reasoning(record)
    out: dict[str, Any] = {"u": row.run, "p": text(str(record.get("prompt") or "")), "a": text(answer)}
    if reasoning:
        out["t"] = text(reasoning)
    if isinstance(record.get("reader_judge"), str):
        out["j"] = text(record["reader_judge"])
    if record.get("error"):
        out["e"] = text(str(record["error"]))
    if row.reading.readers and notes[row.run].readers:
        out["r"] = [list(pair) for pair in row.reading.readers]
    values = []
    for facet in facets:
        value = _value(facet, row, notes[row.run])
        index = facet.values.index(value) if value in facet.values else -1
        if index >= 0:
            facet.counts[index] += 1
        values.append(index)
    out["f"] = values
    out["id"] = ar.place(record)
    return out
