"""Staging a generation: rows spooled to files by the workers, then each changed part written once.

Workers write the rows they project as Arrow IPC files to a private staging folder
(``<dataset>/.staging-<generation>/``): per batch of sources one file per table, holding a run
of record batches per group (runtime and month), and for a long source the files of rows it
settled while it was read. A run keeps its sources ordered by their *fine bucket* (the session
id modulo `MAX_BUCKETS`, bits reversed) and says how many rows each fine bucket holds
(`Spooled.segments`). A group's bucket count is a power of two that divides `MAX_BUCKETS`, so
whatever count the build settles on, the rows of one partition are a single slice of each
run: a part takes its rows without filtering them, however much its group grew (a slice that
is only part of a record batch is copied, so that a part never keeps a whole batch alive).
The build process keeps only where each group's rows are, so its memory grows neither with the
corpus nor with a single source. When every source is in, each changed partition's part is
streamed, piece by piece, from the previous part's rows that are still current (rows of sources
that changed or went away are dropped, by ``source_id``) followed by its slices of the spooled
runs, into a Parquet file under the new generation's name, one row group per `ROW_GROUP_BYTES`
of rows (`PartWriter`). When a group's bucket count grew, a previous part's rows are read once
for several of its new partitions and routed to each by source (`Split`). Parts of partitions
that did not change are not touched. The stage is in the store's working folder
(traceidx.store.base): for a local dataset its own folder, where a part is written in place; for
a dataset on object storage (traceidx.store.remote) a local folder, where a part is written,
then uploaded and removed, and previous parts are read from the store in ranged reads.
"""

from __future__ import annotations

import shutil
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from traceidx.store.base import Store
from traceidx.store.dataset import MAX_BUCKETS, STAGING_PREFIX, Partition, part_file
from traceidx.store.manifest import PartFile
from traceidx.tables.encode import ID_COLUMNS, check_ids, id_column
from traceidx.tables.schema import dictionary_columns, statistics_columns, table_schema

PARQUET_OPTIONS: dict[str, object] = {"compression": "zstd"}
#: a row group of a written part holds about this many bytes of Arrow data
ROW_GROUP_BYTES = 64 << 20
#: rows read at a time from a previous part
READ_ROWS = 8 * 1024
#: spooled rows are written through a buffer of this size (not one write per Arrow buffer)
SPOOL_BUFFER = 1 << 20


#: bits of a bucket among `MAX_BUCKETS` (a power of two)
_FINE_BITS = MAX_BUCKETS.bit_length() - 1


def fine_bucket(session_id: int) -> int:
    """A session's bucket among `MAX_BUCKETS` (its bucket among any fewer is this modulo
    their count)."""
    return session_id % MAX_BUCKETS


def fine_order(fine: int) -> int:
    """Where the sessions of a fine bucket sort within a spooled run: the bucket with its bits
    reversed, so that the sessions of any one bucket among ``2**k`` are contiguous."""
    return int(f"{fine:0{_FINE_BITS}b}"[::-1], 2) if _FINE_BITS else 0


