"""Encoding: ingested sources to Arrow tables grouped by dataset partition.

Rows are ordered deterministically (sources by locator, then records by position, loops by
session position, items by emission order), so the same input encodes to the same tables.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pyarrow as pa

from traceidx.dataset import Partition, partition_of
from traceidx.ingest import SourceResult
from traceidx.model import TABLES
from traceidx.schema import to_table


class IdCollision(RuntimeError):
    """Two different facts received the same id: publishing would merge them."""


_ID_FIELDS = {
    "sources": "source_id",
    "records": "record_id",
    "loops": "loop_id",
    "items": "item_id",
}


def _check_unique(table: str, objs: list[Any], seen: set[int]) -> None:
    field = _ID_FIELDS.get(table)
    if field is None:
        return
    for obj in objs:
        value = getattr(obj, field)
        if value in seen:
            raise IdCollision(f"{table}: id {value} would name two facts; nothing was published")
        seen.add(value)


def encode(results: list[SourceResult]) -> dict[Partition, dict[str, pa.Table]]:
    """Arrow tables per partition for every indexed source (raises IdCollision on a clash)."""
    seen: dict[str, set[int]] = defaultdict(set)
    grouped: dict[Partition, dict[str, list[Any]]] = defaultdict(lambda: {t: [] for t in TABLES})
    for result in sorted(results, key=lambda r: r.locator):
        if result.state != "indexed" or result.projection is None or result.source is None:
            continue
        session = result.projection.session
        part = partition_of(session.runtime, session.created_at, session.session_id)
        rows = grouped[part]
        rows["sources"].append(result.source)
        rows["records"].extend(result.records)
        rows["sessions"].append(session)
        rows["loops"].extend(result.projection.loops)
        rows["items"].extend(result.projection.items)
    for tables in grouped.values():
        for table, objs in tables.items():
            _check_unique(table, objs, seen[table])
    return {
        part: {table: to_table(table, objs) for table, objs in tables.items()}
        for part, tables in grouped.items()
    }
