"""Staging a generation: rows spooled to files by the workers, then each changed part written once.

Workers write the rows they project as Arrow IPC files to a private staging folder
(``<dataset>/.staging-<generation>/``): per batch of sources one file per table, holding a run
of record batches per partition, and for a long source the files of rows it settled while it
was read. The build process keeps only where each partition's rows are (`Spooled`), so its
memory grows neither with the corpus nor with a single source. When every source is in, each
changed partition's part is streamed, piece by piece, from the previous part's rows that are
still current (rows of sources that changed or went away are dropped, by ``source_id``)
followed by the spooled rows, into a Parquet file under the new generation's name, one row
group per `ROW_GROUP_BYTES` of rows. Parts of partitions that did not change are not touched.
"""

from __future__ import annotations

import shutil
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from traceidx.dataset import STAGING_PREFIX, Partition
from traceidx.encode import ID_COLUMNS, check_ids, id_column
from traceidx.schema import dictionary_columns, table_schema

PARQUET_OPTIONS: dict[str, object] = {"compression": "zstd", "write_statistics": True}
#: a row group of a written part holds about this many bytes of Arrow data
ROW_GROUP_BYTES = 64 << 20
#: rows read at a time from a previous part
READ_ROWS = 8 * 1024
#: spooled rows are written through a buffer of this size (not one write per Arrow buffer)
SPOOL_BUFFER = 1 << 20


@dataclass(frozen=True, slots=True)
class Spooled:
    """Where spooled rows are: record batches ``[first, first + count)`` of an IPC file, and
    their ids (taken when they were written, so the build process need not read them back)."""

    path: str
    first: int
    count: int
    ids: pa.ChunkedArray | None = None

    def read(self, readers: _Readers) -> Iterator[pa.Table]:
        """The rows, one record batch at a time (read, not mapped: memory stays bounded)."""
        for i in range(self.first, self.first + self.count):
            yield pa.Table.from_batches([readers.batch(self.path, i)])


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


def spool(path: Path, table: str, runs: list[tuple[str, pa.Table]]) -> list[tuple[str, Spooled]]:
    """Write runs of rows of one table, each under a key, to one IPC file; where each run is."""
    out: list[tuple[str, Spooled]] = []
    index = 0
    schema = runs[0][1].schema
    sink = pa.output_stream(str(path), compression=None, buffer_size=SPOOL_BUFFER)
    with sink, pa.ipc.new_file(sink, schema) as writer:
        for key, data in runs:
            batches = data.to_batches()
            for batch in batches:
                writer.write_batch(batch)
            out.append((key, Spooled(str(path), index, len(batches), id_column(table, data))))
            index += len(batches)
    return out


def _source_ids(table: str, data: pa.Table) -> pa.Array:
    if table == "sessions":
        return pc.list_element(data.column("source_ids"), 0)
    return data.column("source_id")


def _kept(table: str, piece: pa.Table, keep: pa.Array | None) -> pa.Table:
    if keep is None:
        return piece
    return piece.filter(pc.is_in(_source_ids(table, piece), value_set=keep))


class Stage:
    """The rows of one build that are not yet published, by partition and table."""

    def __init__(self, dataset: Path, generation: int) -> None:
        self.dataset = dataset
        self.generation = generation
        self.folder = dataset / f"{STAGING_PREFIX}{generation:06d}"
        self._spooled: dict[tuple[Partition, str], list[Spooled]] = defaultdict(list)
        self._readers = _Readers()

    @property
    def partitions(self) -> set[Partition]:
        return {p for p, _ in self._spooled}

    def add(self, partition: Partition, table: str, spooled: Spooled) -> None:
        """Stage spooled rows of a partition (in the order they are added)."""
        self._spooled[(partition, table)].append(spooled)

    def pieces(
        self,
        partition: Partition,
        table: str,
        previous: str | None,
        drop: pa.Array,
        drop_ids: pa.Array | None = None,
        keep: pa.Array | None = None,
    ) -> Iterator[pa.Table]:
        """The partition's rows for the new generation, a bounded piece at a time: the previous
        part's rows but those of the `drop` sources and those whose id is in `drop_ids`, then
        the staged rows; only the rows of the `keep` sources, when given (a bucket split)."""
        id_name = ID_COLUMNS.get(table)
        schema = table_schema(table)
        if previous is not None:
            old = pq.ParquetFile(self.dataset / previous)
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
                yield _kept(table, piece, keep)
        for spooled in self._spooled.get((partition, table), []):
            for piece in spooled.read(self._readers):
                yield _kept(table, piece, keep)

    def write(
        self,
        partition: Partition,
        table: str,
        pieces: Iterable[pa.Table],
        transform: Callable[[pa.Table], pa.Table] | None = None,
    ) -> str | None:
        """Write a part under the new generation's name; its dataset-relative path (None when
        it has no rows). `transform` applies to each row group's rows before they are written.
        Ids must be unique within the part."""
        relative = partition.path(table, self.generation)
        target = self.dataset / relative
        options = {**PARQUET_OPTIONS, "use_dictionary": list(dictionary_columns(table))}
        writer: pq.ParquetWriter | None = None
        group: list[pa.Table] = []
        size = 0
        ids: list[pa.Array] = []

        def flush() -> None:
            nonlocal writer, size
            data = pa.concat_tables(group)
            if transform is not None:
                data = transform(data)
            if writer is None:
                target.parent.mkdir(parents=True, exist_ok=True)
                writer = pq.ParquetWriter(target, data.schema, **options)
            writer.write_table(data, row_group_size=max(1, data.num_rows))
            group.clear()
            size = 0

        try:
            for piece in pieces:
                if not piece.num_rows:
                    continue
                column = id_column(table, piece)
                if column is not None:
                    ids.append(column)
                group.append(piece)
                size += piece.nbytes
                if size >= ROW_GROUP_BYTES:
                    flush()
            if group:
                flush()
        finally:
            if writer is not None:
                writer.close()
        if writer is None:
            return None
        check_ids(table, ids)
        return relative

    def discard(self) -> None:
        """Remove the staging folder."""
        self._readers.close()
        shutil.rmtree(self.folder, ignore_errors=True)
