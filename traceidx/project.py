"""Projection: turn an adapter's draft into domain objects with ids, positions and links.

* Ids come from `traceidx.ids` (deterministic functions of evidence).
* Loops get `session_position` in source order; Items get `loop_position` in emission order.
* Text members are bounded (`traceidx.text`); declared shell commands are parsed
  (`traceidx.shell`); a call with at least one fragment becomes ``agent.tool_call.shell``.
* A tool output's native call id is resolved to `call_item_id` against the calls of the same
  source. Session references become the id the target Session has (runtime, native id); the
  views publish them only when that Session exists in the dataset.
* Every Semantic is validated by decoding it into the tagged union, so a role can never carry
  another role's value shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from traceidx import ids
from traceidx.adapters.base import Draft, DraftItem, DraftLoop
from traceidx.model import (
    ROLE_BY_NAME,
    VALUE_BY_ROLE,
    Item,
    Loop,
    LoopEnd,
    LoopModel,
    Semantic,
    Session,
    SessionRef,
    ShellFragment,
    role_of,
)
from traceidx.rules import sum_usage
from traceidx.shell import parse_shell
from traceidx.text import DEFAULT_TEXT_LIMIT, text_content

_TEXT_MEMBERS = ("text", "summary")
_SESSION_REF_MEMBER = {
    "agent.delegation": "child_session_id",
    "subagent.activity": "subagent_session_id",
    "subagent.report": "source_session_id",
}


@dataclass(frozen=True, slots=True)
class Projection:
    """The domain facts one source contributes."""

    session: Session
    loops: list[Loop]
    items: list[Item]


def project(
    draft: Draft,
    *,
    runtime: str,
    source_id: int,
    text_limit: int = DEFAULT_TEXT_LIMIT,
    times: dict[int, int] | None = None,
    record_ids: list[int] | None = None,
) -> Projection | None:
    """Domain objects of a draft; None when the draft established no Session.

    `times` maps record positions to the runtime time written on them (for loop times);
    `record_ids` (optional) lists the source's record ids by position, saving their hashing.
    """
    if draft.session is None:
        return None
    ds = draft.session
    known_ids = record_ids or []

    def rid(position: int) -> int:
        if position < len(known_ids):
            return known_ids[position]
        return ids.record_id(source_id, position)

    session_id = ids.session_id(runtime, ds.native_id)

    def ref(pair: tuple[str, int] | None) -> SessionRef | None:
        if pair is None or pair[0] == ds.native_id:
            return None
        return SessionRef(ids.session_id(runtime, pair[0]), rid(pair[1]))

    session = Session(
        session_id=session_id,
        runtime=runtime,  # type: ignore[arg-type]
        native_id=ds.native_id,
        identity_record_id=rid(ds.identity_record),
        source_ids=(source_id,),
        created_at=ds.created_at,
        name=ds.name,
        working_directory=ds.working_directory,
        forked_from=ref(ds.forked_from),
        delegated_from=ref(ds.delegated_from),
    )
    loop_ids = {id(loop): ids.loop_id(source_id, loop.start) for loop in draft.loops}
    loops = [
        _loop(loop, loop_ids[id(loop)], session_id, position, source_id, times or {}, rid)
        for position, loop in enumerate(draft.loops)
    ]
    items = _items(draft.items, loop_ids, session_id, source_id, runtime, text_limit, rid)
    return Projection(session, loops, items)


def _loop(
    draft: DraftLoop,
    loop_id: int,
    session_id: int,
    position: int,
    source: int,
    times: dict[int, int],
    rid: Callable[[int], int],
) -> Loop:
    end = None
    if draft.end is not None:
        end = LoopEnd(record_id=rid(draft.end), outcome=draft.outcome)  # type: ignore[arg-type]
    model = None
    if draft.model_id:
        model = LoopModel(draft.model_id, draft.effort, draft.context_window)
    return Loop(
        loop_id=loop_id,
        session_id=session_id,
        source_id=source,
        session_position=position,
        start_record_id=rid(draft.start),
        native_id=draft.native_id,
        end=end,
        model=model,
        usage=sum_usage(draft.usage),
        started_at=times.get(draft.start),
        ended_at=times.get(draft.end) if draft.end is not None else None,
    )


def _items(
    drafts: list[DraftItem],
    loop_ids: dict[int, int],
    session_id: int,
    source_id: int,
    runtime: str,
    text_limit: int,
    rid: Callable[[int], int],
) -> list[Item]:
    ordinals: dict[int, int] = {}
    item_ids: list[int] = []
    calls: dict[str, int] = {}
    for draft in drafts:
        first = min(draft.records)
        ordinal = ordinals.get(first, 0)
        ordinals[first] = ordinal + 1
        item_id = ids.item_id(source_id, first, ordinal)
        item_ids.append(item_id)
        if draft.call_id is not None:
            calls[draft.call_id] = item_id
    positions: dict[int, int] = {}
    items: list[Item] = []
    for draft, item_id in zip(drafts, item_ids, strict=True):
        loop_id = loop_ids[id(draft.loop)] if draft.loop is not None else None
        loop_position = None
        if loop_id is not None:
            loop_position = positions.get(loop_id, 0)
            positions[loop_id] = loop_position + 1
        semantic = _semantic(draft, calls, runtime, text_limit)
        items.append(
            Item(
                item_id=item_id,
                session_id=session_id,
                source_id=source_id,
                record_ids=tuple(rid(p) for p in sorted(set(draft.records))),
                semantic=semantic,
                loop_id=loop_id,
                loop_position=loop_position,
                occurred_at=draft.occurred_at,
                linked_session_id=_linked(semantic),
            )
        )
    return items


@lru_cache(maxsize=4096)
def _parse_shell(command: str, limit: int) -> tuple[ShellFragment, ...]:
    """Shell structure of a command; agents repeat commands, and the result is immutable."""
    return parse_shell(command, text_limit=limit)


def _linked(semantic: Semantic) -> int | None:
    member = _SESSION_REF_MEMBER.get(role_of(type(semantic)))
    value = getattr(semantic.value, member) if member else None
    return value if isinstance(value, int) else None


def _semantic(draft: DraftItem, calls: dict[str, int], runtime: str, limit: int) -> Semantic:
    value: dict[str, Any] = {k: v for k, v in draft.value.items() if v is not None}
    for member in _TEXT_MEMBERS:
        if isinstance(value.get(member), str):
            value[member] = text_content(value[member], limit)
    role = draft.role
    if draft.output_of is not None and draft.output_of in calls:
        value["call_item_id"] = calls[draft.output_of]
    if draft.session_ref is not None and role in _SESSION_REF_MEMBER:
        value[_SESSION_REF_MEMBER[role]] = ids.session_id(runtime, draft.session_ref)
    if draft.shell_command is not None and role == "agent.tool_call":
        fragments = _parse_shell(draft.shell_command, limit)
        if fragments:
            role = "agent.tool_call.shell"
            value["shell_fragments"] = fragments
    # Built directly (the role Struct fixes the value Struct; unknown or missing members raise
    # here, wrongly typed ones when the row is encoded against the Arrow schema).
    try:
        built = ROLE_BY_NAME[role](
            evidence_strength=draft.strength,  # type: ignore[arg-type]
            value=VALUE_BY_ROLE[role](**value),  # type: ignore[call-arg]
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{runtime} adapter: invalid {role} item: {exc}") from exc
    return cast(Semantic, built)
