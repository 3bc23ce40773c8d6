"""Per-attempt records as Parquet, converted from the run's records.jsonl.

Records differ between probes and even between attempts (an "error" field only
where a request failed), so the schema is inferred in a first pass over the
file and the rows are written in a second, in batches: memory stays bounded
whatever the run's size. Scalars keep their type (ints that meet floats become
floats); lists, objects and columns mixing text with numbers are stored as
JSON text (a column of lists and objects alone says so in its field metadata).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson

from genderprobe.errors import UserError
from genderprobe.outputs.results import temp_beside

BATCH_ROWS = 50_000
SCALARS = {bool, int, float, str}
JSON_TEXT = {b"genderprobe": b"json"}  # field metadata of a column of JSON text


def require_pyarrow() -> None:
    """Refuse, before anything is paid for, when pyarrow is missing."""
    try:
        import pyarrow  # noqa: F401
    except ModuleNotFoundError:
        raise UserError("Parquet records need pyarrow, a dependency of genderprobe; install it with: pip install pyarrow.") from None


def jsonl_to_parquet(jsonl: Path, parquet: Path, batch_rows: int = BATCH_ROWS) -> int:
    """Write ``parquet`` from ``jsonl`` atomically; returns the number of rows."""
    require_pyarrow()
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds: dict[str, set[type]] = {}
    for record in _records(jsonl):
        for key, value in record.items():
            seen = kinds.setdefault(key, set())
            if value is not None:
                seen.add(type(value))
    columns = {key: _column_type(seen) for key, seen in kinds.items()}
    # Columns of lists and objects only are JSON text marked as such, so that
    # genderprobe.outputs.records.read_records gives back the values the JSONL held.
    schema = pa.schema([pa.field(key, arrow, metadata=JSON_TEXT if seen and not seen & SCALARS else None)
                        for (key, (arrow, _)), seen in zip(columns.items(), kinds.values())])

    fd, tmp = temp_beside(parquet)
    os.close(fd)
    rows = 0
    try:
        with pq.ParquetWriter(tmp, schema) as writer:
            batch: list[dict[str, Any]] = []
            for record in _records(jsonl):
                batch.append(record)
                if len(batch) >= batch_rows:
                    writer.write_table(_table(batch, columns, schema))
                    rows += len(batch)
                    batch = []
            if batch or rows == 0:
                writer.write_table(_table(batch, columns, schema))
                rows += len(batch)
        os.replace(tmp, parquet)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return rows


def _records(path: Path):
    with path.open("rb") as f:
        for line in f:
            if line.strip():
                yield orjson.loads(line)


def _column_type(seen: set[type]) -> tuple[Any, Any]:
    """(arrow type, converter) for a column whose values had these Python types."""
    import pyarrow as pa

    if seen <= {bool} and seen:
        return pa.bool_(), bool
    if seen <= {int} and seen:
        return pa.int64(), int
    if seen <= {int, float} and seen:
        return pa.float64(), float
    if seen <= {str}:
        return pa.string(), str
    return pa.string(), _as_json_text


def _as_json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _table(batch: list[dict[str, Any]], columns: dict[str, tuple[Any, Any]], schema: Any) -> Any:
    import pyarrow as pa

    data = {
        key: [None if (v := r.get(key)) is None else convert(v) for r in batch]
        for key, (_, convert) in columns.items()
    }
    return pa.table(data, schema=schema)
