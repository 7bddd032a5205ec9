"""Which child Session each delegation links, over the whole dataset: one delegation per child.

A delegation links a child in one of two ways, both from evidence:

* stated: the parent's log names the child (``linked_session_id``, traceidx.links). When
  several delegations name the same child (public snapshots reuse fixed ids, so unrelated
  parents merge into one Session), one keeps the link: the latest that occurred at or before
  the child was created, else the earliest (then the smallest item id);
* matched: the parent's log names no child, but a child Session records that this parent
  delegated it (``delegated_from``) and the task it received (``sessions.task``), and that
  text equals the delegation's (bounded value and full size). Several such delegations and
  children pair in time order by the same rule: each child, oldest first, takes the latest
  delegation still free that occurred at or before its creation, else the earliest free one.

A delegation that does neither links nothing. Publication rewrites the item parts whose
delegations link otherwise than this says (traceidx.publish).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

_DELEGATION = pc.field("semantic", "role") == "agent.delegation"
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


def read_delegations(paths: Sequence[str], filesystem: Any = None) -> dict[str, list[Delegation]]:
    """Every delegation of the given item parts, by part path (paths of `filesystem`, a
    pyarrow filesystem; None: local)."""
    out: dict[str, list[Delegation]] = {}
    columns = {
        "item_id": pc.field("item_id"),
        "session_id": pc.field("session_id"),
        "occurred_at": pc.field("occurred_at"),
        "linked": pc.field("linked_session_id"),
        "text": pc.field("semantic", "delegation", "text"),
        "child": pc.field("semantic", "delegation", "child_session_id"),
    }
    for path in paths:
        part = pads.dataset(path, format="parquet", filesystem=filesystem)
        rows = part.to_table(columns=columns, filter=_DELEGATION)
        out[path] = [
            Delegation(
                r["item_id"],
                r["session_id"],
                r["occurred_at"],
                r["linked"],
                _task(r["text"]),
                r["child"],
            )
            for r in rows.to_pylist()
        ]
    return out


def read_answers(path: str, filesystem: Any = None) -> list[Answer]:
    """The reports and activity of a part's delegating calls that state no child themselves:
    each with the delegation of its call (the output beside it answers the call whose record
    also supports the delegation)."""
    columns = {
        "item_id": pc.field("item_id"),
        "role": pc.field("semantic", "role"),
        "record": pc.list_element(pc.field("record_ids"), 0),
        "loop": pc.field("loop_id"),
        "at": pc.field("loop_position"),
        "linked": pc.field("linked_session_id"),
        "call": pc.field("semantic", "tool_output", "call_item_id"),
        "report": pc.field("semantic", "subagent_report", "source_session_id"),
        "activity": pc.field("semantic", "subagent_activity", "subagent_session_id"),
    }
    rows = (
        pads.dataset(path, format="parquet", filesystem=filesystem)
        .to_table(columns=columns, filter=pc.field("semantic", "role").isin(_ANSWERING))
        .to_pylist()
    )
    by_role: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
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
        for role in ("subagent.report", "subagent.activity")
        for r in by_role[role]
        if r["linked"] is None and (delegation := answered.get(place(r, 0))) is not None
    ]


def read_children(paths: Sequence[str], filesystem: Any = None) -> list[Child]:
    """Every delegated Session row of the given session parts."""
    if not paths:
        return []
    columns = {
        "session_id": pc.field("session_id"),
        "parent": pc.field("delegated_from", "session_id"),
        "created_at": pc.field("created_at"),
        "task": pc.field("task"),
    }
    rows = pads.dataset(list(paths), format="parquet", filesystem=filesystem).to_table(
        columns=columns, filter=pc.field("delegated_from").is_valid()
    )
    return [
        Child(r["session_id"], r["parent"], r["created_at"], _task(r["task"]))
        for r in rows.to_pylist()
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
            for answer in read_answers(path, filesystem):
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
