"""The dsh adapter: dispatches each log record to the handler of its type."""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.dsh.state import LastMessage
from traceidx.adapters.dsh.tools import DshTools
from traceidx.adapters.dsh.usage import stream_facts, usage_of
from traceidx.adapters.dsh.wire import (
    DISPATCH_END,
    DISPATCH_START,
    INPUT_EVENTS,
    KNOWN_TYPES,
    content_text,
    epoch_ms,
    is_session_log,
    native_type,
    source_seqs,
    step_key,
)
from traceidx.adapters.values import dict_or_empty, dicts_in, nonempty_str, reasoning_value
from traceidx.domain.drafts import DraftItem, RecordFacts
from traceidx.domain.rules import type_tag

_SOURCES: Final[dict[str, tuple[str, str | None]]] = {
    "runtime-context": ("runtime.context", "environment"),
    "@deepseek-ai/dsh-system-prompt": ("runtime.context", "environment"),
    "time-context": ("runtime.context", "environment"),
    "tmux-context": ("runtime.context", "environment"),
    "agent-instructions": ("runtime.instructions", "project"),
    "skill-catalog": ("runtime.instructions", "tool_catalog"),
    "dsh-tool-skill": ("runtime.instructions", "tool_catalog"),
    "skill-invocation": ("runtime.instructions", "skill"),
    "goal": ("runtime.instructions", None),
    "hooks-claude-code": ("runtime.context", None),
    "hooks-codex": ("runtime.context", None),
    "ptc-mode": ("runtime.context", "file"),
    "tools-code-mode": ("runtime.context", "file"),
    "tools-ptc": ("runtime.context", "file"),
    "session-reference": ("runtime.context", "session_reference"),
}
_REPORT_SOURCES: Final = frozenset({"subagent-settled", "subagent-report"})
_COMPACTION_SOURCES: Final = frozenset({"compact", "compact-checkpoint", "compact-basic"})