@dataclass(frozen=True, slots=True)
class Spooled:
    """Where spooled rows are: record batches ``[first, first + count)`` of an IPC file, their
    ids (taken when they were written, so the build process need not read them back), and
    how many of their rows each bucket among `MAX_BUCKETS` holds, in order (`segments`)."""

    path: str
    first: int
    count: int
    ids: pa.ChunkedArray | None = None
    segments: tuple[tuple[int, int], ...] = ()
    #: the sources whose rows these are (None: not known; then each piece is checked for
    #: rows of sources that publish none, `Stage.skip`)
    sources: frozenset[int] | None = None

    def of_bucket(self, fine: int, source: int) -> Spooled:
        """These rows, all of one source whose session is in one bucket among `MAX_BUCKETS`."""
        rows = sum(count for _, count in self.segments)
        return replace(self, segments=((fine, rows),), sources=frozenset((source,)))

    def read(self, readers: _Readers) -> Iterator[pa.Table]:
        """The rows, one record batch at a time (read, not mapped: memory stays bounded)."""
        for i in range(self.first, self.first + self.count):
            yield pa.Table.from_batches([readers.batch(self.path, i)])

    def spans(self, buckets: int, wanted: Collection[int]) -> list[tuple[int, int, int]]:
        """The rows of each wanted bucket among `buckets` (a power of two that divides
        `MAX_BUCKETS`): ``(bucket, start, end)``, one span per bucket when the segments are in
        `fine_order`."""
        out: list[tuple[int, int, int]] = []
        at = 0
        for fine, rows in self.segments:
            bucket = fine % buckets
            if rows and bucket in wanted:
                if out and out[-1][0] == bucket and out[-1][2] == at:
                    out[-1] = (bucket, out[-1][1], at + rows)
                else:
                    out.append((bucket, at, at + rows))
            at += rows
        return out

    def select(
        self, readers: _Readers, buckets: int, wanted: Collection[int]
    ) -> Iterator[tuple[int, pa.Table]]:
        """The rows of the wanted buckets among `buckets`, as slices of the record batches
        read (each read once), with their bucket."""
        spans = self.spans(buckets, wanted)
        if not spans:
            return
        offset = 0
        for piece in self.read(readers):
            end = offset + piece.num_rows
            for bucket, start, stop in spans:
                lo, hi = max(start, offset), min(stop, end)
                if lo < hi:
                    whole = lo == offset and hi == end
                    yield bucket, piece if whole else _copied(piece.slice(lo - offset, hi - lo))
            offset = end
            if offset >= spans[-1][2]:
                break


class _Readers:
    """Open spool files, kept for a whole publication: parsing a file's footer and schema
    costs more than reading a small run of rows from it (reads are positional, so threads
    may share a reader; a lock per file keeps them apart anyway). At most `MAX_OPEN` stay
    open; the least recently used is dropped (closed once no thread reads it)."""

    MAX_OPEN = 256

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: OrderedDict[
            str, tuple[threading.Lock, pa.OSFile, pa.ipc.RecordBatchFileReader]
        ] = OrderedDict()

    def batch(self, path: str, index: int) -> pa.RecordBatch:
        with self._lock:
            entry = self._open.get(path)
            if entry is None:
                source = pa.OSFile(path, "rb")
                entry = (threading.Lock(), source, pa.ipc.open_file(source))
                self._open[path] = entry
                if len(self._open) > self.MAX_OPEN:
                    self._open.popitem(last=False)
            else:
                self._open.move_to_end(path)
        lock, _, reader = entry
        with lock:
            return reader.get_batch(index)

    def close(self) -> None:
        for _, source, _ in self._open.values():
            source.close()
        self._open.clear()


def _kept_runs(rows: pa.Table, gone: pa.ChunkedArray) -> Iterator[pa.Table]:
    """The rows not `gone`, as slices: a source's rows are contiguous, so skipping a few
    sources leaves a few runs, taken without copying a column."""
    flags = np.asarray(gone.to_numpy(zero_copy_only=False), dtype=bool)
    edges = np.flatnonzero(np.diff(flags)) + 1
    starts = np.concatenate(([0], edges))
    stops = np.concatenate((edges, [len(flags)]))
    for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
        if not flags[start]:
            yield rows.slice(start, stop - start)


def _copied(rows: pa.Table) -> pa.Table:
    """Rows that hold no reference to the buffers they were sliced from (a part keeps its
    rows until it writes them: a slice would keep a whole record batch of a run alive)."""
    columns = [pa.concat_arrays(column.chunks) for column in rows.columns]
    return pa.Table.from_arrays(columns, schema=rows.schema)


#: a run of rows to spool: its key, its rows and its `Spooled.segments`
Run = tuple[str, pa.Table, tuple[tuple[int, int], ...]]


