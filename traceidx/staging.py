"""Staging a generation: new rows spooled by partition, then each changed part assembled once.

Rows of freshly projected sources arrive batch by batch. They are buffered per partition and
table; when the buffers exceed a memory budget they are spilled as Arrow IPC files (cheap to
write, memory-mapped when read back) to a private staging folder
(``<dataset>/.staging-<generation>/``), so memory stays bounded however large the corpus is.
When every source is in, each changed partition's part is assembled from the previous part's
rows that are still current (rows of sources that changed or went away are dropped, by
``source_id``) followed by the staged rows, and written under the new generation's name.
Parts of partitions that did not change are not touched.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from traceidx.dataset import STAGING_PREFIX, Partition
from traceidx.schema import dictionary_columns, table_schema

#: spill staged rows to disk beyond this many bytes of Arrow buffers
DEFAULT_BUDGET = 96 << 20
PARQUET_OPTIONS: dict[str, object] = {"compression": "zstd", "write_statistics": True}


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
            data = pa.concat_tables(pieces)
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, data.schema) as out:
                out.write_table(data)
            self._chunks[key].append(path)
        self._buffers.clear()
        self._buffered = 0
        self._spills += 1

    def assemble(
        self, partition: Partition, table: str, previous: str | None, drop: pa.Array
    ) -> pa.Table:
        """The partition's rows for the new generation."""
        schema = table_schema(table)
        pieces: list[pa.Table] = []
        if previous is not None:
            old = pq.read_table(self.dataset / previous, schema=schema)
            if len(drop):
                old = old.filter(pc.invert(pc.is_in(_source_ids(table, old), value_set=drop)))
            pieces.append(old)
        key = (partition, table)
        for path in self._chunks.get(key, []):
            # no `with`: the table's buffers are views of the mapping, which must outlive them
            pieces.append(pa.ipc.open_file(pa.memory_map(str(path))).read_all())
        pieces.extend(self._buffers.get(key, []))
        if not pieces:
            return schema.empty_table()
        return pa.concat_tables(pieces)

    def write(self, partition: Partition, table: str, data: pa.Table) -> str:
        """Write an assembled part under the new generation's name; its dataset-relative path."""
        relative = partition.path(table, self.generation)
        target = self.dataset / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        options = {**PARQUET_OPTIONS, "use_dictionary": list(dictionary_columns(table))}
        pq.write_table(data, target, **options)
        return relative

    def discard(self) -> None:
        """Remove the staging folder."""
        shutil.rmtree(self.folder, ignore_errors=True)
