"""Staging a generation: new rows spooled by partition, then each changed part assembled once.

Rows of freshly projected sources arrive batch by batch. They are buffered per partition and
table; when the buffers exceed a memory budget they are spilled as Arrow IPC files to a private
staging folder (``<dataset>/.staging-<generation>/``), where workers also leave the rows of
long sources they flushed while reading (`add_file`), so memory stays bounded however large the
corpus or a single source is. When every source is in, each changed partition's part is
streamed, piece by piece, from the previous part's rows that are still current (rows of sources
that changed or went away are dropped, by ``source_id``) followed by the staged rows, into a
Parquet file under the new generation's name, one row group per `ROW_GROUP_BYTES` of rows.
Parts of partitions that did not change are not touched.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from traceidx.dataset import STAGING_PREFIX, Partition
from traceidx.encode import check_ids, id_column
from traceidx.schema import dictionary_columns, table_schema

#: spill staged rows to disk beyond this many bytes of Arrow buffers
DEFAULT_BUDGET = 96 << 20
PARQUET_OPTIONS: dict[str, object] = {"compression": "zstd", "write_statistics": True}
#: a row group of a written part holds about this many bytes of Arrow data
ROW_GROUP_BYTES = 64 << 20
#: rows read at a time from a previous part
READ_ROWS = 64 * 1024


def write_arrow(path: Path, data: pa.Table) -> None:
    """Write a table as an Arrow IPC file."""
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, data.schema) as out:
        out.write_table(data)


def read_arrow(path: Path) -> Iterator[pa.Table]:
    """The record batches of an Arrow IPC file, one at a time, as tables."""
    with pa.OSFile(str(path), "rb") as source:
        reader = pa.ipc.open_file(source)
        for i in range(reader.num_record_batches):
            yield pa.Table.from_batches([reader.get_batch(i)])


def _source_ids(table: str, data: pa.Table) -> pa.Array:
    if table == "sessions":
        return pc.list_element(data.column("source_ids"), 0)
    return data.column("source_id")


class Stage:
    """The rows of one build that are not yet published."""

    def __init__(self, dataset: Path, generation: int, budget: int | None = None) -> None:
        self.dataset = dataset
        self.generation = generation
        self.budget = DEFAULT_BUDGET if budget is None else budget
        self.folder = dataset / f"{STAGING_PREFIX}{generation:06d}"
        self._buffers: dict[tuple[Partition, str], list[pa.Table]] = defaultdict(list)
        self._chunks: dict[tuple[Partition, str], list[Path]] = defaultdict(list)
        self._buffered = 0
        self._spills = 0

    @property
    def partitions(self) -> set[Partition]:
        return {p for p, _ in self._buffers} | {p for p, _ in self._chunks}

    def add(self, partition: Partition, tables: dict[str, pa.Table]) -> None:
        """Stage one source's rows."""
        for table, data in tables.items():
            if data.num_rows:
                self._buffers[(partition, table)].append(data)
                self._buffered += data.nbytes
        if self._buffered > self.budget:
            self.spill()

    def spill(self) -> None:
        """Write every buffer to a chunk file and free it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for key, pieces in self._buffers.items():
            partition, table = key
            path = self.folder / f"{table}-{partition.key.replace('/', '_')}-{self._spills}.arrow"
            schema = pieces[0].schema
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema) as out:
                for piece in pieces:
                    out.write_table(piece)
            self._chunks[key].append(path)
        self._buffers.clear()
        self._buffered = 0
        self._spills += 1

    def add_file(self, partition: Partition, table: str, path: Path) -> None:
        """Stage rows a worker wrote to an Arrow IPC file in the staging folder."""
        self._chunks[(partition, table)].append(path)

    def pieces(
        self, partition: Partition, table: str, previous: str | None, drop: pa.Array
    ) -> Iterator[pa.Table]:
        """The partition's rows for the new generation, a bounded piece at a time."""
        schema = table_schema(table)
        if previous is not None:
            old = pq.ParquetFile(self.dataset / previous)
            for batch in old.iter_batches(batch_size=READ_ROWS):
                piece = pa.Table.from_batches([batch])
                if piece.schema != schema:
                    piece = piece.cast(schema)
                if len(drop):
                    keep = pc.invert(pc.is_in(_source_ids(table, piece), value_set=drop))
                    piece = piece.filter(keep)
                yield piece
        key = (partition, table)
        for path in self._chunks.get(key, []):
            yield from read_arrow(path)
        yield from self._buffers.get(key, [])

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
        shutil.rmtree(self.folder, ignore_errors=True)
