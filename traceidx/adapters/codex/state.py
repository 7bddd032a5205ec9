"""Codex adapter state: the session, Loops and their lifecycle, and what `drain` may return."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from traceidx.adapters.base import Adapter
from traceidx.adapters.values import int_or_none, str_or_none
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession
from traceidx.domain.rules import UsageSample
from traceidx.domain.timestamps import rfc3339_ms

#: records during which a draft may still be joined by a later record (the other track's copy
#: of a message, end events of a tool output, a spawn's output, an output's call, a final-answer
#: marker), within one Loop: what lets `drain` settle the start of a long Loop
JOIN_WINDOW: Final = 512


@dataclass(slots=True)
class TurnState:
    """Adapter-side state of one Loop."""

    draft: DraftLoop
    open: bool = True
    humans: int = 0
    agent_output: bool = False
    tail_humans: list[DraftItem] = field(default_factory=list)  # since the last agent output
    final: bool = False
    unphased: list[DraftItem] = field(default_factory=list)
    record_usage: list[UsageSample] = field(default_factory=list)
    count_usage: list[UsageSample] = field(default_factory=list)
    sealed: bool = False  # a later Loop started: nothing changes this one any more


@dataclass(slots=True)
class PendingMessage:
    """A message seen on one track that the other track may still claim."""

    item: DraftItem
    position: int
    text: str
    native_id: str | None
    track: str  # "ui" | "model"


class CodexState(Adapter):
    """What a Codex rollout's adapter keeps between records, and the Loop lifecycle."""

    def __init__(self) -> None:
        super().__init__()
        self.legacy = False
        self.provider: str | None = None  # the session's model provider, as stated
        self.subagent = False
        self.history_start: int | None = None
        self.loops: list[TurnState] = []
        self.by_turn: dict[str, TurnState] = {}
        self.loop: TurnState | None = None
        self.lifecycle = False  # task markers or turn ids seen in this file
        self.task_markers = False  # task_started / task_complete seen in this file
        self.pending_users: list[PendingMessage] = []  # model-input user messages, unclaimed
        self.ui_humans: list[PendingMessage] = []  # UI human inputs whose model copy may follow
        self.pending_agent: list[PendingMessage] = []  # assistant messages awaiting their twin
        self.ui_reasoning: list[int] = []
        # joinable within the current Loop (and `JOIN_WINDOW`), in emission order for `drain`
        self.outputs: dict[str, DraftItem] = {}
        self.output_order: deque[DraftItem] = deque()
        self.ends: dict[str, tuple[int, dict[str, Any]]] = {}
        self.end_order: deque[tuple[int, str]] = deque()
        self.spawns: dict[str, DraftItem | None] = {}  # None: no longer joinable
        self.spawn_order: deque[tuple[str, DraftItem]] = deque()
        self.loop_calls: set[str] = set()  # call ids drafted in the current Loop
        self.awaiting_call: dict[str, DraftItem] = {}  # outputs whose call has not appeared
        self.unlinked: set[str] = set()  # call ids of outputs settled before their call
        self.sealed_turns: set[str] = set()
        self.children: set[str] = set()
        self.processes: dict[str, str] = {}  # unified-exec session id -> the exec call's id
        self.stdin_calls: dict[str, str] = {}  # write_stdin call id -> its exec session id
        self.settings: dict[str, str] = {}  # approval / sandbox setting -> last value seen
        self.last_total: tuple[int, ...] | None = None
        self.last_compaction: DraftItem | None = None

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """Sealed Loops, and the items before the first one a later record may still change."""
        if self.session is None:
            return [], []
        loops: list[DraftLoop] = []
        while self.loops and self.loops[0].sealed:
            loops.append(self.loops.pop(0).draft)
        held = self._held_from()
        count = 0
        for item in self.items:
            if held is not None and item.records[0] >= held:
                break
            count += 1
        items = self.items[:count]
        del self.items[:count]
        return loops, items

    def _held_from(self) -> int | None:
        """The first record position of the items a later record may still change."""
        position = self.position
        first: list[int] = []
        users = self.pending_users  # beyond the window no UI input can claim them
        while users and users[0].position + JOIN_WINDOW < position + 1:
            self._settle_unclaimed(users.pop(0))
        for messages in (self.pending_users, self.ui_humans, self.pending_agent):
            while messages and messages[0].position + JOIN_WINDOW < position + 1:
                del messages[0]
            if messages:
                first.append(messages[0].item.records[0])
        state = self.loop
        if state is not None:
            unphased = state.unphased
            while unphased and unphased[0].records[0] + JOIN_WINDOW < position + 1:
                del unphased[0]
            if not state.final and unphased:
                first.append(unphased[0].records[0])
            if not self.task_markers and state.tail_humans:
                first.append(min(item.records[0] for item in state.tail_humans))
        outputs = self.output_order
        while outputs and not self._joinable(outputs[0], self.outputs, position + 1):
            stale = outputs.popleft()
            if self.outputs.get(str(stale.output_of)) is stale:
                del self.outputs[str(stale.output_of)]
        if outputs:
            first.append(outputs[0].records[0])
        spawns = self.spawn_order
        while spawns and not self._joinable(spawns[0][1], self.spawns, position + 1, spawns[0][0]):
            call_id, stale = spawns.popleft()
            if self.spawns.get(call_id) is stale:
                self.spawns[call_id] = None
        if spawns:
            first.append(spawns[0][1].records[0])
        ends = self.end_order
        while ends and ends[0][0] + JOIN_WINDOW < position + 1:
            at, call_id = ends.popleft()
            if self.ends.get(call_id, (None,))[0] == at:
                del self.ends[call_id]
        while self.awaiting_call:  # outputs whose call did not appear: rare
            call_id, output = next(iter(self.awaiting_call.items()))
            if output.records[0] + JOIN_WINDOW >= position + 1:
                first.append(output.records[0])
                break
            del self.awaiting_call[call_id]
            self.unlinked.add(call_id)
        compaction = self.last_compaction
        if compaction is not None:
            if position <= compaction.records[-1] + 1:
                first.append(compaction.records[0])
            else:
                self.last_compaction = None  # no later context_compacted can join it
        return min(first, default=None)

    @staticmethod
    def _joinable(
        item: DraftItem, index: dict[str, Any], position: int, call_id: str | None = None
    ) -> bool:
        """Whether a record at `position` may still join `item` (registered in `index`)."""
        key = call_id if call_id is not None else item.output_of
        return (
            key is not None and index.get(key) is item and position - item.records[0] <= JOIN_WINDOW
        )

    def finish(self) -> Draft:
        for message in self.pending_users:
            self._settle_unclaimed(message)
        self.pending_users = []
        self._flush_ui_reasoning()
        for state in self.loops:
            if not state.sealed:
                state.draft.usage = state.record_usage or state.count_usage
        return Draft(self.session, [s.draft for s in self.loops], self.items, self.unknown)

    def _inherited(self, obj: dict[str, Any]) -> bool:
        """Whether a record lies in the declared inherited (replayed parent) prefix."""
        if self.history_start is None or self.position == 0:
            return False
        ordinal = int_or_none(obj.get("ordinal"))
        return (ordinal if ordinal is not None else self.position) < self.history_start

    # -- session -------------------------------------------------------------------------------

    def _legacy_header(self, obj: dict[str, Any]) -> None:
        self.legacy = True
        native = str_or_none(obj.get("id"))
        if native:
            self.session = DraftSession(native, self.position, created_at=self.time)

    def _session_meta(self, payload: dict[str, Any]) -> None:
        native = str_or_none(payload.get("id")) or str_or_none(payload.get("session_id"))
        if self.session is not None:
            if native and native != self.session.native_id:
                value = {"text": native, "category": "session_reference", "has_images": False}
                self._emit("runtime.context", "structural", value, None)
            return
        if not native:
            return
        created = rfc3339_ms(payload.get("timestamp"))
        session = DraftSession(native, self.position, created_at=created or self.time)
        session.working_directory = str_or_none(payload.get("cwd")) or None
        git = payload.get("git")
        session.branch = str_or_none(git.get("branch")) or None if isinstance(git, dict) else None
        self.provider = str_or_none(payload.get("model_provider")) or None
        forked = str_or_none(payload.get("forked_from_id"))
        if forked:
            session.forked_from = (forked, self.position)
        source = payload.get("source")
        spawned = source.get("subagent") if isinstance(source, dict) else None
        self.subagent = payload.get("thread_source") == "subagent" or spawned is not None
        parent = str_or_none(payload.get("parent_thread_id"))
        if parent is None and isinstance(spawned, dict):
            spawn = spawned.get("thread_spawn")
            parent = str_or_none(spawn.get("parent_thread_id")) if isinstance(spawn, dict) else None
        parent = parent or str_or_none(payload.get("parent_session_id"))
        if self.subagent and parent:
            session.delegated_from = (parent, self.position)
        start = int_or_none(payload.get("subagent_history_start_ordinal"))
        if start is not None and start >= 0:
            self.history_start = start
        self.session = session

    # -- loops ---------------------------------------------------------------------------------

    def _start_loop(self, native: str | None, start: int | None = None) -> TurnState:
        start = self.position if start is None else start
        self._close_current(bound=True, at=start)
        if self.loop is not None:
            self._seal(self.loop)
        state = TurnState(DraftLoop(start=start, native_id=native))
        self.loops.append(state)
        self.loop = state
        if native:
            self.by_turn[native] = state
            self.sealed_turns.discard(native)
        return state

    def _seal(self, state: TurnState) -> None:
        """The next Loop starts: fix this one and settle whatever could still join it."""
        state.sealed = True
        state.draft.usage = state.record_usage or state.count_usage
        state.record_usage, state.count_usage = [], []
        state.unphased, state.tail_humans = [], []  # rebound: `_new_turn` holds the old list
        native = state.draft.native_id
        if native and self.by_turn.get(native) is state:
            del self.by_turn[native]
            self.sealed_turns.add(native)
        for message in self.pending_users:  # session-level ones no Loop claimed
            self._settle_unclaimed(message)
        self.pending_users, self.pending_agent, self.ui_humans = [], [], []
        self.outputs, self.ends, self.spawns = {}, {}, {}
        self.output_order.clear()
        self.end_order.clear()
        self.spawn_order.clear()
        self.loop_calls = set()
        self.processes, self.stdin_calls = {}, {}
        self.unlinked.update(self.awaiting_call)
        self.awaiting_call = {}

    def _sealed_turn(self, turn: str | None) -> bool:
        """Whether a record names the turn of a sealed Loop (it then changes nothing)."""
        return turn is not None and turn not in self.by_turn and turn in self.sealed_turns

    def _close_current(self, *, bound: bool, at: int) -> None:
        state = self.loop
        if state is not None and state.open:
            if bound and state.draft.end is None:
                state.draft.end = at  # the next Loop's start bounds it
            state.open = False
            self._close_loop(state)

    def _close_loop(self, state: TurnState) -> None:
        self._flush_ui_reasoning()
        for message in [m for m in self.pending_users if m.item.loop is state.draft]:
            self.pending_users.remove(message)
            self._settle_unclaimed(message)
        self.pending_agent = [m for m in self.pending_agent if m.item.loop is not state.draft]
        self.ui_humans = [m for m in self.ui_humans if m.item.loop is not state.draft]

    def _current(self) -> TurnState | None:
        """The running Loop, if any."""
        return self.loop if self.loop is not None and self.loop.open else None

    def _working(self) -> TurnState | None:
        """The Loop agent activity belongs to: the running one, else the last one."""
        return self.loop

    def _task_started(self, payload: dict[str, Any]) -> None:
        self.lifecycle = self.task_markers = True
        turn = str_or_none(payload.get("turn_id"))
        current = self._current()
        if current is not None and turn and current.draft.native_id == turn:
            return
        state = self._start_loop(turn)
        window = int_or_none(payload.get("model_context_window"))
        if window is not None:
            state.draft.context_window = window

    def _turn_context(self, payload: dict[str, Any]) -> None:
        turn = str_or_none(payload.get("turn_id"))
        current = self._current()
        state = self.by_turn.get(turn) if turn else None
        if turn:
            self.lifecycle = True
        if self._sealed_turn(turn):
            return
        if state is None:
            if current is None or (turn and current.draft.native_id not in (None, turn)):
                state = self._new_turn(turn, current)
            else:
                state = current
                if turn and state.draft.native_id is None:
                    state.draft.native_id = turn
                    self.by_turn[turn] = state
        loop = state.draft
        model = str_or_none(payload.get("model"))
        if model:
            loop.model_id = model
        effort = str_or_none(payload.get("effort"))
        mode = payload.get("collaboration_mode")
        settings = mode.get("settings") if isinstance(mode, dict) else None
        if effort is None and isinstance(settings, dict):
            effort = str_or_none(settings.get("reasoning_effort"))
        if effort:
            loop.effort = effort
        window = int_or_none(payload.get("model_context_window"))
        if window is not None:
            loop.context_window = window
        sandbox = payload.get("sandbox_policy")
        settings = (
            ("approval policy", str_or_none(payload.get("approval_policy"))),
            ("sandbox", str_or_none(sandbox.get("type")) if isinstance(sandbox, dict) else None),
        )
        for name, setting in settings:
            if setting and self.settings.get(name) != setting:
                self.settings[name] = setting
                value = {"text": f"{name}: {setting}", "has_images": False}
                self._emit("runtime.state", "structural", value, state)

    def _new_turn(self, turn: str | None, previous: TurnState | None) -> TurnState:
        """A Loop started by a turn_context. Rollouts without task markers write it after the
        turn's human input: inputs that followed the previous Loop's last agent output belong
        to this turn and move into it."""
        moved = previous.tail_humans if previous is not None and not self.task_markers else []
        start = min(item.records[0] for item in moved) if moved else None
        state = self._start_loop(turn, start)
        for item in moved:
            item.loop = state.draft
            self._make_human(item, state, item.strength)
        return state

    def _task_end(self, payload: dict[str, Any], outcome: str) -> None:
        self.lifecycle = self.task_markers = True
        turn = str_or_none(payload.get("turn_id"))
        if self._sealed_turn(turn):
            return
        state = self.by_turn.get(turn) if turn else None
        state = state or self._current() or self.loop
        if state is None:
            state = self._start_loop(turn)
        state.draft.end, state.draft.outcome = self.position, outcome
        error = payload.get("error")
        if outcome == "failed" and error is not None:  # the reason Codex gives for the failure
            message = error.get("message") if isinstance(error, dict) else error
            text = str_or_none(message) or json.dumps(error, ensure_ascii=False)
            self._emit("runtime.notice", "structural", {"text": text}, state)
        last = str_or_none(payload.get("last_agent_message"))
        if outcome == "completed" and last and not state.final:
            for item in reversed(state.unphased):
                if self.position - item.records[0] > JOIN_WINDOW:
                    break
                if item.value.get("text") == last:
                    item.role, item.records = "agent.final_answer", [*item.records, self.position]
                    state.final = True
                    break
        if state.open:
            state.open = False
            self._close_loop(state)

    # -- items ---------------------------------------------------------------------------------

    def _emit(
        self,
        role: str,
        strength: str,
        value: dict[str, Any],
        loop: TurnState | None,
        **links: Any,
    ) -> DraftItem:
        item = self.emit(role, strength, value, loop.draft if loop is not None else None, **links)
        if loop is not None and role.startswith(("agent.", "tool.")):
            loop.agent_output = True
            loop.tail_humans = []
        return item

    def _recent(self, message: PendingMessage) -> bool:
        """Whether the current record may still pair with `message` (`JOIN_WINDOW`)."""
        return self.position - message.position <= JOIN_WINDOW

    def _state_of(self, draft: DraftLoop | None) -> TurnState | None:
        return next((s for s in reversed(self.loops) if s.draft is draft), None)

    def _make_human(self, item: DraftItem, state: TurnState, strength: str) -> None:
        session = self.session
        if self.subagent and session is not None:
            # the parent's task as this child received it: the parent's call is the one
            # delegation, so this stays a Record (that opens the child's Loop), not an Item
            for at, other in enumerate(self.items):
                if other is item:
                    del self.items[at]
                    break
        else:
            first = state.humans == 0 and not state.agent_output
            item.role = "human.request" if first else "human.steering"
            item.strength = strength
            state.tail_humans.append(item)
        state.humans += 1

    def _settle_unclaimed(self, message: PendingMessage) -> None:
        """A model-input user message no UI event claimed: runtime-injected, unknown purpose."""
        value = message.item.value
        message.item.value = {"text": value.get("text"), "has_images": value.get("has_images")}

    def _flush_ui_reasoning(self) -> None:
        """UI reasoning events no model-input reasoning item took: Records only (they repeat
        summaries the model-input track normally carries; alone they add no verified fact)."""
        self.ui_reasoning = []
