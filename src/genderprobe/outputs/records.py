"""Per-attempt records: which file a run writes them to, and one reader for both kinds.

A run with ``--out`` writes one record per attempt (a request and its answer):

* ``records.jsonl``, one readable JSON object per line, for runs of up to
  :data:`AUTO_PARQUET_ROWS` records (the default, ``--records auto``) or when
  asked (``--records jsonl``);
* ``records.parquet`` for larger runs, or when asked (``--records parquet``).
  A probe that writes its records as columns (RelationshipLevy) streams them
  into the file chunk by chunk while the run goes, in bounded memory, and
  leaves out the prompt, which the scenario, the names and the order decide:
  ``read_records(path, prompts=True)`` puts it back. Other probes' records go
  to a hidden JSONL file first and are converted when the run ends.

In Parquet a field a record does not have is null; :func:`read_records` drops
nulls, so both kinds read back as the same dictionaries (but for a field a
JSONL record holds as null, which is missing from the Parquet one).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from genderprobe.errors import UserError
from genderprobe.outputs.records_parquet import JSON_TEXT, jsonl_to_parquet
from genderprobe.outputs.results import JsonlSink, remove_orphaned_temporaries, temp_beside

FORMATS = ("auto", "jsonl", "parquet")
# Above this many records a run writes Parquet by default (records.jsonl would
# pass about 400 MB: some 380 bytes an attempt, most of it the prompt).
AUTO_PARQUET_ROWS = 1_000_000
FILE_NAMES = {"jsonl": "records.jsonl", "parquet": "records.parquet"}


def choose_format(requested: str, expected_rows: int | None) -> str:
    """"jsonl" or "parquet" for ``--records`` (auto decides by the run's expected number of records)."""
    if requested not in FORMATS:
        raise UserError(f"--records must be one of {', '.join(FORMATS)}; got {requested!r}.")
    if requested != "auto":
        return requested
    return "parquet" if expected_rows is not None and expected_rows > AUTO_PARQUET_ROWS else "jsonl"


def open_sink(out_dir: Path, fmt: str, schema: Any = None) -> Any:
    """The sink writing ``out_dir``'s records file of format ``fmt``; ``schema`` (a pyarrow
    schema) for probes that write columns."""
    path = Path(out_dir) / FILE_NAMES[fmt]
    for name in FILE_NAMES.values():  # a killed run's leftovers, of either kind
        remove_orphaned_temporaries(Path(out_dir) / name)
    if fmt == "jsonl":
        return JsonlSink(path)
    if schema is not None:
        return ParquetSink(path, schema)
    return JsonlToParquetSink(path)


class ParquetSink:
    """Records streamed into a Parquet file while the run goes: one row group per
    :meth:`write_columns` call, written to a hidden temporary file that
    :meth:`commit` renames (:meth:`discard` removes it).

    ``schema`` names every field a record may have; a record leaves a field null
    where it has none.

    A row group is encoded, compressed and written on a thread of its own, which
    pyarrow runs without Python's lock, while the run builds the next chunk: on two
    cores that work is off the run's path. One is in flight at a time; an error in
    writing it (a full disk) is raised by the next write or by :meth:`commit`.
    """

    columnar = True

    def __init__(self, path: Path, schema: Any):
        import pyarrow.parquet as pq

        self.path, self.schema = path, schema
        fd, self._tmp = temp_beside(path)
        os.close(fd)
        # zstd: a tenth of the size of snappy on these repetitive columns, at a small cost.
        self._writer = pq.ParquetWriter(self._tmp, schema, compression="zstd")
        self._rows: list[dict[str, Any]] = []
        self._thread: ThreadPoolExecutor | None = None
        self._in_flight: Future[None] | None = None
        self.count = 0

    def write_columns(self, columns: dict[str, Any], rows: int) -> None:
        """Write ``rows`` records given as columns (pyarrow arrays, lists or NumPy arrays);
        fields left out are null."""
        import pyarrow as pa

        if rows == 0:
            return
        arrays = [_as_array(columns.get(f.name), f.type, rows) for f in self.schema]
        self._write_table(pa.Table.from_arrays(arrays, schema=self.schema))
        self.count += rows

    def _write_table(self, table: Any) -> None:
        """Write ``table`` on the writing thread, once the one before it is written."""
        self._written()
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="records.parquet")
        self._in_flight = self._thread.submit(self._writer.write_table, table)

    def _written(self) -> None:
        """Wait for the table in flight; its error is raised here."""
        in_flight, self._in_flight = self._in_flight, None
        if in_flight is not None:
            in_flight.result()

    def write(self, record: dict[str, Any]) -> None:
        """One record as a dictionary (kept until :meth:`flush` or the end)."""
        self._rows.append(record)
        if len(self._rows) >= 50_000:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if self._rows:
            self._write_table(pa.Table.from_pylist(self._rows, schema=self.schema))
            self.count += len(self._rows)
            self._rows = []

    def commit(self) -> None:
        self.flush()
        self._stop_thread()
        self._writer.close()
        with open(self._tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(self._tmp, self.path)

    def discard(self) -> None:
        try:
            try:
                self._stop_thread(raise_error=False)  # the file goes: what became of its last table does not matter
            finally:
                self._writer.close()
        finally:
            Path(self._tmp).unlink(missing_ok=True)

    def _stop_thread(self, *, raise_error: bool = True) -> None:
        """The last table written (its error raised, unless not wanted), and the writing thread ended."""
        try:
            self._written()
        except Exception:
            if raise_error:
                raise
        finally:
            if self._thread is not None:
                self._thread.shutdown()
                self._thread = None


def _as_array(values: Any, arrow_type: Any, rows: int) -> Any:
    import pyarrow as pa

    if values is None:
        return pa.nulls(rows, arrow_type)
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values if values.type == arrow_type else values.cast(arrow_type)
    return pa.array(values, type=arrow_type)


class JsonlToParquetSink(JsonlSink):
    """Records of a probe that writes dictionaries, as Parquet: JSON lines in the hidden
    temporary file while the run goes, converted (in bounded memory) when committed."""

    def commit(self) -> None:
        self._file.close()
        try:
            jsonl_to_parquet(Path(self._tmp), self.path)
        finally:
            Path(self._tmp).unlink(missing_ok=True)


def records_beside(results: str | os.PathLike[str], doc: dict[str, Any]) -> Path | None:
    """The records file a results document names, in its folder (None where the run kept none).

    ``results``: the results file, or the run's --out folder."""
    name = doc.get("records_file")
    if not isinstance(name, str) or not name:
        return None
    path = Path(results)
    folder = path if path.is_dir() else path.parent
    return folder / Path(name).name


def read_records(path: str | os.PathLike[str], *, prompts: bool = False,
                 results: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """A run's records, one dictionary per attempt, from records.jsonl or records.parquet.

    ``prompts=True`` puts back the prompt a Parquet file of RelationshipLevy leaves
    out, rebuilt from the scenario, the names and the order with the run's own
    template (``results``: the run's results.json; by default the one beside the
    records). Records that hold their prompt keep it.
    """
    path = Path(path)
    rebuild = _prompt_builder(path, results) if prompts and path.suffix == ".parquet" else None
    try:
        if path.suffix == ".parquet":
            yield from _parquet_rows(path, rebuild)
        else:
            with path.open("rb") as f:
                for line in f:
                    if line.strip():
                        yield orjson.loads(line)
    except FileNotFoundError:
        raise UserError(f"The records file {path} does not exist.") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # orjson.JSONDecodeError is a ValueError
        raise UserError(f"Cannot read the records file {path} ({exc.__class__.__name__}); "
                        "it should be the records file written beside results.json.") from None


def _parquet_rows(path: Path, rebuild: Any) -> Iterator[dict[str, Any]]:
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    json_text = [f.name for f in file.schema_arrow if f.metadata == JSON_TEXT]
    for batch in file.iter_batches(batch_size=65_536):
        for row in batch.to_pylist():
            record = {k: v for k, v in row.items() if v is not None}
            for name in json_text:
                if name in record:
                    record[name] = json.loads(record[name])
            if rebuild is not None and "prompt" not in record:
                record["prompt"] = rebuild(record)
            yield record


def _prompt_builder(path: Path, results: dict[str, Any] | None) -> Any:
    """The run's probe's ``record_prompt``, built from its results' parameters."""
    from genderprobe.outputs.results import load_results
    from genderprobe.registry import get_probe

    doc = results if results is not None else load_results(path.parent / "results.json")
    probe_class = get_probe(doc["probe"])
    if not hasattr(probe_class, "record_prompt"):
        return None
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in doc["parameters"]["probe"].items()}
    return probe_class(**params).record_prompt