def spool(path: Path, table: str, runs: list[Run]) -> list[tuple[str, Spooled]]:
    """Write runs of rows of one table, each under a key, to one IPC file; where each run is."""
    out: list[tuple[str, Spooled]] = []
    index = 0
    schema = runs[0][1].schema
    sink = pa.output_stream(str(path), compression=None, buffer_size=SPOOL_BUFFER)
    with sink, pa.ipc.new_file(sink, schema) as writer:
        for key, data, segments in runs:
            batches = data.to_batches()
            for batch in batches:
                writer.write_batch(batch)
            ids = id_column(table, data)
            out.append((key, Spooled(str(path), index, len(batches), ids, segments)))
            index += len(batches)
    return out


def _source_ids(table: str, data: pa.Table) -> pa.Array:
    if table == "sessions":
        return pc.list_element(data.column("source_ids"), 0)
    return data.column("source_id")


@dataclass(frozen=True, slots=True)
class Split:
    """Where the rows of a partition whose group's buckets grew go: each source's rows to
    the new partition of its bucket (`sources` sorted, `buckets` the bucket of each)."""

    targets: tuple[Partition, ...]
    sources: pa.Array
    buckets: pa.Array

    def route(self, table: str, piece: pa.Table) -> Iterator[tuple[Partition, pa.Table]]:
        """The rows of a piece for each target (rows of no listed source go nowhere)."""
        where = pc.index_in(_source_ids(table, piece), value_set=self.sources)
        buckets = pc.take(self.buckets, where)
        for target in self.targets:
            rows = piece.filter(pc.equal(buckets, target.bucket))
            if rows.num_rows:
                yield target, rows