class DshAdapter(DshTools):
    """Projects one dsh session log (the format: ``docs/runtimes/dsh.md``)."""

    runtime = "dsh"

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        return is_session_log(head)

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position = position
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            self.count_unknown("<no type>")
            return RecordFacts(None, None)
        kind: str = obj["type"]
        if kind == "session" and self.session is None:
            self.time = epoch_ms(obj.get("createdAt"))
            self._header(obj)
            return RecordFacts(self.time, kind)
        self.time = epoch_ms(obj.get("time", obj.get("time0")))
        data = dict_or_empty(obj.get("data"))
        self._count_seq(obj, kind, data)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, obj, data)
        elif kind.startswith(("compaction/", "compact/")):
            self._compaction(kind.split("/", 1)[1], data)
        elif kind not in KNOWN_TYPES:
            self.count_unknown(kind)
        return RecordFacts(self.time, native_type(kind, data))

    # -- model output --------------------------------------------------------------------------

    def _assistant(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        message = data.get("message")
        flat = not isinstance(message, dict)
        msg = data if flat else dict_or_empty(message)
        loop = self._loop()
        key = step_key(data)
        # usage: the message's own; a chunk it was built from is the same call
        sample = self._located(usage_of(data.get("usage")))
        stream_sample, finish = stream_facts(data.get("stream"))
        stream_sample = self._located(stream_sample)
        if finish is not None:
            self.finishes[key] = finish
        claimed = source_seqs(obj.get("sourceEventSeqs"))
        pending = self.pending_usage
        # trusted only when they point before this event (redacted snapshots renumbered some)
        if claimed and max(claimed) < self.next_seq - 1:
            own = [s for q, s in pending if q in claimed]
            failed = [s for q, s in pending if q not in claimed]
        else:
            own = [s for _, s in pending[-1:]]
            failed = [s for _, s in pending[:-1]]
        self.pending_usage = []
        for earlier in failed:
            self._count(earlier, loop)
        self._count(sample or stream_sample or (own[-1] if own else None), loop)
        source = (
            dict_or_empty(msg.get("source")) if not flat else dict_or_empty(data.get("provenance"))
        )
        if loop is not None:
            self._loop_model(loop, nonempty_str(source.get("model")))
        texts: list[DraftItem] = []
        calls = False
        for block in dicts_in(msg.get("content")):
            kind = type_tag(block.get("type"))
            if kind == "text" and nonempty_str(block.get("text")) and loop is not None:
                value = {"text": block["text"], "has_images": False}
                texts.append(self.emit("agent.commentary", "structural", value, loop))
            elif kind == "reasoning":
                value = reasoning_value(nonempty_str(block.get("text")))
                self.emit("agent.reasoning", "structural", value, loop)
            elif kind == "tool-call":
                calls = True
                self._call(
                    nonempty_str(block.get("id")),
                    nonempty_str(block.get("name")),
                    block.get("arguments"),
                )
        if self.turn is not None:
            self.turn.last = LastMessage(texts, calls, data.get("interrupted") is True, key)

    def _system_message(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        text, _ = content_text(dicts_in(dict_or_empty(data.get("message")).get("content")))
        if text:
            self.emit("runtime.instructions", "structural", {"text": text}, self._loop())

    # -- inputs --------------------------------------------------------------------------------

    def _input(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        kind: str = obj["type"]
        source = dict_or_empty(data.get("source"))
        source_kind = nonempty_str(source.get("kind"))
        plugin = nonempty_str(source.get("plugin")) if source_kind == "plugin" else None
        producer = plugin or source_kind
        blocks = dicts_in(data.get("content"))
        text, images = content_text(blocks)
        replace = isinstance(obj.get("surfaceOp"), dict) and obj["surfaceOp"].get("op") == "replace"
        turn = self.turn
        first = turn is not None and not turn.seen_input
        if turn is not None:
            turn.seen_input = True
        if replace and (self.compaction is not None or producer in _COMPACTION_SOURCES):
            self._emit_compaction(text)
            return
        if source_kind == "user" or (kind == "steering/message" and source_kind is None):
            self._human(kind, data, blocks, first)
        else:
            self._injected(kind, source, producer, text, images)
        if kind == "prompt/blocked" and nonempty_str(data.get("reason")):
            self._notice(f"prompt blocked: {data['reason']}", self._loop())

    def _injected(
        self, kind: str, source: dict[str, Any], producer: str | None, text: str, images: bool
    ) -> None:
        if not text and not images:
            return
        value: dict[str, Any] = {"text": text or None, "has_images": images}
        loop = self._loop()
        if producer in _REPORT_SOURCES:
            sender = nonempty_str(source.get("senderSessionId"))
            self.emit("subagent.report", "structural", value, loop, session_ref=sender)
        elif producer == "coordinator":
            sender = nonempty_str(source.get("senderSessionId"))
            if sender is None or sender != self.parent:  # work from the parent: a Record
                self.emit("subagent.activity", "structural", value, loop, session_ref=sender)
        elif producer in _SOURCES or (kind == "context/message" and producer is None):
            role, category = _SOURCES.get(producer or "", ("runtime.context", None))
            if category is not None:
                value["category"] = category
            if role == "runtime.instructions":
                value.pop("has_images")
            self.emit(role, "structural", value, loop)
        elif source.get("form") == "notice":
            self.emit("runtime.notice", "structural", value, loop)
        else:
            self.emit("runtime.unknown", "structural", value, loop)

    def _human(
        self, kind: str, data: dict[str, Any], blocks: list[dict[str, Any]], first: bool
    ) -> None:
        turn = self.turn
        if turn is None:
            return  # a human input outside any turn has no Loop to belong to
        display = dicts_in(dict_or_empty(data.get("envelope")).get("displayContent")) or blocks
        text, images = content_text(display)
        if not text and not images:
            return
        if self.child:  # the parent's task on the user channel: a Record that opens the Loop
            if text:  # the first one after an inherited prefix is the child's task
                self.tasks.append((self.position, text))
            return
        value = {"text": text or None, "has_images": images}
        if first and kind != "steering/message" and turn.trigger != "injection":
            self.emit("human.request", "heuristic", value, turn.loop)
        else:
            self.emit("human.steering", "heuristic", value, turn.loop)

    # -- runtime state ------------------------------------------------------------------------

    def _todo(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        lines = [
            f"[{nonempty_str(todo.get('status')) or '?'}] {todo.get('content')}"
            for todo in dicts_in(data.get("todos"))
        ]
        self._state("\n".join(lines) if lines else "(empty todo list)")

    def _mode(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        kind: str = obj["type"]
        if kind == "plan/mode" and isinstance(data.get("active"), bool):
            self._state(f"plan mode: {'on' if data['active'] else 'off'}")
            return
        field_name = {"permission/preset": "preset", "sandbox/mode": "mode"}.get(kind, "policy")
        value = nonempty_str(data.get(field_name))
        if value is not None:
            self._state(f"{kind.replace('/', ' ')}: {value}")

    def _approval(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        approval = nonempty_str(data.get("id"))
        if obj["type"] == "approval/asked":
            tool = nonempty_str(data.get("toolName")) or "a tool"
            if approval is not None:
                self.approvals[approval] = tool
            reason = nonempty_str(data.get("reason"))
            self._notice(
                f"approval asked for {tool}" + (f": {reason}" if reason else ""), self._loop()
            )
            return
        outcome = nonempty_str(data.get("outcome"))
        if outcome is not None:
            tool = self.approvals.get(approval or "", "a tool")
            self._state(f"approval for {tool}: {outcome}")

    def _goal(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        operation = nonempty_str(data.get("operation"))
        objective = nonempty_str(dict_or_empty(data.get("goal")).get("objective"))
        if operation is not None:
            self._state(f"goal {operation}" + (f": {objective}" if objective else ""))

    def _command(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        loop = self._loop()
        if obj["type"] == "command/run":
            name = nonempty_str(data.get("name"))
            if name is not None:
                args = data.get("args") if isinstance(data.get("args"), str) else ""
                value = {"text": f"/{name}{args}", "has_images": False, "category": "internal"}
                self.emit("runtime.context", "structural", value, loop)
        elif nonempty_str(data.get("text")):
            self._notice(data["text"], loop)


_HANDLERS: Final = {
    "turn/start": DshAdapter._turn_start,
    "turn/end": DshAdapter._turn_end,
    "step/start": DshAdapter._step,
    "step/end": DshAdapter._step,
    "session/end-seed": DshAdapter._end_seed,
    "request/header": DshAdapter._request_header,
    "request/context": DshAdapter._request_context,
    "assistant/chunk": DshAdapter._chunk,
    "assistant/attempt": DshAdapter._attempt,
    "assistant/message": DshAdapter._assistant,
    "llm/retry": DshAdapter._retry,
    "tool/call": DshAdapter._tool_call,
    "tool/result": DshAdapter._tool_result,
    "system/message": DshAdapter._system_message,
    "developer/message": DshAdapter._system_message,
    "todo/write": DshAdapter._todo,
    "permission/preset": DshAdapter._mode,
    "sandbox/mode": DshAdapter._mode,
    "approval/policy": DshAdapter._mode,
    "plan/mode": DshAdapter._mode,
    "approval/asked": DshAdapter._approval,
    "approval/decided": DshAdapter._approval,
    "goal/change": DshAdapter._goal,
    "command/run": DshAdapter._command,
    "command/done": DshAdapter._command,
    "subagent/catalog": DshAdapter._catalog,
    **dict.fromkeys(INPUT_EVENTS, DshAdapter._input),
    **dict.fromkeys(DISPATCH_START, DshAdapter._dispatch_start),
    **dict.fromkeys(DISPATCH_END, DshAdapter._dispatch_end),
}
