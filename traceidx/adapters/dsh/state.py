"""dsh adapter state: the session, the inherited prefix, turns, usage, compaction, draining."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from traceidx.adapters.base import Adapter
from traceidx.adapters.dsh.usage import stream_facts, usage_of
from traceidx.adapters.dsh.wire import PACKED_ROWS, content_text, error_text, step_key
from traceidx.adapters.values import dict_or_empty, dicts_in, int_or_none, nonempty_str
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession
from traceidx.domain.model import LOOP_BOUND_ROLES
from traceidx.domain.rules import UsageSample, type_tag

#: turn/end reason.kind -> outcome (None: the Loop ends without a stated outcome)
_OUTCOMES: Final[dict[str, str | None]] = {
    "completed": "completed",
    "max-tokens": "completed",
    "aborted": "interrupted",
    "interrupted": "interrupted",
    "disposed": "interrupted",
    "rejected": "interrupted",
    "blocked": "interrupted",
    "error": "failed",
    "forked": None,
}


#: message source (kind, or the v3 plugin name) -> (role, category)
@dataclass(slots=True)
class LastMessage:
    """The latest model response of a turn, as far as the final answer needs it."""

    texts: list[DraftItem]
    tool_calls: bool
    interrupted: bool
    key: tuple[Any, Any]


@dataclass(slots=True)
class Turn:
    """An open turn."""

    loop: DraftLoop
    trigger: str | None
    seen_input: bool = False
    last: LastMessage | None = None
    route_model: str | None = None


@dataclass(slots=True)
class Call:
    """A drafted call; its items are dropped once settled (a turn closed since).

    A delegating call has two items on each side: `item` (the tool call) and `delegation`,
    `output` (the tool output) and `report` (the subagent report or activity); `child` is the
    native id of the child Session once the parent's log names it.
    """

    name: str | None
    item: DraftItem | None
    background: Any  # the ``run_in_background`` argument
    index: int  # the call Item's emission index in the source
    dispatched: bool = False
    answered: bool = False
    output: DraftItem | None = field(default=None)
    delegation: DraftItem | None = field(default=None)
    report: DraftItem | None = field(default=None)
    label: str | None = field(default=None)  # a delegation's ``description`` argument
    child: str | None = field(default=None)


class DshState(Adapter):
    """What a dsh log's adapter keeps between records, and the turn lifecycle."""

    def __init__(self) -> None:
        super().__init__()
        self.parent: str | None = None
        self.child = False  # a subagent child: its "user" inputs come from the parent
        self.seed_length: int | None = None
        self.seeded = False
        self.cut: int | None = None  # first record position after the inherited prefix
        self.loops: list[DraftLoop] = []
        self.turn: Turn | None = None
        self.calls: dict[str, Call] = {}
        self.pending_usage: list[tuple[int, UsageSample]] = []  # failed-attempt candidates
        self.loose_calls: list[UsageSample] = []  # model calls outside any Loop
        self.provider: str | None = None  # the provider the last request header names
        self.model: str | None = None  # the model the last request header or context names
        self.finishes: dict[tuple[Any, Any], str] = {}  # (turn, step) -> finish reason kind
        self.compaction: tuple[int, str | None, int | None, DraftLoop | None] | None = None
        self.approvals: dict[str, str] = {}  # approval id -> tool name
        self.effort: tuple[str | None, str] | None = None  # (model, effort) of the last header
        self.window: tuple[str | None, int] | None = None  # (model, context window)
        self.next_seq = 0
        # draining: emission indexes (over the whole source) of the first item still held and
        # of the first not settled; likewise for loops
        self.item_base = 0
        self.item_ready = 0
        self.loop_base = 0
        self.loop_ready = 0
        self.fresh: list[Call] = []  # calls whose item or output is not settled yet
        self.forward: deque[tuple[int, str]] = deque()  # outputs read before their call
        self.discarded: int | None = None  # the cut an isSeeded log was last discarded to
        self.tasks: list[tuple[int, str]] = []  # a child's inputs from its parent: (position, text)

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """The Loops and Items settled since the last call (see Draining above)."""
        if self.session is None or (self.seed_length is not None and self.cut is None):
            return [], []  # the id or the inherited cut is not final yet
        if self.seeded and self.seed_length is None:
            if self.cut is not None and self.cut != self.discarded:
                self.loops, self.items = _inherited_dropped(self.cut, self.loops, self.items)
                self.discarded = self.cut  # only ever moves later: dropped now, dropped then
            return [], []  # a later tagged end-seed may still move the cut
        end = self.item_ready
        while self.forward and self.forward[0][0] < end:
            index, call_id = self.forward[0]
            call = self.calls.get(call_id)
            if call is None or call.index >= end:
                end = index  # the output waits for its call
                break
            self.forward.popleft()
        items = self.items[: end - self.item_base]
        loops = self.loops[: self.loop_ready - self.loop_base]
        if not items and not loops:
            return [], []
        del self.items[: len(items)]
        del self.loops[: len(loops)]
        self.item_base += len(items)
        self.loop_base += len(loops)
        if self.cut is not None:
            loops, items = _inherited_dropped(self.cut, loops, items)
        return loops, items

    def finish(self) -> Draft:
        self._flush_usage()
        if self.compaction is not None:
            self._emit_compaction(None)
        if self.cut is not None:
            self.loops, self.items = _inherited_dropped(self.cut, self.loops, self.items)
            self.loose_calls = [c for c in self.loose_calls if min(c.records) >= self.cut]
        inherited = self.seed_length is not None and self.cut is None  # all of it, then
        own = [text for at, text in self.tasks if not inherited and at >= (self.cut or 0)]
        if self.session is not None and own:
            self.session.task = own[0]  # the evidence that links it to the delegating call
        return Draft(self.session, self.loops, self.items, self.unknown, self.loose_calls)

    # -- header, seqs and the inherited prefix -----------------------------------------------

    def _header(self, obj: dict[str, Any]) -> None:
        session = DraftSession(str(obj["id"]), self.position, created_at=self.time)
        session.working_directory = nonempty_str(obj.get("cwd"))
        depth = int_or_none(obj.get("delegationDepth")) or 0
        self.child = obj.get("origin") == "subagent" or depth >= 1
        self.parent = nonempty_str(obj.get("parentSession"))
        seed_length = int_or_none(obj.get("seedLength"))
        self.seed_length = seed_length if seed_length and seed_length > 0 else None
        self.seeded = obj.get("isSeeded") is True
        if self.parent is not None:
            if self.child:
                session.delegated_from = (self.parent, self.position)
            if self.seed_length is not None or self.seeded:
                session.forked_from = (self.parent, self.position)
        self.session = session

    def _count_seq(self, obj: dict[str, Any], kind: str, data: dict[str, Any]) -> None:
        if kind in PACKED_ROWS:
            members = data.get("texts", data.get("args"))
            width = len(members) if isinstance(members, list) and members else 1
            seq = int_or_none(obj.get("seq0"))
        else:
            width = 1
            seq = int_or_none(obj.get("seq"))
        seq = self.next_seq if seq is None else seq
        self.next_seq = seq + width
        if self.seed_length is not None and self.cut is None and seq + width > self.seed_length:
            self.cut = self.position if seq >= self.seed_length else self.position + 1

    def _end_seed(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        if self.seeded and self.seed_length is None and data.get("inherited") is True:
            self.cut = self.position  # the last tagged marker wins

    def _settle(self) -> None:
        """A turn closed: everything drafted so far is final (see Draining)."""
        self.item_ready = self.item_base + len(self.items)
        self.loop_ready = self.loop_base + len(self.loops)
        for call in self.fresh:
            call.item = call.output = call.delegation = call.report = None
        self.fresh = []

    # -- emission ----------------------------------------------------------------------------

    def _loop(self) -> DraftLoop | None:
        return self.turn.loop if self.turn is not None else None

    def _state(self, text: str) -> None:
        self.emit("runtime.state", "structural", {"text": text, "has_images": False}, self._loop())

    def _notice(self, text: str, loop: DraftLoop | None) -> None:
        self.emit("runtime.notice", "structural", {"text": text, "has_images": False}, loop)

    # -- turns -------------------------------------------------------------------------------

    def _turn_start(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._flush_usage()
        if self.turn is not None:
            self.turn.loop.end = self.position  # bounded by the next turn, no outcome
            self._settle()
        number = int_or_none(data.get("turn"))
        loop = DraftLoop(start=self.position, native_id=None if number is None else str(number))
        self.loops.append(loop)
        trigger = nonempty_str(dict_or_empty(data.get("trigger")).get("kind"))
        self.turn = Turn(loop, trigger)

    def _turn_end(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._flush_usage()
        turn = self.turn
        if turn is None:
            return
        reason = dict_or_empty(data.get("reason"))
        kind = nonempty_str(reason.get("kind"))
        if kind is None and "error" in data:
            kind = "error"  # legacy end without a reason kind
        outcome = _OUTCOMES.get(kind or "")
        loop = turn.loop
        loop.end, loop.outcome = self.position, outcome
        if kind == "error":
            text = error_text(reason, data)
            if text:
                self._notice(text, loop)
        elif kind == "max-tokens":  # a step was cut at its output cap: the truncation fact
            self._notice("turn ended at the output token limit (max-tokens)", loop)
        if loop.model_id is None and turn.route_model is not None:
            loop.model_id = turn.route_model
            self._loop_route(loop)
        self._promote_final(turn, kind)
        self.turn = None
        self._settle()

    def _promote_final(self, turn: Turn, kind: str | None) -> None:
        last = turn.last
        if last is None or not last.texts or last.tool_calls or last.interrupted:
            return
        finish = self.finishes.get(last.key)
        if finish == "stop" or (finish is None and kind == "completed"):
            last.texts[-1].role = "agent.final_answer"

    def _step(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._flush_usage()

    # -- usage -------------------------------------------------------------------------------

    def _located(self, sample: UsageSample | None) -> UsageSample | None:
        """A model call's usage stated by the current record, with the model routed to."""
        if sample is None:
            return None
        model = self.turn.route_model if self.turn is not None else None
        return sample.located((self.position,), self.time, model or self.model, self.provider)

    def _count(self, sample: UsageSample | None, loop: DraftLoop | None) -> None:
        if sample is None:
            return
        if loop is not None:
            loop.usage.append(sample)
        else:
            self.loose_calls.append(sample)

    def _flush_usage(self) -> None:
        """Usage chunks no message claimed belong to failed attempts: they count."""
        for _, sample in self.pending_usage:
            self._count(sample, self._loop())
        self.pending_usage = []

    def _loop_model(self, loop: DraftLoop, model: str | None) -> None:
        if loop.model_id is None and model is not None:
            loop.model_id = model
            self._loop_route(loop)

    def _loop_route(self, loop: DraftLoop) -> None:
        if self.effort is not None and self.effort[0] in (None, loop.model_id):
            loop.effort = loop.effort or self.effort[1]
        if self.window is not None and self.window[0] in (None, loop.model_id):
            loop.context_window = loop.context_window or self.window[1]

    def _request_header(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        config = dict_or_empty(dict_or_empty(data.get("header")).get("config"))
        model = nonempty_str(config.get("model"))
        self.provider = nonempty_str(config.get("provider")) or self.provider
        effort = nonempty_str(config.get("reasoningEffort"))
        if effort is not None:
            self.effort = (model, effort)
        self.model = model or self.model
        if self.turn is not None and model is not None:
            self.turn.route_model = model

    def _request_context(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        model = nonempty_str(data.get("model"))
        window = int_or_none(data.get("contextWindow"))
        if window is not None and window > 0:
            self.window = (model, window)
        self.model = model or self.model
        if self.turn is not None and model is not None:
            self.turn.route_model = model

    def _chunk(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        chunk = dict_or_empty(data.get("chunk"))
        kind = type_tag(chunk.get("type"))
        if kind == "usage":
            sample = self._located(usage_of(chunk.get("usage")))
            seq = self.next_seq - 1
            if sample is not None:
                self.pending_usage.append((seq, sample))
        elif kind == "finish":
            reason = nonempty_str(dict_or_empty(chunk.get("reason")).get("kind"))
            if reason is not None:
                self.finishes[step_key(data)] = reason

    def _attempt(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        sample, finish = stream_facts(data.get("stream"))
        self._count(self._located(sample), self._loop())
        if finish is not None:
            self.finishes[step_key(data)] = finish

    def _retry(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._flush_usage()
        failure = dict_or_empty(data.get("failure"))
        text = error_text(failure, {})
        if text:
            self._notice(text, self._loop())

    # -- compaction ----------------------------------------------------------------------------

    def _compaction(self, phase: str, data: dict[str, Any]) -> None:
        if phase == "summary":
            if self.compaction is not None:
                self._emit_compaction(None)
            text, _ = content_text(dicts_in(data.get("summary")))
            self.compaction = (self.position, text or None, self.time, self._loop())
            # the summariser's own model call: in the turn it happens in, else the session's
            loop = self.turn.loop if self.turn is not None else None
            self._count(self._located(usage_of(data.get("usage"))), loop)
        elif phase == "end" and self.compaction is not None:
            self._emit_compaction(None)

    def _emit_compaction(self, replacement: str | None) -> None:
        """One runtime.compaction_summary from the summary record and/or its replacement."""
        records = [self.position] if replacement is not None else []
        summary, at, loop = replacement, self.time, self._loop()
        if self.compaction is not None:
            position, text, at, loop = self.compaction
            records.insert(0, position)
            summary = text or replacement
            self.compaction = None
        item = DraftItem(
            "runtime.compaction_summary", "structural", {"summary": summary}, records, loop, at
        )
        self.items.append(item)


def _inherited_dropped(
    cut: int, loops: list[DraftLoop], items: list[DraftItem]
) -> tuple[list[DraftLoop], list[DraftItem]]:
    """Loops and items without what comes from the inherited prefix (before record `cut`).

    An item after the cut in an inherited Loop loses its Loop, or is dropped when its role
    needs one.
    """
    kept: list[DraftItem] = []
    for item in items:
        if min(item.records) < cut:
            continue
        if item.loop is not None and item.loop.start < cut:
            if item.role in LOOP_BOUND_ROLES:
                continue
            item.loop = None
        kept.append(item)
    return [loop for loop in loops if loop.start >= cut], kept
