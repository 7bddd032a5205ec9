"""Pi coding agent adapter: session files (format v1, v2 and v3) to draft facts.

The format, the versions checked against and the evidence rules: ``docs/runtimes/pi.md``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from traceidx.adapters.base import Adapter
from traceidx.adapters.pi.wire import (
    CALL_FAILURES,
    CUSTOM_ROLES,
    EXIT_LINE,
    FINAL_STOPS,
    IDLE,
    MODEL,
    RECORD_ONLY,
    RETRY,
    SHELL_TOOLS,
    SKILL_CLOSE,
    SKILL_OPEN,
    STOPPED,
    SUBAGENT_ENDED,
    SUBAGENT_NOTIFY,
    SUMMARY_ROLES,
    TOOLS,
    block_reasoning,
    block_text,
    is_header,
    native_type,
    parent_native_id,
    session_file_id,
)
from traceidx.adapters.values import declared_command, dict_or_empty, str_or_none
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession, RecordFacts
from traceidx.domain.rules import exit_code_from_header, message_text, type_tag, usage_sample


class PiAdapter(Adapter):
    """Projects one Pi session file."""

    runtime = "pi"

    version = 2

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        first = next((o for o in head if isinstance(o, dict)), None)
        return first is not None and is_header(first) and "createdAt" not in first

    def __init__(self) -> None:
        self.session: DraftSession | None = None
        self.loops: list[DraftLoop] = []
        self.items: list[DraftItem] = []
        self.unknown: dict[str, int] = {}
        self.position = 0
        self.time: int | None = None
        # state of the chain being written (see "Entries and the tree" in docs/runtimes/pi.md)
        self.last_key: str | None = None
        self.entries = 0
        self.loop: DraftLoop | None = None  # the most recently opened Loop
        self.phase = IDLE
        self.waiting: set[str] = set()  # tool call ids still without a result
        self.trigger: DraftItem | None = None  # extension message written while idle
        self.final: DraftItem | None = None  # the final answer of the current Loop, if any
        self.limbo: list[DraftItem] = []  # items written while a retry may follow
        self.effort: str | None = None
        self.call_loops: dict[str, DraftLoop] = {}

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        if not self.enter(position, obj):
            return RecordFacts(None, None)
        if self.session is None:
            if is_header(obj):
                self._header(obj)
            else:
                self.count_unknown("<entry before the session header>")
        elif is_header(obj):
            self.count_unknown("session (second header)")
        else:
            self._entry(obj)
        return RecordFacts(self.time, native_type(obj))

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """Every Loop but the last, and the items before the first one still open to change.

        Later records change only the most recent Loop (its end, model, usage and outcome) and
        three kinds of item: the current Loop's final answer (demoted when the run goes on), an
        extension message written while idle (it joins the Loop of a run it triggers) and,
        after an ``error``, the items written while a retry may follow (they join the retried
        Loop). A branch changes nothing written before it. The cost is the number of drafts
        returned: the scan stops at the first held item.
        """
        if self.session is None:  # nothing is drafted before the header
            return [], []
        loops = self.loops[:-1]
        del self.loops[:-1]
        held = {id(item) for item in self._held()}
        cut = 0
        for item in self.items:
            if id(item) in held:
                break
            cut += 1
        items = self.items[:cut]
        del self.items[:cut]
        # drop references no later record can use to change anything: demoting an answer no
        # longer the current Loop's final answer, or re-homing limbo outside a retry, is a no-op
        if not self._final_open():
            self.final = None
        if self.phase != RETRY:
            self.limbo = []
        return loops, items

    def _final_open(self) -> bool:
        """Whether a later assistant message may still demote the final answer."""
        final = self.final
        return final is not None and final.loop is self.loop and final.role == "agent.final_answer"

    def _held(self) -> list[DraftItem]:
        """The drafted items a later record may still change."""
        held: list[DraftItem] = []
        if self.trigger is not None:
            held.append(self.trigger)
        if self.phase == RETRY:
            held += self.limbo[:1]
        if self.final is not None and self._final_open():
            held.append(self.final)
        return held

    def finish(self) -> Draft:
        return Draft(self.session, self.loops, self.items, self.unknown)

    # -- session -------------------------------------------------------------------------------

    def _header(self, obj: dict[str, Any]) -> None:
        session = DraftSession(obj["id"], self.position)
        session.created_at = self.time
        cwd = obj.get("cwd")
        session.working_directory = cwd if isinstance(cwd, str) and cwd else None
        parent = parent_native_id(obj.get("parentSession") or obj.get("branchedFrom"))
        if parent is not None and parent != session.native_id:
            session.forked_from = (parent, self.position)
        level = obj.get("thinkingLevel")
        self.effort = level if isinstance(level, str) and level else None
        self.session = session

    # -- entries and the chain -----------------------------------------------------------------

    def _entry(self, obj: dict[str, Any]) -> None:
        self.entries += 1
        ident = obj.get("id")
        key = ident if isinstance(ident, str) else f"#{self.entries}"
        if "parentId" in obj and self.entries > 1 and obj.get("parentId") != self.last_key:
            self._branch()
        self.last_key = key
        kind = type_tag(obj.get("type"))
        if kind == "message":
            message = obj.get("message")
            if isinstance(message, dict):
                self._message(message)
            else:
                self.count_unknown("message (no message object)")
        elif kind in ("compaction", "branch_summary"):
            summary = obj.get("summary")
            value = {"summary": summary if isinstance(summary, str) and summary else None}
            # Pi compacts between turns of a run or between runs, never while tools execute
            self._runtime_item("runtime.compaction_summary", value, during_tools=False)
        elif kind == "custom_message":
            self._custom(obj)
        elif kind == "model_change":
            provider, model = obj.get("provider"), obj.get("modelId")
            name = f"{provider}/{model}" if isinstance(provider, str) and provider else model
            self._runtime_item("runtime.state", {"text": f"model: {name}", "has_images": False})
        elif kind == "thinking_level_change":
            level = obj.get("thinkingLevel")
            if isinstance(level, str) and level:
                self.effort = level
                state = {"text": f"thinking level: {level}", "has_images": False}
                self._runtime_item("runtime.state", state)
        elif kind == "session_info":
            name = obj.get("name")
            if isinstance(name, str) and name.strip() and self.session is not None:
                self.session.name = name.strip()
        elif kind not in RECORD_ONLY:
            self.count_unknown(str(kind))

    def _branch(self) -> None:
        """The leaf moved: Pi was idle, so nothing written next continues a running Loop."""
        self.phase = IDLE
        self.waiting = set()
        self.trigger = None
        self.limbo = []

    def _message(self, message: dict[str, Any]) -> None:
        role = type_tag(message.get("role"))
        if role == "user":
            self._user(message)
        elif role == "assistant":
            self._assistant(message)
        elif role == "toolResult":
            self._tool_result(message)
        elif role == "bashExecution":
            self._bash_execution(message)
        elif role in CUSTOM_ROLES:
            self._custom(message)
        elif role in SUMMARY_ROLES:
            summary = message.get("summary")
            value = {"summary": summary if isinstance(summary, str) and summary else None}
            self._runtime_item("runtime.compaction_summary", value)
        else:
            self.count_unknown(f"message/{role}")

    # -- loops ---------------------------------------------------------------------------------

    def _open_loop(self, start: int) -> DraftLoop | None:
        """A new Loop at `start`; None when a Loop already starts there (joined line)."""
        previous = self.loop
        if previous is not None and previous.start == start:
            return None
        if previous is not None and previous.end is None:
            previous.end = start  # the next Loop's start bounds it; no outcome
        loop = DraftLoop(start=start, effort=self.effort)
        self.loops.append(loop)
        self.loop = loop
        self.limbo = []
        return loop

    def _running(self, during_tools: bool = True) -> DraftLoop | None:
        """The Loop a runtime fact written now belongs to, if a run is in progress."""
        phases = (MODEL, TOOLS) if during_tools else (MODEL,)
        return self.loop if self.phase in phases else None

    def _runtime_item(
        self,
        role: str,
        value: dict[str, Any],
        during_tools: bool = True,
        session_ref: str | None = None,
    ) -> DraftItem:
        loop = self._running(during_tools)
        item = self.emit(role, "structural", value, loop, session_ref=session_ref)
        if self.phase == RETRY:
            self.limbo.append(item)
        return item

    # -- messages --------------------------------------------------------------------------------

    def _user(self, message: dict[str, Any]) -> None:
        text, images = message_text(message.get("content"))
        loop = self.loop
        steering = loop is not None and self.phase == MODEL
        if not steering:
            opened = self._open_loop(self.position)
            if opened is None:  # a second prompt on the line that opened this Loop
                steering = True
            else:
                loop = opened
        self.phase, self.waiting, self.trigger = MODEL, set(), None
        if text.startswith(SKILL_OPEN) and SKILL_CLOSE in text:
            cut = text.rindex(SKILL_CLOSE) + len(SKILL_CLOSE)
            skill = {"text": text[:cut], "category": "skill"}
            self.emit("runtime.instructions", "heuristic", skill, loop)
            text = text[cut:].strip()
            if not text and not images:
                return
        role = "human.steering" if steering else "human.request"
        self.emit(role, "heuristic", {"text": text or None, "has_images": images}, loop)

    def _assistant(self, message: dict[str, Any]) -> None:
        loop = self._assistant_loop()
        model = message.get("model")
        if loop.model_id is None and isinstance(model, str) and model:
            loop.model_id = model
        usage = message.get("usage")
        if isinstance(usage, dict):
            sample = usage_sample(
                input=usage.get("input"),
                output=usage.get("output"),
                cached=usage.get("cacheRead"),
                cache_write=usage.get("cacheWrite"),
                input_includes_cache=False,
            )
            if sample is not None:
                provider = message.get("provider")
                sample = sample.located(
                    (self.position,),
                    self.time,
                    model if isinstance(model, str) and model else None,
                    provider if isinstance(provider, str) and provider else None,
                )
                ended = type_tag(message.get("stopReason"))
                if ended in CALL_FAILURES:  # an attempt Pi wrote with the usage it billed
                    sample = msgspec.structs.replace(sample, outcome=CALL_FAILURES[ended])
                loop.usage.append(sample)
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if isinstance(content, str) and content:
            blocks = [{"type": "text", "text": content}]
        stop = type_tag(message.get("stopReason"))
        calls = [b for b in blocks if b.get("type") == "toolCall"]
        ends_generation = stop in FINAL_STOPS and not calls
        texts = [i for i, b in enumerate(blocks) if b.get("type") == "text" and block_text(b)]
        final = texts[-1] if ends_generation and texts else None
        for index, block in enumerate(blocks):
            kind = type_tag(block.get("type"))
            if kind == "text" and index in texts:
                value = {"text": block["text"], "has_images": False}
                if index == final:
                    self.final = self.emit("agent.final_answer", "heuristic", value, loop)
                else:
                    self.emit("agent.commentary", "structural", value, loop)
            elif kind == "thinking":
                self.emit("agent.reasoning", "structural", block_reasoning(block), loop)
            elif kind == "toolCall":
                self._tool_call(block, loop)
        self.trigger = None
        if stop == "aborted":
            loop.end, loop.outcome = self.position, "interrupted"
            self.phase = IDLE
        elif stop == "error":
            loop.end, loop.outcome = self.position, "failed"
            self.phase, self.limbo = RETRY, []
            reason = str_or_none(message.get("errorMessage"))
            if reason:  # the failure's reason; it joins a retried Loop like the rest of limbo
                notice = {"text": reason, "has_images": False}
                self.limbo.append(self.emit("runtime.notice", "structural", notice, loop))
        elif calls:
            self.phase = TOOLS
            self.waiting = {str(b.get("id")) for b in calls}
        else:
            self.phase = STOPPED if stop in FINAL_STOPS else IDLE

    def _assistant_loop(self) -> DraftLoop:
        """The Loop an assistant message belongs to, opening one for a run without a prompt."""
        loop = self.loop
        if loop is not None and self.phase in (MODEL, TOOLS):
            return loop
        if loop is not None and self.phase == STOPPED and self.trigger is None:
            final = self.final  # the run went on: the earlier answer was intermediate
            if final is not None and final.loop is loop:
                final.role, final.strength = "agent.commentary", "structural"
            return loop
        if loop is not None and self.phase == RETRY:  # Pi retried the failed request
            loop.end, loop.outcome = None, None
            for item in self.limbo:
                item.loop = loop
            self.limbo = []
            return loop
        trigger = self.trigger
        start = min(trigger.records) if trigger is not None else self.position
        opened = self._open_loop(start)
        if opened is None:
            assert loop is not None
            return loop
        if trigger is not None:
            trigger.loop = opened
        return opened

    def _tool_call(self, block: dict[str, Any], loop: DraftLoop) -> None:
        name, call_id = str_or_none(block.get("name")), str_or_none(block.get("id"))
        args = block.get("arguments")
        value: dict[str, Any] = {"tool_name": name}
        if args is not None:
            value["arguments"] = msgspec.json.encode(args).decode()
        shell = declared_command(name, args, SHELL_TOOLS)
        self.emit(
            "agent.tool_call", "structural", value, loop, call_id=call_id, shell_command=shell
        )
        if call_id is not None:
            self.call_loops[call_id] = loop

    def _tool_result(self, message: dict[str, Any]) -> None:
        call_id = message.get("toolCallId")
        ref = call_id if isinstance(call_id, str) else None
        loop = self.call_loops.get(ref) if ref is not None else None
        if loop is None:
            loop = self._running()
        text, _ = message_text(message.get("content"))
        value: dict[str, Any] = {"text": text or None}
        if isinstance(message.get("isError"), bool):
            value["failed"] = message["isError"]
        if message.get("toolName") == "bash" and text:
            code = exit_code_from_header(text[text.rfind("\n") + 1 :], EXIT_LINE)
            if code is not None:
                value["exit_code"] = code
                value["failed"] = bool(value.get("failed")) or code != 0
        details = message.get("details")
        truncation = details.get("truncation") if isinstance(details, dict) else None
        if isinstance(truncation, dict) and isinstance(truncation.get("truncated"), bool):
            value["runtime_truncated"] = truncation["truncated"]
        self.emit("tool.output", "structural", value, loop, output_of=ref)
        if ref is not None:
            self.waiting.discard(ref)
        if self.phase == TOOLS and not self.waiting:
            self.phase = MODEL

    def _bash_execution(self, message: dict[str, Any]) -> None:
        command = message.get("command")
        if isinstance(command, str) and command:
            value = {"text": command, "category": "internal", "has_images": False}
            self.emit("runtime.context", "structural", value, None)
        output = message.get("output")
        result: dict[str, Any] = {"text": output if isinstance(output, str) and output else None}
        code = message.get("exitCode")
        if isinstance(code, int) and not isinstance(code, bool):
            result["exit_code"] = code
        cancelled = message.get("cancelled") is True
        if cancelled or "exit_code" in result:
            result["failed"] = cancelled or result.get("exit_code") != 0
        if isinstance(message.get("truncated"), bool):
            result["runtime_truncated"] = message["truncated"]
        self.emit("tool.output", "structural", result, None)

    def _custom(self, obj: dict[str, Any]) -> None:
        text, images = message_text(obj.get("content"))
        value: dict[str, Any] = {"text": text or None, "has_images": images}
        if obj.get("customType") == SUBAGENT_NOTIFY:  # a background subagent's completion
            details = dict_or_empty(obj.get("details"))
            over = details.get("status") in SUBAGENT_ENDED
            role = "subagent.report" if over else "subagent.activity"
            item = self._runtime_item(role, value, session_ref=session_file_id(details))
        else:
            item = self._runtime_item("runtime.context", value)
        if self.phase in (IDLE, STOPPED):
            self.trigger = item  # a triggered turn would open its Loop here
