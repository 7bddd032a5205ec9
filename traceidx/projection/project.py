"""Projection: turn an adapter's draft into domain objects with ids, positions and links.

* Ids come from `traceidx.domain.ids` (deterministic functions of evidence).
* Loops get `session_position` in source order; Items get `loop_position` in emission order.
* Text members are bounded (`traceidx.domain.text`); declared shell commands are parsed
  (`traceidx.domain.shell`); a call with at least one fragment becomes ``agent.tool_call.shell``.
* A tool output's native call id is resolved to `call_item_id` against the calls of the same
  source. Session references become the id the target Session has (runtime, native id); the
  views publish them only when that Session exists in the dataset.
* Every value is held to its role's value Struct (`projection.items.value_row`), so a role can
  never carry another role's value shape. Items are kept column by column
  (`traceidx.projection.items.ItemColumns`); their domain objects are made only when asked for.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from traceidx.domain import ids
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession
from traceidx.domain.model import (
    Item,
    Loop,
    LoopEnd,
    LoopModel,
    ModelCall,
    Session,
    SessionRef,
    Usage,
)
from traceidx.domain.redact import Redactor
from traceidx.domain.rules import UsageSample, billed, sum_usage
from traceidx.domain.shell import parse_shell
from traceidx.domain.text import DEFAULT_TEXT_LIMIT, text_content, text_row
from traceidx.projection.items import ItemColumns, value_row
from traceidx.sources.idruns import item_ids

_SESSION_REF_MEMBER: Final = {
    "agent.delegation": "child_session_id",
    "subagent.activity": "subagent_session_id",
    "subagent.report": "source_session_id",
}


@dataclass(frozen=True, slots=True)
class Projection:
    """The domain facts one source contributes (its items as runs of columns)."""

    session: Session
    loops: list[Loop]
    item_runs: list[ItemColumns]
    calls: list[ModelCall]

    @property
    def items(self) -> list[Item]:
        """The items as domain objects."""
        return [item for run in self.item_runs for item in run.objects()]


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
    given = record_ids or []
    projector = Projector(runtime, source_id, text_limit, known.get, lambda: given)
    projector.start(draft.session.native_id)
    loops = projector.loops(draft.loops)
    calls = projector.calls(draft.loops, draft.calls)
    session = projector.session(draft.session)
    return Projection(session, loops, [projector.items(draft.items)], calls)


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
        record_ids: Callable[[], Sequence[int]],
        redactor: Redactor | None = None,
    ) -> None:
        self.runtime = runtime
        self.redactor = redactor
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
        self._call_ordinals: dict[int, int] = {}

    def state(self) -> dict[str, Any]:
        """What carries over from one batch to the next (for a checkpoint)."""
        return {
            "loop_count": self.loop_count,
            "item_count": self.item_count,
            "ordinals": dict(self._ordinals),
            "calls": dict(self._calls),
            "positions": dict(self._positions),
            "call_ordinals": dict(self._call_ordinals),
            "redacted": dict(self.redactor.counts) if self.redactor is not None else {},
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Continue after the batches a `state` was taken from."""
        self.loop_count = state["loop_count"]
        self.item_count = state["item_count"]
        self._ordinals = dict(state["ordinals"])
        self._calls = dict(state["calls"])
        self._positions = dict(state["positions"])
        self._call_ordinals = dict(state.get("call_ordinals", {}))
        if self.redactor is not None:
            self.redactor.counts = Counter(state.get("redacted", {}))

    def rid(self, position: int) -> int:
        """The id of the record at `position` (computed only if not known already)."""
        known = self.record_ids()
        if position < len(known):
            return known[position]
        return ids.record_id(self.source_id, position)

    def rids(self, positions: list[int]) -> npt.NDArray[np.int64]:
        """`rid` of each of `positions`, at once."""
        at = np.array(positions, dtype=np.int64)
        # a view of the known ids for as long as this call (an array('q') cannot grow while
        # viewed)
        known = np.asarray(self.record_ids(), dtype=np.int64)
        inside = at < len(known)
        if inside.all():
            return known[at]
        out = np.empty(len(at), np.int64)
        out[inside] = known[at[inside]]
        out[~inside] = [self.rid(p) for p in at[~inside].tolist()]
        return out

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
            runtime=self.runtime,
            native_id=ds.native_id,
            identity_record_id=self.rid(ds.identity_record),
            source_ids=(self.source_id,),
            created_at=ds.created_at,
            name=ds.name,
            working_directory=ds.working_directory,
            project=_last_component(ds.git_root or ds.working_directory),
            branch=ds.branch,
            forked_from=ref(ds.forked_from),
            delegated_from=ref(ds.delegated_from),
            task=None if ds.task is None else text_content(ds.task, self.text_limit),
            session_usage=None
            if ds.usage is None
            else Usage(
                ds.usage.input,
                ds.usage.output,
                ds.usage.cached,
                ds.usage.cache_write,
                ds.usage.reasoning,
            ),
            session_usage_model=None if ds.usage is None else ds.usage.model,
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

    def calls(self, loops: list[DraftLoop], loose: Sequence[UsageSample] = ()) -> list[ModelCall]:
        """ModelCall rows of the next loops' calls (a call without a model takes its Loop's),
        then of the calls outside any Loop, in order."""
        assert self.session_id is not None
        out = []
        located: list[tuple[UsageSample, int | None, str | None]] = []
        for loop in loops:
            if loop.usage:
                of_loop = ids.loop_id(self.source_id, loop.start)  # once per loop
                located += [(sample, of_loop, loop.model_id) for sample in loop.usage]
        located += [(sample, None, None) for sample in loose]
        for sample, loop_id, loop_model in located:
            first = min(sample.records) if sample.records else -1
            ordinal = self._call_ordinals.get(first, 0)
            self._call_ordinals[first] = ordinal + 1
            usage = (
                Usage(
                    sample.input, sample.output, sample.cached, sample.cache_write, sample.reasoning
                )
                if billed(sample)
                else None
            )
            out.append(
                ModelCall(
                    call_id=ids.model_call_id(self.source_id, first, ordinal),
                    session_id=self.session_id,
                    source_id=self.source_id,
                    record_ids=tuple(self.rid(p) for p in sorted(set(sample.records))),
                    usage=usage,
                    loop_id=loop_id,
                    occurred_at=sample.occurred_at,
                    model=sample.model or loop_model,
                    provider=sample.provider,
                    outcome=sample.outcome,
                )
            )
        return out

    def items(self, drafts: list[DraftItem]) -> ItemColumns:
        """The next items of the source, in emission order, as columns."""
        session_id = self.session_id
        assert session_id is not None
        source_id = self.source_id
        ordinals, calls, positions = self._ordinals, self._calls, self._positions
        out = ItemColumns(session_id, source_id)
        firsts, numbers = [], []
        for draft in drafts:
            records = draft.records
            first = records[0] if len(records) == 1 else min(records)
            ordinal = ordinals.get(first, 0)
            ordinals[first] = ordinal + 1
            firsts.append(first)
            numbers.append(ordinal)
        out.item_ids = item_ids(source_id, firsts, numbers)
        for draft, item_id in zip(drafts, out.item_ids, strict=True):
            if draft.call_id is not None:  # every call first: an output may precede its call
                calls[draft.call_id] = item_id
        runtime, limit = self.runtime, self.text_limit
        supporting_at: list[int] = []  # every item's supporting record positions, in turn
        record_counts = out.record_counts
        roles, strengths, values = out.roles, out.strengths, out.values
        loop_ids, loop_positions = out.loop_ids, out.loop_positions
        loop_start, loop_id = -1, 0  # items of a loop come together: its id is kept
        for draft in drafts:
            if draft.loop is None:
                loop_ids.append(None)
                loop_positions.append(None)
            else:
                if draft.loop.start != loop_start:
                    loop_start = draft.loop.start
                    loop_id = ids.loop_id(source_id, loop_start)
                loop_ids.append(loop_id)
                position = positions.get(loop_id, 0)
                positions[loop_id] = position + 1
                loop_positions.append(position)
            records = draft.records
            if len(records) == 1:
                supporting_at.append(records[0])
                record_counts.append(1)
            else:
                supporting = sorted(set(records))
                supporting_at.extend(supporting)
                record_counts.append(len(supporting))
            role, value, linked = _semantic(draft, calls, runtime, limit, self.redactor)
            roles.append(role)
            strengths.append(draft.strength)
            values.append(value)
            out.occurred_at.append(draft.occurred_at)
            out.linked.append(linked)
        out.record_ids = self.rids(supporting_at)
        self.item_count += len(out)
        return out


