"""The ``records`` table: runs of records kept column by column, encoded into Arrow.

`records_table` builds the table straight from the columns of `RecordColumns` runs (of one or
more sources), with no `traceidx.domain.model.Record` object per line; it equals encoding the
objects `RecordColumns.objects` describes.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from traceidx.sources.records import NO_TIME, RecordColumns
from traceidx.tables.schema import repeated, table_schema, to_array

#: the characters of one record's fingerprint (32 lowercase hex)
_FINGERPRINT_CHARS: Final = 32


def _int64(values: array[int]) -> pa.Array:
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def records_table(runs: Sequence[RecordColumns]) -> pa.Table:
    """The ``records`` table of runs of records (of one or more sources), in order."""
    ids = array("q")
    starts: list[int] = []
    ends: list[int] = []
    times: list[int] = []
    fingerprints = bytearray()
    statuses: list[str] = []
    native_types: list[str | None] = []
    paths: list[str | None] = []
    rows: list[dict[str, str] | None] = []  # of database sources' rows, when there are any
    with_rows = any(run.row_keys for run in runs)
    for run in runs:
        first, count, keys = run.first, len(run), run.keys
        ids += keys.ids[first : first + count]
        starts += run.starts
        ends += run.ends
        times += keys.times[first : first + count]
        fingerprints += keys.fingerprints[32 * first : 32 * (first + count)]
        statuses += run.statuses
        native_types += run.native_types
        paths += run.paths
        if run.row_keys:
            rows += [
                {"table": t, "key": k} for t, k in zip(run.row_tables, run.row_keys, strict=True)
            ]
        elif with_rows:
            rows += [None] * count
    count = len(ids)
    counts = np.array([len(run) for run in runs], dtype=np.int64)
    # a run's positions are consecutive from its first: each row's offset in the table,
    # shifted by its run's first position less where the run's rows start
    firsts = np.array([run.first for run in runs], dtype=np.int64)
    starts_at = np.cumsum(counts) - counts
    positions = np.arange(count, dtype=np.int64) + np.repeat(firsts - starts_at, counts)
    offsets = np.arange(0, _FINGERPRINT_CHARS * (count + 1), _FINGERPRINT_CHARS, dtype=np.int32)
    fingerprint = pa.Array.from_buffers(
        pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(bytes(fingerprints))]
    )
    raw_times = to_array(times, pa.int64())
    occurred = pc.if_else(pc.equal(raw_times, NO_TIME), None, raw_times)
    schema = table_schema("records")
    row_type = schema.field("row").type
    content_range = pa.StructArray.from_arrays(
        [to_array(starts, pa.int64()), to_array(ends, pa.int64())],
        fields=list(schema.field("content_range").type),
    )
    columns = [
        _int64(ids),
        repeated([run.source_id for run in runs], counts),
        pa.array(positions, pa.int64()),
        content_range,
        fingerprint,
        to_array(statuses, pa.string()),
        occurred.cast(schema.field("occurred_at").type),
        to_array(native_types, pa.string()),
        to_array(paths, pa.string()),
        pa.array(rows, row_type) if with_rows else pa.nulls(count, row_type),
    ]
    return pa.Table.from_arrays(columns, schema=schema)
