"""RelationshipLevy's records as columns, for records.parquet (genderprobe.outputs.records).

The same fields as the JSONL records but the prompt, built for a whole chunk
at once from the item indices: the full item space (34.88 million attempts)
then costs seconds instead of a dictionary and a JSON line an attempt.
Scenario, topic, names and the like are dictionary columns (one small integer
a row), so repeating them costs next to nothing on disk. The prompt is left
out: the scenario, the names and the order decide it, and
``genderprobe.outputs.records.read_records(path, prompts=True)`` rebuilds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from genderprobe.contract import response_columns
from genderprobe.models.base import Response

CODE_NAMES = ("male", "female", "undetected", "error")
OPTIONS = ("(a)", "(b)")
NULL_COUPLES = ("two men", "two women")
_TEXT_FIELDS = ("scenario", "topic", "source", "label", "man", "man_race", "woman", "woman_race")
_NULL_FIELDS = ("null", "x", "y", "x_option")


@cache
def records_schema() -> Any:
    """Every field a RelationshipLevy record may have, in the JSONL records' order."""
    import pyarrow as pa

    coded = pa.dictionary(pa.int16(), pa.string())
    return pa.schema(
        [("item", pa.int64()), ("null", coded)]
        + [(f, coded) for f in _TEXT_FIELDS]
        + [("x", coded), ("y", coded), ("x_option", coded), ("man_option", coded),
           ("repetition", pa.int32()), ("answer", pa.string()), ("code", coded),
           ("option_logprobs", pa.list_(pa.float64())), ("refusal", pa.bool_()), ("reader_judge", pa.string()),
           ("error", pa.string()), ("cached", pa.bool_()), ("prompt_tokens", pa.int64()),
           ("completion_tokens", pa.int64()), ("reasoning", pa.string()), ("finish_reason", pa.string()),
           ("cut_from", pa.int64())]
    )


class _Coder:
    """A dictionary column over a fixed list: row i holds values[keys[i]] (values may repeat)."""

    def __init__(self, values: Sequence[str]):
        import pyarrow as pa

        distinct = list(dict.fromkeys(values))
        position = {v: i for i, v in enumerate(distinct)}
        self.code_of = np.array([position[v] for v in values], np.int16)
        self.dictionary = pa.array(distinct, pa.string())

    def __call__(self, keys: np.ndarray) -> Any:
        import pyarrow as pa

        return pa.DictionaryArray.from_arrays(pa.array(self.code_of[keys]), self.dictionary)


class RecordColumns:
    """Builds a chunk's record columns for one probe (its scenarios and name lists)."""

    def __init__(self, scenarios: Sequence[Any], men: Sequence[Any], women: Sequence[Any], reps: int):
        self.reps = reps
        self.scenario_index = {s.id: i for i, s in enumerate(scenarios)}
        self.per_scenario = {field: _Coder([getattr(s, attr) for s in scenarios]) for field, attr in
                             (("scenario", "id"), ("topic", "topic"), ("source", "source"), ("label", "label"))}
        self.per_man = {"man": _Coder([e.first for e in men]), "man_race": _Coder([e.race for e in men])}
        self.per_woman = {"woman": _Coder([e.first for e in women]), "woman_race": _Coder([e.race for e in women])}
        self.option, self.couple = _Coder(OPTIONS), _Coder(NULL_COUPLES)
        self.code, self.null_code = _Coder(CODE_NAMES), _Coder(("x", "y", "undetected", "error"))

    def _attempts(self, start: int, n: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """(item of each attempt within the chunk, order (0: first option), the shared columns)."""
        import pyarrow as pa

        per_item = 2 * self.reps
        a = np.arange(n * per_item)
        item, order = a // per_item, (a % per_item) // self.reps
        return item, order, {"item": start + item, "repetition": pa.array(a % self.reps, pa.int32())}

    def items(self, start: int, sc: np.ndarray, man: np.ndarray, woman: np.ndarray, responses: Sequence[Response],
              codes: np.ndarray, refused: np.ndarray, judged: dict[int, str | None], scored: bool) -> dict[str, Any]:
        """The columns of a chunk of items (each asked in both orders, ``reps`` times)."""
        item, order, columns = self._attempts(start, len(sc))
        scen, m, w = sc[item], man[item], woman[item]
        columns |= {field: code(scen) for field, code in self.per_scenario.items()}
        columns |= {field: code(m) for field, code in self.per_man.items()}
        columns |= {field: code(w) for field, code in self.per_woman.items()}
        columns["man_option"] = self.option(order)
        return columns | self._answers(responses, self.code(codes), refused, judged, scored)

    def nulls(self, start: int, sc: np.ndarray, couple: np.ndarray, names: Sequence[tuple[str, str]],
              responses: Sequence[Response], codes: np.ndarray, judged: dict[int, str | None]) -> dict[str, Any]:
        """The columns of a chunk of null items (two men or two women in the partners' slots)."""
        import pyarrow as pa

        item, order, columns = self._attempts(start, len(sc))
        scen = sc[item]
        columns |= {field: code(scen) for field, code in self.per_scenario.items()}
        columns["null"] = self.couple(couple[item])
        columns["x"] = pa.array([names[i][0] for i in item.tolist()]).dictionary_encode()
        columns["y"] = pa.array([names[i][1] for i in item.tolist()]).dictionary_encode()
        columns["x_option"] = self.option(order)
        return columns | self._answers(responses, self.null_code(codes), np.zeros(len(responses), bool), judged, False)

    @staticmethod
    def _answers(responses: Sequence[Response], code: Any, refused: np.ndarray,
                 judged: dict[int, str | None], scored: bool) -> dict[str, Any]:
        import pyarrow as pa

        columns: dict[str, Any] = {
            "answer": [r.text for r in responses],
            "code": code,
            # Only a refusal says so, as in the JSONL records.
            "refusal": pa.array(refused, mask=~refused) if refused.any() else None,
        }
        if scored:
            columns["option_logprobs"] = [None if r.option_logprobs is None else list(r.option_logprobs)
                                          for r in responses]
        if judged:
            columns["reader_judge"] = [judged.get(a) for a in range(len(responses))]
        return columns | response_columns(responses)


def record_prompt(formats: Sequence[str], scenario_index: dict[str, int], record: dict[str, Any]) -> str:
    """The prompt of a record: its scenario's text with the names in the record's order."""
    fmt = formats[scenario_index[record["scenario"]]]
    if "null" in record:
        first, second = record["x"], record["y"]
        in_order = record["x_option"] == OPTIONS[0]
    else:
        first, second = record["man"], record["woman"]
        in_order = record["man_option"] == OPTIONS[0]
    return fmt.format(first, second) if in_order else fmt.format(second, first)
