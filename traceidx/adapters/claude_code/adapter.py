"""The Claude Code adapter: dispatches each transcript line to the handler of its type."""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.claude_code.messages import (
    ATTACHMENTS,
    BOOKKEEPING_ATTACHMENTS,
    HUMAN_PROMPT_SOURCES,
    INTERRUPT_PREFIX,
    attachment_text,
    user_marker,
)
from traceidx.adapters.claude_code.state import Response
from traceidx.adapters.claude_code.tools import ClaudeCodeTools
from traceidx.adapters.claude_code.wire import (
    KNOWN_TYPES,
    RECORD,
    is_transcript,
    native_type,
    record_type,
    text_blocks,
)
from traceidx.adapters.values import reasoning_value
from traceidx.domain.drafts import DraftLoop, RecordFacts
from traceidx.domain.rules import type_tag

_TOOL_USE_BLOCKS: Final = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


class ClaudeCodeAdapter(ClaudeCodeTools):
    """Projects one Claude Code transcript (the format: ``docs/runtimes/claude_code.md``)."""

    runtime = "claude_code"
    record_type = RECORD

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        return is_transcript(head)

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        if not self.enter(position, obj):
            return RecordFacts(None, None)
        self._session_facts(obj)
        kind = record_type(obj)
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            if obj.get("isSidechain") is True and not self.subagent and self.session is not None:
                lane = self._sidechain_lane(obj)  # a subagent's run inside the main file
                self._swap(lane)
                handler(self, obj)
                self._swap(lane)
            else:
                handler(self, obj)
        elif not isinstance(kind, str) or kind not in KNOWN_TYPES:
            self.count_unknown(str(kind))
        return RecordFacts(self.time, native_type(obj))

    # -- user records -----------------------------------------------------------------------

    def _user(self, obj: dict[str, Any]) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        text, images, results = text_blocks(message.get("content"))
        if results:
            loop = self._current() or self.loop
            for block in results:
                self._tool_result(obj, block, loop)
        if isinstance(obj.get("interruptedMessageId"), str):
            self._end_loop("interrupted")
        if not text and not images:
            return
        self._user_text(obj, text, images, bool(results))

    def _user_text(self, obj: dict[str, Any], text: str, images: bool, in_result: bool) -> None:
        value = {"text": text or None, "has_images": images}
        origin = obj.get("origin")
        origin_kind = origin.get("kind") if isinstance(origin, dict) else None
        if obj.get("isCompactSummary") is True:
            self.emit("runtime.compaction_summary", "structural", {"summary": text}, None)
        elif origin_kind == "task-notification" or text.startswith("<task-notification>"):
            strength = "structural" if origin_kind == "task-notification" else "heuristic"
            self._notification(text, strength, self._start_loop(self.position))
        elif text.startswith(INTERRUPT_PREFIX):
            self.emit("runtime.notice", "heuristic", value, self._current() or self.loop)
            self._end_loop("interrupted")
        elif obj.get("isMeta") is True:
            self._meta(obj, text, images)
        elif (marker := user_marker(text)) is not None:
            role, category, starts_work = marker
            if category is not None:
                value["category"] = category
            if starts_work:  # a command typed at the prompt: no turn is running any more
                self._bound_loop()
                self.pending_start = self.position
            self.emit(role, "heuristic", value, self._current())
        elif self.subagent or self.in_sidechain:
            self._subagent_input(text)
        elif in_result:
            self.emit("runtime.context", "heuristic", value, self._current())
        else:
            self._human_prompt(obj, value, origin_kind)

    def _human_prompt(self, obj: dict[str, Any], value: dict[str, Any], origin: object) -> None:
        source = type_tag(obj.get("promptSource"))
        if origin == "human":
            strength = "structural"
        elif isinstance(origin, str) or source == "system":
            self.emit("runtime.notice", "structural", value, self._current())
            return
        else:
            strength = HUMAN_PROMPT_SOURCES.get(source, "heuristic") if source else "heuristic"
        loop = self._start_loop(self.position)
        self.emit("human.request", strength, value, loop)

    def _subagent_input(self, text: str | None) -> None:
        """A subagent's task, as its parent gave it: it opens the subagent's run (a Loop) and
        stays a Record; the delegation is the parent's item (its Agent/Task call). A subagent
        file's first one is its Session's task."""
        session = self.session
        if self.subagent and session is not None and session.task is None and text:
            session.task = text
        if not self.open:
            self._start_loop(self.position)

    def _meta(self, obj: dict[str, Any], text: str, images: bool) -> None:
        call = self.calls.get(str(obj.get("sourceToolUseID")))
        loop = self._current()
        value: dict[str, Any]
        if call == "Skill":
            value = {"text": text or None, "category": "skill"}
            self.emit("runtime.instructions", "structural", value, loop)
        elif images:
            value = {"text": text or None, "has_images": True, "category": "file"}
            self.emit("runtime.context", "structural", value, loop)
        else:
            self.emit("runtime.notice", "structural", {"text": text}, loop)
            if not self.open:
                self.pending_start = self.position

    def _assistant(self, obj: dict[str, Any]) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        model = message.get("model")
        if obj.get("isApiErrorMessage") is True or model == "<synthetic>":
            self._synthetic(blocks, obj.get("isApiErrorMessage") is True)
            return
        loop = self._working_loop()
        response = self._response(obj, message, loop)
        cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else None
        for block in blocks:
            self._assistant_block(block, loop, response, cwd)

    def _synthetic(self, blocks: list[dict[str, Any]], api_error: bool) -> None:
        loop = self._current() or self.loop
        for block in blocks:
            if block.get("type") == "text" and block.get("text"):
                self.emit("runtime.notice", "structural", {"text": block["text"]}, loop)
        if api_error:
            self._end_loop("failed")

    def _assistant_block(
        self,
        block: dict[str, Any],
        loop: DraftLoop,
        response: Response,
        cwd: str | None,
    ) -> None:
        kind = type_tag(block.get("type"))
        if kind == "text":
            text = block.get("text") if isinstance(block.get("text"), str) else ""
            if not text:
                return
            value = {"text": text, "has_images": False}
            item = self.emit("agent.commentary", "structural", value, loop)
            if response.turn.last is response and not response.turn.settled:
                if response.text is not None:
                    self._release(response.text)
                response.text = item
                self._hold(item)
        elif kind in ("thinking", "redacted_thinking"):
            thought = block.get("thinking") if kind == "thinking" else None
            kept = thought if isinstance(thought, str) and thought.strip() else None
            self.emit("agent.reasoning", "structural", reasoning_value(kept), loop)
        elif kind in _TOOL_USE_BLOCKS:
            self._tool_use(block, loop, cwd)

    # -- other records ----------------------------------------------------------------------

    def _system(self, obj: dict[str, Any]) -> None:
        subtype = obj.get("subtype")
        if subtype == "turn_duration":
            self._end_loop(None)
            return
        metadata = obj.get("compactMetadata")
        manual = isinstance(metadata, dict) and metadata.get("trigger") == "manual"
        if subtype == "compact_boundary" and manual:  # /compact runs between turns
            self._bound_loop()
        content = obj.get("content")
        text = content if isinstance(content, str) and content else None
        if text is None:
            error = obj.get("error")
            text = error if isinstance(error, str) else str(subtype or "system")
        self.emit("runtime.notice", "structural", {"text": text}, self._current())

    def _attachment(self, obj: dict[str, Any]) -> None:
        att = obj.get("attachment")
        if not isinstance(att, dict):
            return
        kind = att.get("type")
        if not isinstance(kind, str) or kind in BOOKKEEPING_ATTACHMENTS:
            return
        if kind == "queued_command":
            mode = att.get("commandMode")
            prompt = att.get("prompt")
            if mode == "task-notification" and isinstance(prompt, str):
                running = self.loop if self.loop is not None and self.open else None
                self._notification(prompt, "structural", running or self._start_loop(self.position))
                return
            if mode in (None, "prompt"):
                self._queued_prompt(att)
                return
        text = attachment_text(att)
        if text is None:
            return
        role, category = ATTACHMENTS.get(kind, ("runtime.unknown", None))
        value: dict[str, Any] = {"text": text}
        if role in ("runtime.context", "runtime.instructions") and category is not None:
            value["category"] = category
        if role in ("runtime.context", "runtime.state", "runtime.notice", "runtime.unknown"):
            value["has_images"] = False
        self.emit(role, "structural", value, self._current())

    def _queued_prompt(self, att: dict[str, Any]) -> None:
        prompt = att.get("prompt")
        text, images, _ = text_blocks(prompt)
        if not text and not images:
            return
        origin = att.get("origin")
        human = isinstance(origin, dict) and origin.get("kind") == "human"
        strength = "structural" if human else "heuristic"
        value = {"text": text or None, "has_images": images}
        if self.loop is not None and self.open:
            self.emit("human.steering", strength, value, self.loop)
        else:
            self.emit("human.request", strength, value, self._start_loop(self.position))

    def _control(self, obj: dict[str, Any]) -> None:
        agent = obj.get("agentId") or obj.get("taskId")
        role = "subagent.activity" if obj.get("type") == "started" else "subagent.report"
        value = {"text": str(obj.get("type")), "has_images": False}
        ref = agent if isinstance(agent, str) else None
        self.emit(role, "structural", value, self._current(), session_ref=ref)


_HANDLERS: Final = {
    "user": ClaudeCodeAdapter._user,
    "assistant": ClaudeCodeAdapter._assistant,
    "system": ClaudeCodeAdapter._system,
    "attachment": ClaudeCodeAdapter._attachment,
    "started": ClaudeCodeAdapter._control,
    "result": ClaudeCodeAdapter._control,
}