class PartWriter:
    """Writes one part (a partition's table) under the new generation's name, piece by
    piece: a row group per `group_bytes` of rows; `transform` applies to each row group's
    rows before they are written. Ids must be unique within the part."""

    def __init__(
        self,
        stage: Stage,
        partition: Partition,
        table: str,
        transform: Callable[[pa.Table], pa.Table] | None = None,
        group_bytes: int = ROW_GROUP_BYTES,
    ) -> None:
        self.table = table
        self.store = stage.store
        self.relative = partition.path(table, stage.generation, stage.tag)
        self.target = stage.store.folder / self.relative
        self.transform = transform
        self.group_bytes = group_bytes
        self.options = {
            **PARQUET_OPTIONS,
            "use_dictionary": list(dictionary_columns(table)),
            "write_statistics": list(statistics_columns(table)),
        }
        self.writer: pq.ParquetWriter | None = None
        self.group: list[pa.Table] = []
        self.size = 0
        self.ids: list[pa.Array] = []

    def add(self, piece: pa.Table) -> None:
        """Take the next rows (written as a row group once `group_bytes` of them are held)."""
        if not piece.num_rows:
            return
        column = id_column(self.table, piece)
        if column is not None:
            self.ids.append(column)
        self.group.append(piece)
        self.size += piece.nbytes
        if self.size >= self.group_bytes:
            self._flush()

    def _flush(self) -> None:
        data = pa.concat_tables(self.group)
        if self.transform is not None:
            data = self.transform(data)
        if self.writer is None:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            self.writer = pq.ParquetWriter(self.target, data.schema, **self.options)
        self.writer.write_table(data, row_group_size=max(1, data.num_rows))
        self.group.clear()
        self.size = 0

    def close(self) -> PartFile | None:
        """Finish the part; its dataset-relative path, size and checksum (None when it has no
        rows)."""
        if self.group:
            self._flush()
        if self.writer is None:
            return None
        self._close_file()
        check_ids(self.table, self.ids)
        written = part_file(self.store.folder, self.relative)
        self.store.put(self.target, self.relative)  # in place locally, uploaded remotely
        return written

    def discard(self) -> None:
        """Give up on the part after an error: its file, if begun, is closed and left as
        garbage (no manifest names it; the next build removes it)."""
        self._close_file()

    def _close_file(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class Stage:
    """The rows of one build that are not yet published, by group and table."""

    def __init__(self, store: Store, generation: int) -> None:
        #: the dataset the parts are put into (traceidx.store.base), whose working folder
        #: holds the stage
        self.store = store
        self.generation = generation
        self.tag = store.tag
        self.folder = store.folder / f"{STAGING_PREFIX}{generation:06d}"
        self._spooled: dict[tuple[str, str], list[Spooled]] = defaultdict(list)
        self._lineage: dict[str, list[pa.Table]] = defaultdict(list)
        self._readers = _Readers()
        #: sources whose rows the workers staged but that publish none (copies: the source row
        #: staged for them instead, which names their original, is kept)
        self.skip: set[int] = set()

    def __bool__(self) -> bool:
        return bool(self._spooled)

    def partitions(self, layout: dict[str, int]) -> set[Partition]:
        """The partitions that staged rows go to, in a `layout` (group -> bucket count)."""
        out: set[Partition] = set()
        for (group, _), runs in self._spooled.items():
            runtime, month = group.split("/")
            buckets = layout.get(group, 1)
            for spooled in runs:
                fines = {fine for fine, _ in spooled.segments}
                out.update(Partition(runtime, month, fine % buckets) for fine in fines)
        return out

    def add(self, group: str, table: str, spooled: Spooled) -> None:
        """Stage spooled rows of a group (in the order they are added)."""
        self._spooled[(group, table)].append(spooled)

    def previous(
        self, table: str, previous: str | None, drop: pa.Array, drop_ids: pa.Array | None = None
    ) -> Iterator[pa.Table]:
        """The rows of a previous part that stay, a bounded piece at a time: all but those of
        the `drop` sources and those whose id is in `drop_ids`."""
        if previous is None:
            return
        id_name = ID_COLUMNS.get(table)
        schema = table_schema(table)
        old = pq.ParquetFile(self.opened(previous))
        for batch in old.iter_batches(batch_size=READ_ROWS):
            piece = pa.Table.from_batches([batch])
            if piece.schema != schema:
                piece = piece.cast(schema)
            gone = None
            if len(drop):
                gone = pc.is_in(_source_ids(table, piece), value_set=drop)
            if drop_ids is not None and len(drop_ids) and id_name is not None:
                named = pc.is_in(piece.column(id_name), value_set=drop_ids)
                gone = named if gone is None else pc.or_(gone, named)
            if gone is not None:
                piece = piece.filter(pc.invert(gone))
            yield piece

    def opened(self, relative: str) -> Any:
        """A published file, to read (a local path, or a file on the remote store)."""
        return self.store.open(relative)

    def staged(
        self, group: str, table: str, buckets: int, wanted: Collection[int]
    ) -> Iterator[tuple[int, pa.Table]]:
        """The staged rows of the wanted buckets of a group with `buckets` buckets, in the order
        they were staged, a bounded piece at a time, with their bucket."""
        skip = pa.array(sorted(self.skip), pa.int64())
        for spooled in self._spooled.get((group, table), []):
            known = spooled.sources
            check = bool(self.skip) and (known is None or not self.skip.isdisjoint(known))
            for bucket, rows in spooled.select(self._readers, buckets, wanted):
                if check:
                    gone = pc.is_in(_source_ids(table, rows), value_set=skip)
                    if table == "sources":
                        gone = pc.and_(gone, pc.is_null(rows.column("duplicate_of")))
                    if pc.any(gone).as_py():
                        for kept in _kept_runs(rows, gone):
                            yield bucket, kept
                        continue
                yield bucket, rows

    def note(self, table: str, candidates: pa.Table) -> None:
        """Keep what lineage reads of rows staged for a table (projection.lineage.candidates)."""
        self._lineage[table].append(candidates)

    def candidates(self, table: str) -> pa.Table | None:
        """What lineage reads of every row staged for a table (copies' included: `skip`
        names them); None: nothing."""
        found = self._lineage.get(table)
        return pa.concat_tables(found) if found else None

    def discard(self) -> None:
        """Remove the staging folder."""
        self._readers.close()
        shutil.rmtree(self.folder, ignore_errors=True)
