"""Encoding: rows by table to Arrow tables, and the id-uniqueness guard of a build.

Rows are ordered deterministically (records by position, loops by session position, items by
emission order), so the same input encodes to the same tables. Encoding runs in the worker
that ingested the source (`traceidx.pipeline.worker.source_rows` gives its rows by table); only
Arrow tables cross the process boundary.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from traceidx.errors import IdCollision
from traceidx.tables.items import items_table
from traceidx.tables.records import records_table
from traceidx.tables.schema import to_table

ID_COLUMNS = {
    "sources": "source_id",
    "records": "record_id",
    "loops": "loop_id",
    "items": "item_id",
    "model_calls": "call_id",
}


#: tables whose rows are kept column by column, in runs, and how to encode those runs
_RUNS: dict[str, Callable[[list[Any]], pa.Table]] = {
    "records": records_table,
    "items": items_table,
}


def encode_rows(rows: dict[str, list[Any]]) -> dict[str, pa.Table]:
    """Arrow tables of rows by table: domain objects, or runs of columns (`RecordColumns`,
    `ItemColumns`) for records and items."""
    return {
        table: _RUNS[table](objs) if table in _RUNS else to_table(table, objs)
        for table, objs in rows.items()
    }


def row_count(table: str, objs: list[Any]) -> int:
    """How many rows a table's entry of `encode_rows` input holds."""
    if table in _RUNS:
        return sum(len(run) for run in objs)
    return len(objs)


class IdGuard:
    """Refuses a build in which two facts of one table share an id.

    It sees every row a build publishes anew (keeping only the id columns, 8 bytes per row,
    and checking them together at the end), and the kept rows of every part it rewrites
    (`check_ids`, as a part is written); rows in parts a build does not touch were checked
    when they were published.
    """

    def __init__(self) -> None:
        self._ids: dict[str, list[pa.ChunkedArray]] = defaultdict(list)

    def take(self, table: str, ids: pa.ChunkedArray | None) -> None:
        """Take the ids of a run of new rows (checked with all the others by `finish`)."""
        if ids is not None:
            self._ids[table].append(ids)

    def finish(self) -> None:
        """Refuse duplicates across every batch of the build."""
        for table, columns in self._ids.items():
            check_ids(table, columns)


def id_column(table: str, data: pa.Table) -> pa.ChunkedArray | None:
    """The id column of a table's rows, copied out of the buffers it shares (None if the table
    has no id column)."""
    column = ID_COLUMNS.get(table)
    if column is None:
        return None
    # concatenated, not `copy_to`: a slice's copy would carry its parent's whole buffer
    values = data.column(column)
    return pa.chunked_array([pa.concat_arrays([c]) for c in values.chunks], values.type)


def check_ids(table: str, columns: list[pa.ChunkedArray]) -> None:
    """Ids are unique within one part or build (given its id columns, piece by piece).

    Sorted and compared with their neighbours: a hash count of distinct values needs tens of
    times the memory of the ids themselves (numpy sorts them about ten times faster than an
    Arrow sort and take)."""
    chunks = [c for column in columns for c in column.chunks if len(c)]
    if sum(len(c) for c in chunks) < 2:
        return
    values = np.concatenate([c.to_numpy(zero_copy_only=False) for c in chunks])
    values.sort()
    if bool((values[1:] == values[:-1]).any()):
        raise IdCollision(f"{table}: an id names two facts; nothing was published")
