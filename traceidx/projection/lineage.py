"""Which child Session each delegation links, over the whole dataset: one delegation per child.

A delegation links a child in one of two ways, both from evidence:

* stated: the parent's log names the child (``linked_session_id``, traceidx.projection.links). When
  several delegations name the same child (public snapshots reuse fixed ids, so unrelated
  parents merge into one Session), one keeps the link: the latest that occurred at or before
  the child was created, else the earliest (then the smallest item id);
* matched: the parent's log names no child, but a child Session records that this parent
  delegated it (``delegated_from``) and the task it received (``sessions.task``), and that
  text equals the delegation's (bounded value and full size). Several such delegations and
  children pair in time order by the same rule: each child, oldest first, takes the latest
  delegation still free that occurred at or before its creation, else the earliest free one.

A delegation that does neither links nothing. Publication rewrites the item parts whose
delegations link otherwise than this says (traceidx.pipeline.publish).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

_ANSWERING = [
    "agent.delegation",
    "agent.tool_call",
    "tool.output",
    "subagent.report",
    "subagent.activity",
]


@dataclass(frozen=True, slots=True)
class Delegation:
    """What the lineage rules read of one delegation item."""

    item_id: int
    session_id: int
    occurred_at: int | None
    stated: int | None  # linked_session_id
    task: tuple[str, int] | None  # (bounded text, full bytes)
    child: int | None  # the published child_session_id


@dataclass(frozen=True, slots=True)
class Answer:
    """A report or activity answering a delegating call, which states no child itself."""

    item_id: int
    delegation: int  # the item id of the call's delegation
    child: int | None  # the published link


@dataclass(frozen=True, slots=True)
class Child:
    """What the lineage rules read of one delegated Session (one row per source)."""

    session_id: int
    parent_id: int
    created_at: int | None
    task: tuple[str, int] | None


def _task(value: dict[str, Any] | None) -> tuple[str, int] | None:
    if value is None or value.get("value") is None:
        return None
    return str(value["value"]), int(value["full_bytes"])


#: a column to read: a top-level column, then struct members (names) or list elements (ints)
Column: TypeAlias = "tuple[str | int, ...]"

#: the item columns lineage reads (delegations and the calls, outputs and reports beside them)
ITEM_COLUMNS: dict[str, Column] = {
    "item_id": ("item_id",),
    "session_id": ("session_id",),
    "occurred_at": ("occurred_at",),
    "role": ("semantic", "role"),
    "record": ("record_ids", 0),
    "loop": ("loop_id",),
    "at": ("loop_position",),
    "linked": ("linked_session_id",),
    "text": ("semantic", "delegation", "text"),
    "child": ("semantic", "delegation", "child_session_id"),
    "call": ("semantic", "tool_output", "call_item_id"),
    "report": ("semantic", "subagent_report", "source_session_id"),
    "activity": ("semantic", "subagent_activity", "subagent_session_id"),
    "_source": ("source_id",),
}
#: the session columns lineage reads (of delegated Sessions)
SESSION_COLUMNS: dict[str, Column] = {
    "session_id": ("session_id",),
    "parent": ("delegated_from", "session_id"),
    "created_at": ("created_at",),
    "task": ("task",),
    "_source": ("source_ids", 0),
}
_REPORTS = ["subagent.report", "subagent.activity"]


def _values(table: pa.Table, column: Column) -> pa.ChunkedArray:
    """A column of rows in memory, without touching any other (struct members and list
    elements are views of their parents' buffers)."""
    values = table.column(column[0])
    for step in column[1:]:
        values = (
            pc.list_element(values, step)
            if isinstance(step, int)
            else pc.struct_field(values, step)
        )
    return values


def _expression(column: Column) -> pc.Expression:
    """`_values` as a scan's projection."""
    out = pc.field(*[step for step in column if isinstance(step, str)])
    return pc.list_element(out, column[-1]) if isinstance(column[-1], int) else out


def candidates(table: str, rows: pa.Table) -> pa.Table:
    """What lineage reads of some rows in memory (items or sessions): the rows a worker hands
    over beside the rows it spools, so that publication need not read them back. Of items:
    delegations, reports and activity, and of the calls and outputs only those that can pair
    with them (`answers_in`): a call in a delegation's record, an output in a report's."""
    columns = ITEM_COLUMNS if table == "items" else SESSION_COLUMNS
    projected = pa.table({name: _values(rows, column) for name, column in columns.items()})
    if table != "items":
        return projected.filter(pc.is_valid(projected.column("parent")))
    role, record = projected.column("role"), projected.column("record")
    delegation = pc.equal(role, "agent.delegation")
    answer = pc.is_in(role, value_set=pa.array(_REPORTS))

    def beside(kind: str, of: pa.ChunkedArray) -> pa.ChunkedArray:
        records = record.filter(of).combine_chunks()
        return pc.and_(pc.equal(role, kind), pc.is_in(record, value_set=records))

    wanted = pc.or_(
        pc.or_(delegation, answer),
        pc.or_(beside("agent.tool_call", delegation), beside("tool.output", answer)),
    )
    return projected.filter(pc.fill_null(wanted, False))


def read(table: str, paths: Sequence[str], filesystem: Any = None) -> pa.Table | None:
    """What lineage reads of some published parts of a table (paths of `filesystem`, a
    pyarrow filesystem; None: local files), in the shape `candidates` hands over (None: no
    parts). Only the Parquet leaf columns it reads are decoded (a nested member is read
    without its siblings: a whole ``semantic`` struct costs several times as much)."""
    if not paths:
        return None
    import pyarrow.parquet as pq  # only here: workers and cold builds never need it

    items = table == "items"
    columns = ITEM_COLUMNS if items else SESSION_COLUMNS
    leaves = sorted({".".join(s for s in c if isinstance(s, str)) for c in columns.values()})
    found = []
    for path in paths:
        with pq.ParquetFile(path, filesystem=filesystem) as part:
            rows = part.read(columns=leaves)
        projected = pa.table({name: _values(rows, column) for name, column in columns.items()})
        if items:
            where = pc.is_in(projected.column("role"), value_set=pa.array(_ANSWERING))
        else:
            where = pc.is_valid(projected.column("parent"))
        found.append(projected.filter(pc.fill_null(where, False)))
    return pa.concat_tables(found)


@dataclass(frozen=True, slots=True)
class Keep:
    """Which rows stay: all but those of the `sources` named and those whose `id_column`
    is in `ids`."""

    sources: pa.Array
    ids: pa.Array | None = None
    id_column: str | None = None

    def mask(self, rows: pa.Table) -> pa.ChunkedArray:
        kept = pc.invert(pc.is_in(rows.column("_source"), value_set=self.sources))
        if self.id_column is not None and self.ids is not None and len(self.ids):
            named = pc.is_in(rows.column(self.id_column), value_set=self.ids)
            kept = pc.and_(kept, pc.invert(named))
        return kept


def _rows(
    rows: pa.Table | None,
    where: Callable[[pa.Table], pa.ChunkedArray],
    keep: Keep | None,
) -> list[dict[str, Any]]:
    """The rows (of `read` or `candidates`) for which `where` holds and that `keep` keeps."""
    if rows is None:
        return []
    mask = where(rows)
    if keep is not None:
        mask = pc.and_(mask, keep.mask(rows))
    found: list[dict[str, Any]] = rows.filter(mask).to_pylist()
    return found


def _role(*roles: str) -> Callable[[pa.Table], pa.ChunkedArray]:
    return lambda table: pc.is_in(table.column("role"), value_set=pa.array(roles))


def delegations_in(rows: pa.Table | None, keep: Keep | None = None) -> list[Delegation]:
    """Every delegation of some items (`read` or `candidates`)."""
    return [
        Delegation(
            r["item_id"],
            r["session_id"],
            r["occurred_at"],
            r["linked"],
            _task(r["text"]),
            r["child"],
        )
        for r in _rows(rows, _role("agent.delegation"), keep)
    ]


def read_delegations(paths: Sequence[str], filesystem: Any = None) -> dict[str, list[Delegation]]:
    """Every delegation of the given item parts, by part path."""
    return {path: delegations_in(read("items", [path], filesystem)) for path in paths}


def answers_in(rows: pa.Table | None, keep: Keep | None = None) -> list[Answer]:
    """The reports and activity of delegating calls that state no child themselves, in some
    items (`read` or `candidates`): each with the delegation of its call (the output beside
    it answers the call whose record also supports the delegation)."""
    if rows is None:
        return []
    if keep is not None:
        rows = rows.filter(keep.mask(rows))
    # only the rows that can pair up: calls in a delegation's record, their outputs, and the
    # reports and activity in an output's record (every pairing below is within one record)
    role = rows.column("role")

    def pick(kinds: list[str], column: str, values: pa.ChunkedArray) -> pa.Table:
        """The rows of `kinds` whose `column` holds one of `values`."""
        near = pc.is_in(rows.column(column), value_set=values.combine_chunks())
        return rows.filter(pc.and_(pc.is_in(role, value_set=pa.array(kinds)), near))

    delegations = rows.filter(pc.equal(role, "agent.delegation"))
    if not delegations.num_rows:
        return []
    calls = pick(["agent.tool_call"], "record", delegations.column("record"))
    outputs = pick(["tool.output"], "call", calls.column("item_id"))
    reports = pick(_REPORTS, "record", outputs.column("record"))
    by_role: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for part in (delegations, calls, outputs, reports):
        for row in part.to_pylist():
            by_role[row["role"]].append(row)

    def place(row: dict[str, Any], step: int) -> tuple[Any, ...]:
        """Where the item next to `row` stands: the same record, the next position."""
        return (row["record"], row["loop"], None if row["at"] is None else row["at"] + step)

    # a delegation comes right after its call, a report or activity right after its output
    delegation_of = {place(r, -1): r["item_id"] for r in by_role["agent.delegation"]}
    made = {r["item_id"]: delegation_of.get(place(r, 0)) for r in by_role["agent.tool_call"]}
    answered = {place(r, 1): made.get(r["call"]) for r in by_role["tool.output"]}
    return [
        Answer(r["item_id"], delegation, r["report"] or r["activity"])
        for role in _REPORTS
        for r in by_role[role]
        if r["linked"] is None and (delegation := answered.get(place(r, 0))) is not None
    ]


def children_in(rows: pa.Table | None, keep: Keep | None = None) -> list[Child]:
    """Every delegated Session row of some sessions (`read` or `candidates`)."""

    def delegated(table: pa.Table) -> pa.ChunkedArray:
        return pc.is_valid(table.column("parent"))

    return [
        Child(r["session_id"], r["parent"], r["created_at"], _task(r["task"]))
        for r in _rows(rows, delegated, keep)
        if r["parent"] is not None and r["parent"] != r["session_id"]
    ]


def _order(delegation: Delegation) -> tuple[int, int]:
    return (
        delegation.occurred_at if delegation.occurred_at is not None else -1,
        delegation.item_id,
    )


def _pick(candidates: list[Delegation], created: int | None) -> Delegation:
    """The delegation that created a child created at `created`, among candidates."""
    before = [
        d
        for d in candidates
        if created is not None and d.occurred_at is not None and d.occurred_at <= created
    ]
    if before:
        latest = max(d.occurred_at or 0 for d in before)
        return min((d for d in before if d.occurred_at == latest), key=_order)
    return min(candidates, key=_order)


def desired_links(
    delegations: Iterable[Delegation], children: Iterable[Child], known: set[int]
) -> dict[int, int | None]:
    """item id -> the child Session the delegation links (None: none)."""
    every, children = list(delegations), list(children)
    desired: dict[int, int | None] = {d.item_id: None for d in every}
    created: dict[int, int] = {}
    for child in children:
        if child.created_at is not None:
            created[child.session_id] = min(
                created.get(child.session_id, child.created_at), child.created_at
            )
    naming: dict[int, list[Delegation]] = defaultdict(list)
    for d in every:
        if d.stated is not None and d.stated in known and d.stated != d.session_id:
            naming[d.stated].append(d)
    for child_id, candidates in naming.items():
        desired[_pick(candidates, created.get(child_id)).item_id] = child_id
    linked = set(naming)
    free: dict[tuple[int, str, int], list[Delegation]] = defaultdict(list)
    for d in every:
        if d.stated is None and d.task is not None:
            free[(d.session_id, *d.task)].append(d)
    waiting = sorted(
        (c for c in children if c.task is not None and c.session_id not in linked),
        key=lambda c: (c.created_at if c.created_at is not None else -1, c.session_id),
    )
    for child in waiting:
        assert child.task is not None
        candidates = free.get((child.parent_id, *child.task), [])
        if child.session_id in linked or not candidates:
            continue
        chosen = _pick(candidates, child.created_at)
        candidates.remove(chosen)
        desired[chosen.item_id] = child.session_id
        linked.add(child.session_id)
    return desired


def stale_parts(
    parts: dict[str, list[Delegation]], desired: dict[int, int | None], filesystem: Any = None
) -> dict[str, dict[int, int | None]]:
    """The parts whose delegations, or the answers to their calls, link otherwise than
    `desired` says, each with the links of those items (an answer names the child its
    delegation was matched to; one stating its own child keeps it)."""
    out = {}
    for path, delegations in parts.items():
        links = {d.item_id: desired.get(d.item_id) for d in delegations}
        stale = any(d.child != links[d.item_id] for d in delegations)
        if any(d.stated is None for d in delegations):
            for answer in answers_in(read("items", [path], filesystem)):
                links[answer.item_id] = links.get(answer.delegation)
                stale = stale or answer.child != links[answer.item_id]
        if stale:
            out[path] = links
    return out


def override_array(items: pa.Table, links: dict[int, int | None]) -> tuple[pa.Array, pa.Array]:
    """(whether each row's link is overridden, the overriding child) for the rows of `items`."""
    keys = pa.array(list(links), pa.int64())
    values = pa.array(list(links.values()), pa.int64())
    index = pc.index_in(items.column("item_id"), value_set=keys)
    return pc.is_valid(index), pc.take(values, index)


def overrides(desired: dict[int, int | None], answers: Iterable[Answer]) -> dict[int, int | None]:
    """The links to publish: each delegation's as `desired` says, and each answer's as its
    delegation's."""
    out = dict(desired)
    for answer in answers:
        out[answer.item_id] = desired.get(answer.delegation)
    return out
