"""Records kept column by column as a source is framed.

A source yields one Record per complete line, so its records are a run of consecutive
positions, and nothing is kept as an object per line:

* `SourceKeys` holds, for every position of a source from its first line, the record id,
  the runtime's time and the fingerprint: the whole source needs them (the projector looks ids
  and times up, a checkpoint keeps them, the source's digests are taken over them);
* `RecordColumns` holds the rest of a run of records (where each line is, how it parsed, its
  native type, and for a database source the table and key of each row) and reads the keys
  of its positions from the source's `SourceKeys`.

`traceidx.tables.records.records_table` turns runs of one or more sources into the
``records`` table, equal to encoding the `traceidx.domain.model.Record` objects
`RecordColumns.objects` describes.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection
from hashlib import blake2b
from typing import Final

import numpy as np

from traceidx.domain.model import ByteRange, Record, RowKey
from traceidx.sources.idruns import record_ids

#: `occurred_at` of a record the runtime wrote no time on
NO_TIME: Final = -(1 << 63)


class SourceKeys:
    """Record id, time and fingerprint of every record of one source, by position (the ids
    are computed in bulk, for the positions added since they were last asked for)."""

    __slots__ = ("_ids", "fingerprints", "source_id", "times")

    def __init__(self, source_id: int = 0, times: bytes = b"", fingerprints: bytes = b"") -> None:
        self.source_id = source_id
        self._ids = array("q")
        # a list, not an array: appending to an array parses its argument (~4 times slower)
        self.times: list[int] = np.frombuffer(times, dtype=np.int64).tolist()
        self.fingerprints = bytearray(fingerprints)  # 32 lowercase hex characters each

    def __len__(self) -> int:
        return len(self.times)

    @property
    def ids(self) -> array[int]:
        """The record id of every position so far."""
        done, count = len(self._ids), len(self.times)
        if done < count:
            self._ids.extend(record_ids(self.source_id, done, count - done))
        return self._ids

    def add(self, occurred_at: int | None, fingerprint: bytes) -> None:
        """The keys of the next position."""
        self.times.append(NO_TIME if occurred_at is None else occurred_at)
        self.fingerprints += fingerprint

    def times_bytes(self) -> bytes:
        """The times, as native 64-bit integers (how a checkpoint keeps them)."""
        return np.array(self.times, dtype=np.int64).tobytes()

    def time(self, position: int) -> int | None:
        """The runtime's time on the record at `position` (None if none, or not read yet)."""
        if position >= len(self.times):
            return None
        value = self.times[position]
        return None if value == NO_TIME else value

    def digests(self, counts: Collection[int] = ()) -> tuple[str, dict[int, str]]:
        """BLAKE2b-128 over the fingerprints in order: of all of them, and of the first
        `count` of them for each of `counts` this source reaches."""
        hasher = blake2b(digest_size=16)
        prefixes: dict[int, str] = {}
        done = 0
        for count in sorted(c for c in counts if c <= len(self)):
            hasher.update(self.fingerprints[32 * done : 32 * count])
            prefixes[count] = hasher.hexdigest()
            done = count
        hasher.update(self.fingerprints[32 * done :])
        return hasher.hexdigest(), prefixes


class RecordColumns:
    """Consecutive Records of one source, from position `first` on (their keys in `keys`)."""

    __slots__ = (
        "ends",
        "first",
        "keys",
        "native_types",
        "paths",
        "row_keys",
        "row_tables",
        "source_id",
        "starts",
        "statuses",
    )

    def __init__(self, source_id: int, keys: SourceKeys, first: int = 0) -> None:
        self.source_id = source_id
        self.keys = keys
        self.first = first
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.statuses: list[str] = []
        self.native_types: list[str | None] = []
        self.paths: list[str | None] = []  # the JSON path of a document's record
        #: the table and key of each record, for a database source's (else empty)
        self.row_tables: list[str] = []
        self.row_keys: list[str] = []

    def __len__(self) -> int:
        return len(self.starts)

    def append(
        self, start: int, end: int, status: str, native_type: str | None, path: str | None = None
    ) -> None:
        """The next record (at position ``first + len(self)``; its keys already added)."""
        self.starts.append(start)
        self.ends.append(end)
        self.statuses.append(status)
        self.native_types.append(native_type)
        self.paths.append(path)

    def add_row(self, table: str, key: str) -> None:
        """The table and key of the record just appended (a database source's)."""
        self.row_tables.append(table)
        self.row_keys.append(key)

    def rest(self) -> RecordColumns:
        """An empty run continuing this one (for the records after these)."""
        return RecordColumns(self.source_id, self.keys, self.first + len(self))

    def objects(self) -> list[Record]:
        """The domain objects these columns describe."""
        out, known = [], self.keys.ids
        rows = len(self.row_keys) == len(self)
        for i in range(len(self)):
            position = self.first + i
            fingerprint = self.keys.fingerprints[32 * position : 32 * position + 32]
            out.append(
                Record(
                    record_id=known[position],
                    source_id=self.source_id,
                    source_position=position,
                    content_range=ByteRange(self.starts[i], self.ends[i]),
                    fingerprint=fingerprint.decode("ascii"),
                    parse_status=self.statuses[i],  # type: ignore[arg-type]
                    occurred_at=self.keys.time(position),
                    native_type=self.native_types[i],
                    json_path=self.paths[i],
                    row=RowKey(self.row_tables[i], self.row_keys[i]) if rows else None,
                )
            )
        return out
