"""Records kept column by column as a source is framed, and their Arrow table.

A source yields one Record per complete line, so its records are a run of consecutive
positions. `RecordColumns` appends each record's facts to flat arrays (no object per line);
`records_table` turns runs of one or more sources into the ``records`` table, equal to
encoding the `traceidx.model.Record` objects `RecordColumns.objects` describes.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from traceidx.model import ByteRange, Record
from traceidx.schema import table_schema

#: `occurred_at` of a record the runtime wrote no time on
NO_TIME = -(1 << 63)
_FINGERPRINT_CHARS = 32


class RecordColumns:
    """Consecutive Records of one source, from position `first` on."""

    __slots__ = (
        "ends",
        "fingerprints",
        "first",
        "ids",
        "native_types",
        "source_id",
        "starts",
        "statuses",
        "times",
    )

    def __init__(self, source_id: int, first: int = 0) -> None:
        self.source_id = source_id
        self.first = first
        self.ids = array("q")
        self.starts = array("q")
        self.ends = array("q")
        self.times = array("q")
        self.fingerprints = bytearray()  # 32 lowercase hex characters per record
        self.statuses: list[str] = []
        self.native_types: list[str | None] = []

    def __len__(self) -> int:
        return len(self.ids)

    def append(
        self,
        record_id: int,
        start: int,
        end: int,
        fingerprint: bytes,
        status: str,
        occurred_at: int | None,
        native_type: str | None,
    ) -> None:
        """The next record (at position ``first + len(self)``)."""
        self.ids.append(record_id)
        self.starts.append(start)
        self.ends.append(end)
        self.times.append(NO_TIME if occurred_at is None else occurred_at)
        self.fingerprints += fingerprint
        self.statuses.append(status)
        self.native_types.append(native_type)

    def rest(self) -> RecordColumns:
        """An empty run continuing this one (for the records after these)."""
        return RecordColumns(self.source_id, self.first + len(self))

    def objects(self) -> list[Record]:
        """The domain objects these columns describe."""
        out = []
        for i, record_id in enumerate(self.ids):
            time = self.times[i]
            fingerprint = self.fingerprints[32 * i : 32 * i + 32].decode("ascii")
            out.append(
                Record(
                    record_id=record_id,
                    source_id=self.source_id,
                    source_position=self.first + i,
                    content_range=ByteRange(self.starts[i], self.ends[i]),
                    fingerprint=fingerprint,
                    parse_status=self.statuses[i],  # type: ignore[arg-type]
                    occurred_at=None if time == NO_TIME else time,
                    native_type=self.native_types[i],
                )
            )
        return out


def _int64(values: array[int]) -> pa.Array:
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def records_table(runs: Sequence[RecordColumns]) -> pa.Table:
    """The ``records`` table of runs of records (of one or more sources), in order."""
    ids, starts, ends, times, positions, sources = (array("q") for _ in range(6))
    fingerprints = bytearray()
    statuses: list[str] = []
    native_types: list[str | None] = []
    for run in runs:
        count = len(run)
        ids += run.ids
        starts += run.starts
        ends += run.ends
        times += run.times
        positions += array("q", range(run.first, run.first + count))
        sources += array("q", [run.source_id]) * count
        fingerprints += run.fingerprints
        statuses += run.statuses
        native_types += run.native_types
    count = len(ids)
    offsets = array("i", range(0, _FINGERPRINT_CHARS * (count + 1), _FINGERPRINT_CHARS))
    fingerprint = pa.Array.from_buffers(
        pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(bytes(fingerprints))]
    )
    raw_times = _int64(times)
    occurred = pc.if_else(pc.equal(raw_times, NO_TIME), None, raw_times)
    schema = table_schema("records")
    content_range = pa.StructArray.from_arrays(
        [_int64(starts), _int64(ends)], fields=list(schema.field("content_range").type)
    )
    columns = [
        _int64(ids),
        _int64(sources),
        _int64(positions),
        content_range,
        fingerprint,
        pa.array(statuses, pa.string()),
        occurred.cast(schema.field("occurred_at").type),
        pa.array(native_types, pa.string()),
    ]
    return pa.Table.from_arrays(columns, schema=schema)
