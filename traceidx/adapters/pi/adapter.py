"""The Pi adapter: dispatches each session-file entry to the handler of its type."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.pi.state import IDLE, MODEL, RETRY, STOPPED, TOOLS
from traceidx.adapters.pi.tools import PiTools
from traceidx.adapters.pi.usage import usage_of
from traceidx.adapters.pi.wire import (
    CUSTOM_ROLES,
    FINAL_STOPS,
    RECORD_ONLY,
    SKILL_CLOSE,
    SKILL_OPEN,
    SUBAGENT_ENDED,
    SUBAGENT_NOTIFY,
    SUMMARY_ROLES,
    block_reasoning,
    block_text,
    is_header,
    native_type,
    session_file_id,
)
from traceidx.adapters.values import dict_or_empty, str_or_none
from traceidx.domain.drafts import RecordFacts
from traceidx.domain.rules import message_text, type_tag


class PiAdapter(PiTools):
    """Projects one Pi session file (the format: ``docs/runtimes/pi.md``)."""

    runtime = "pi"

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        first = next((o for o in head if isinstance(o, dict)), None)
        return first is not None and is_header(first) and "createdAt" not in first

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
        sample = usage_of(message)
        if sample is not None:
            provider = message.get("provider")
            sample = sample.located(
                (self.position,),
                self.time,
                model if isinstance(model, str) and model else None,
                provider if isinstance(provider, str) and provider else None,
            )
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
