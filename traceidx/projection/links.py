"""Session links inside items, resolved at publication against the sessions the dataset holds.

An item that names another Session (a delegation's child, a subagent's session, a report's
source) keeps the id the trace states in the operational column ``linked_session_id``. Its
semantic member (``child_session_id`` / ``subagent_session_id`` / ``source_session_id``) is
published only while that Session exists in the dataset, as the contract requires; an
unresolved link reads as absent and the native reference stays in the Record.

Resolving when a part is written (rather than in the ``items`` view) keeps ``items`` a plain
scan of Parquet, so filters on ``semantic`` push down into the files. Links stay right when
only one side changes because a build rewrites every part holding an item whose linked
Session appeared or disappeared in that build (see traceidx.pipeline.job).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from traceidx.projection.lineage import override_array

#: semantic child -> its session reference member
LINK_MEMBERS = {
    "delegation": "child_session_id",
    "subagent_activity": "subagent_session_id",
    "subagent_report": "source_session_id",
}


def _published_links(items: pa.Table) -> pa.ChunkedArray:
    semantic = items.column("semantic")  # chunk by chunk: combining would copy every text
    out: pa.ChunkedArray | None = None
    for child, member in LINK_MEMBERS.items():
        values = pc.struct_field(pc.struct_field(semantic, child), member)
        out = values if out is None else pc.coalesce(out, values)
    assert out is not None
    return out


def resolve(
    items: pa.Table, known: pa.Array, overrides: dict[int, int | None] | None = None
) -> pa.Table:
    """`items` with every link member set to its linked Session if `known`, else absent;
    the items `overrides` names (delegations, projection.lineage) linked as it says instead."""
    if items.num_rows == 0:
        return items
    linked = items.column("linked_session_id")
    desired = pc.if_else(pc.is_in(linked, value_set=known), linked, pa.scalar(None, pa.int64()))
    if overrides:
        named, child = override_array(items, overrides)
        desired = pc.if_else(named, child, desired)
    current = _published_links(items)
    stale = pc.invert(pc.fill_null(pc.equal(current, desired), False))
    stale = pc.and_(stale, pc.or_(pc.is_valid(current), pc.is_valid(desired)))
    if not pc.any(stale).as_py():
        return items
    semantic = items.column("semantic")
    desired = desired.combine_chunks()
    chunks, at = [], 0
    for chunk in semantic.chunks:
        chunks.append(_resolve_chunk(chunk, desired.slice(at, len(chunk))))
        at += len(chunk)
    index = items.schema.get_field_index("semantic")
    column = pa.chunked_array(chunks, semantic.type)
    return items.set_column(index, items.schema.field(index), column)


def _rebuilt(array: pa.StructArray, replace: dict[str, pa.Array]) -> pa.StructArray:
    """`array` with some children replaced (rows where `array` is absent stay absent). The
    other children are taken as stored (`field`, a view), not flattened with the struct's
    validity (`struct_field`, which computes a bitmap per child): the struct's own mask
    applies to them anyway."""
    fields = [array.type.field(i) for i in range(array.type.num_fields)]
    children = [
        replace[f.name] if f.name in replace else array.field(i) for i, f in enumerate(fields)
    ]
    return pa.StructArray.from_arrays(children, fields=fields, mask=array.is_null())


def _resolve_chunk(semantic: pa.StructArray, desired: pa.Array) -> pa.StructArray:
    """One chunk of the semantic column with every link member set to `desired`."""
    replace = {
        child: _rebuilt(semantic.field(child), {member: desired})
        for child, member in LINK_MEMBERS.items()
    }
    return _rebuilt(semantic, replace)


def parts_linking(paths: list[str], sessions: pa.Array, opened: Callable[[str], Any]) -> list[str]:
    """Which of the given item parts (dataset-relative; `opened` gives what to read) hold an
    item linked to one of `sessions`."""
    import pyarrow.parquet as pq

    hits = []
    for path in paths:
        part = pq.read_table(opened(path), columns=["linked_session_id"])
        linked = part.column("linked_session_id")
        if pc.any(pc.is_in(linked, value_set=sessions)).as_py():
            hits.append(path)
    return hits