def _last_component(path: str | None) -> str | None:
    """The last component of a POSIX or Windows path (None for none)."""
    name = re.split(r"[/\\]", path.rstrip("/\\"))[-1] if path else ""
    return name or None


def _redact_call(
    value: dict[str, Any], redactor: Redactor, command: str | None, limit: int
) -> None:
    """A tool call's arguments and shell fragments (of `command`) with their secrets
    replaced."""
    arguments = value.get("arguments")
    if isinstance(arguments, str):
        value["arguments"], value["redactions"] = redactor.arguments(arguments)
    fragments = value.get("shell_fragments")
    if fragments and command is not None:
        value["shell_fragments"] = redactor.fragments(fragments, redactor.text_row(command, limit))


@lru_cache(maxsize=4096)
def _shell_rows(command: str, limit: int) -> tuple[dict[str, Any], ...]:
    """Shell fragments of a command, as rows; agents repeat commands (the rows are shared,
    never changed)."""
    rows: tuple[dict[str, Any], ...] = msgspec.to_builtins(parse_shell(command, text_limit=limit))
    return rows


def _semantic(
    draft: DraftItem,
    calls: dict[str, int],
    runtime: str,
    limit: int,
    redactor: Redactor | None = None,
) -> tuple[str, dict[str, Any], int | None]:
    """The item's role and value (as builtins), and the id of the Session it links to (if
    its role links one). With a `redactor`, secrets in its texts, arguments and shell
    fragments are replaced (traceidx.domain.redact)."""
    value: dict[str, Any] = {}
    for key, member in draft.value.items():  # one pass: None members left out, texts bounded
        if member is None:
            continue
        if (key == "text" or key == "summary") and isinstance(member, str):
            if redactor is None:
                member = text_row(member, limit)
            else:
                member = redactor.text_row(member, limit)
        value[key] = member
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
        fragments = _shell_rows(draft.shell_command, limit)
        if fragments:
            role = "agent.tool_call.shell"
            value["shell_fragments"] = fragments
    if redactor is not None and role.startswith("agent.tool_call"):
        _redact_call(value, redactor, draft.shell_command, limit)
    try:  # wrongly typed members are refused when the row is encoded against the schema
        return role, value_row(role, value), linked
    except ValueError as exc:
        raise ValueError(f"{runtime} adapter: invalid {role} item: {exc}") from exc
