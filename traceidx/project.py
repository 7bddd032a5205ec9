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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from traceidx import ids
from traceidx.adapters.base import Draft, DraftItem, DraftLoop, DraftSession
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
    """Domain objects of a whole draft; None when the draft established no Session.

    `times` maps record positions to the runtime time written on them (for loop times);
    `record_ids` (optional) lists the source's record ids by position, saving their hashing.
    """
    if draft.session is None:
        return None
    known = times or {}
    projector = Projector(runtime, source_id, text_limit, known.get, record_ids or [])
    projector.start(draft.session.native_id)
    loops = projector.loops(draft.loops)
    return Projection(projector.session(draft.session), loops, projector.items(draft.items))


class Projector:
    """Projects one source's drafts batch by batch, in order (drained batches, then the rest).

    Batches must arrive in the source's order: loop positions, item ordinals, loop positions
    of items and tool-call links carry over from one batch to the next. Projecting a whole
    draft in one batch is the same as projecting it in several.
    """

    def __init__(
        self,
        runtime: str,
        source_id: int,
        text_limit: int,
        time_of: Callable[[int], int | None],
        record_ids: Sequence[int],
    ) -> None:
        self.runtime = runtime
        self.source_id = source_id
        self.text_limit = text_limit
        self.time_of = time_of
        self.record_ids = record_ids
        self.session_id: int | None = None
        self.loop_count = 0
        self.item_count = 0
        self._ordinals: dict[int, int] = {}
        self._calls: dict[str, int] = {}
        self._positions: dict[int, int] = {}

    def state(self) -> dict[str, Any]:
        """What carries over from one batch to the next (for a checkpoint)."""
        return {
            "loop_count": self.loop_count,
            "item_count": self.item_count,
            "ordinals": dict(self._ordinals),
            "calls": dict(self._calls),
            "positions": dict(self._positions),
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Continue after the batches a `state` was taken from."""
        self.loop_count = state["loop_count"]
        self.item_count = state["item_count"]
        self._ordinals = dict(state["ordinals"])
        self._calls = dict(state["calls"])
        self._positions = dict(state["positions"])

    def rid(self, position: int) -> int:
        """The id of the record at `position` (hashed only if not known already)."""
        if position < len(self.record_ids):
            return self.record_ids[position]
        return ids.record_id(self.source_id, position)

    def start(self, native_id: str) -> int:
        """Fix the Session the projected facts belong to; its id."""
        self.session_id = ids.session_id(self.runtime, native_id)
        return self.session_id

    def session(self, ds: DraftSession) -> Session:
        """The Session row, once every record was read."""
        session_id = self.start(ds.native_id)

        def ref(pair: tuple[str, int] | None) -> SessionRef | None:
            if pair is None or pair[0] == ds.native_id:
                return None
            return SessionRef(ids.session_id(self.runtime, pair[0]), self.rid(pair[1]))

        return Session(
            session_id=session_id,
            runtime=self.runtime,  # type: ignore[arg-type]
            native_id=ds.native_id,
            identity_record_id=self.rid(ds.identity_record),
            source_ids=(self.source_id,),
            created_at=ds.created_at,
            name=ds.name,
            working_directory=ds.working_directory,
            forked_from=ref(ds.forked_from),
            delegated_from=ref(ds.delegated_from),
        )

    def loops(self, drafts: list[DraftLoop]) -> list[Loop]:
        """Loop rows of the next loops of the source, in order."""
        assert self.session_id is not None
        out = []
        for draft in drafts:
            end = None
            if draft.end is not None:
                end = LoopEnd(record_id=self.rid(draft.end), outcome=draft.outcome)  # type: ignore[arg-type]
            model = None
            if draft.model_id:
                model = LoopModel(draft.model_id, draft.effort, draft.context_window)
            out.append(
                Loop(
                    loop_id=ids.loop_id(self.source_id, draft.start),
                    session_id=self.session_id,
                    source_id=self.source_id,
                    session_position=self.loop_count,
                    start_record_id=self.rid(draft.start),
                    native_id=draft.native_id,
                    end=end,
                    model=model,
                    usage=sum_usage(draft.usage),
                    started_at=self.time_of(draft.start),
                    ended_at=self.time_of(draft.end) if draft.end is not None else None,
                )
            )
            self.loop_count += 1
        return out

    def items(self, drafts: list[DraftItem]) -> list[Item]:
        """Item rows of the next items of the source, in emission order."""
        session_id = self.session_id
        assert session_id is not None
        source_id = self.source_id
        ordinals, calls, positions = self._ordinals, self._calls, self._positions
        item_ids: list[int] = []
        for draft in drafts:  # every call of the batch first: an output may precede its call
            records = draft.records
            first = records[0] if len(records) == 1 else min(records)
            ordinal = ordinals.get(first, 0)
            ordinals[first] = ordinal + 1
            item_id = ids.item_id(source_id, first, ordinal)
            item_ids.append(item_id)
            if draft.call_id is not None:
                calls[draft.call_id] = item_id
        rid = self.rid
        items: list[Item] = []
        loop_start, loop_id = -1, 0  # items of a loop come together: its id is kept
        for draft, item_id in zip(drafts, item_ids, strict=True):
            loop_position = None
            if draft.loop is None:
                item_loop = None
            else:
                if draft.loop.start != loop_start:
                    loop_start = draft.loop.start
                    loop_id = ids.loop_id(source_id, loop_start)
                item_loop = loop_id
                loop_position = positions.get(loop_id, 0)
                positions[loop_id] = loop_position + 1
            records = draft.records
            if len(records) == 1:
                record_ids: tuple[int, ...] = (rid(records[0]),)
            else:
                record_ids = tuple(rid(p) for p in sorted(set(records)))
            semantic, linked = _semantic(draft, calls, self.runtime, self.text_limit)
            items.append(
                Item(
                    item_id=item_id,
                    session_id=session_id,
                    source_id=source_id,
                    record_ids=record_ids,
                    semantic=semantic,
                    loop_id=item_loop,
                    loop_position=loop_position,
                    occurred_at=draft.occurred_at,
                    linked_session_id=linked,
                )
            )
        self.item_count += len(items)
        return items


@lru_cache(maxsize=4096)
def _parse_shell(command: str, limit: int) -> tuple[ShellFragment, ...]:
    """Shell structure of a command; agents repeat commands, and the result is immutable."""
    return parse_shell(command, text_limit=limit)


def _semantic(
    draft: DraftItem, calls: dict[str, int], runtime: str, limit: int
) -> tuple[Semantic, int | None]:
    """The item's Semantic, and the id of the Session it links to (if its role links one)."""
    value: dict[str, Any] = {k: v for k, v in draft.value.items() if v is not None}
    for member in _TEXT_MEMBERS:
        if isinstance(value.get(member), str):
            value[member] = text_content(value[member], limit)
    role = draft.role
    if draft.output_of is not None and draft.output_of in calls:
        value["call_item_id"] = calls[draft.output_of]
    linked = None
    ref_member = _SESSION_REF_MEMBER.get(role)
    if ref_member is not None:
        if draft.session_ref is not None:
            value[ref_member] = ids.session_id(runtime, draft.session_ref)
        found = value.get(ref_member)
        linked = found if isinstance(found, int) else None
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
    return cast(Semantic, built), linked
