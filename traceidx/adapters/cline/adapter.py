"""The Cline adapter: dispatches each record of a session document (its head, then each
message) to the handler of its kind."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.cline.legacy import FILE, ClineTaskMessages, is_task_file, task_type
from traceidx.adapters.cline.usage import usage_of
from traceidx.adapters.cline.wire import (
    block_kind,
    blocks,
    is_display_only,
    is_error_display,
    is_head,
    is_session_document,
    native_type,
    user_input,
)
from traceidx.adapters.values import dict_or_empty, int_or_none, nonempty_str, reasoning_value
from traceidx.domain.drafts import DraftLoop, RecordFacts
from traceidx.domain.rules import type_tag


class ClineAdapter(ClineTaskMessages):
    """Projects one Cline CLI session document, or one task file of Cline's VS Code extension
    (the formats: ``docs/runtimes/cline.md``)."""

    runtime = "cline"

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        return is_session_document(head) or is_task_file(head)

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position = position
        if not isinstance(obj, dict):
            self.count_unknown("<not an object>")
            return RecordFacts(None, None)
        if position == 0 and FILE in obj:  # a task file's root record
            self.time = None
            self._task_head(obj)
            return RecordFacts(None, "task")
        if self.legacy:
            ts = int_or_none(obj.get("ts"))
            self.time = ts if ts is not None and ts >= 0 else None
            self._note_time()
            self._task_message(obj)
            return RecordFacts(self.time, task_type(obj))
        if is_head(obj):
            self.time = None
            self._head(obj)
            return RecordFacts(None, native_type(obj))
        ts = int_or_none(obj.get("ts"))
        self.time = ts if ts is not None and ts >= 0 else None
        role = type_tag(obj.get("role"))
        if self.session is None:
            self.count_unknown(f"{role} (before the session head)")
        elif role == "user":
            self._note_time()
            self._user(obj)
        elif role == "assistant":
            self._note_time()
            self._assistant(obj)
        else:
            self.count_unknown(f"message/{role}")
        return RecordFacts(self.time, native_type(obj))

    # -- messages ------------------------------------------------------------------------------

    def _user(self, message: dict[str, Any]) -> None:
        """Tool results, or a prompt (a task in a sub-agent's or teammate's session), which
        opens a Loop."""
        parts = blocks(message)
        results = [b for b in parts if block_kind(b) == "tool_result"]
        for block in results:
            self._tool_result(block)
        texts = [
            b["text"] for b in parts if block_kind(b) == "text" and isinstance(b.get("text"), str)
        ]
        images = any(block_kind(b) == "image" for b in parts)
        if results:
            for text in texts:  # text sent along with tool results
                self._context_or_steering(text, self.loop)
            return
        if not texts and not images:
            self.count_unknown("user (no text)")
            return
        loop = self._open_loop()
        for text in texts:
            typed = user_input(text)
            if typed is not None:
                value = {"text": typed, "has_images": images}
                self.emit("human.request", "structural", value, loop)
            elif not self.lead:  # the task the lead handed over: it stays a Record
                session = self.session
                if session is not None and session.task is None and text:
                    session.task = text
            elif text:  # a prompt Cline did not wrap (given through its SDK)
                self.emit("human.request", "heuristic", {"text": text, "has_images": images}, loop)

    def _context_or_steering(self, text: str, loop: DraftLoop | None) -> None:
        typed = user_input(text)
        if typed is not None:
            self.emit("human.steering", "structural", {"text": typed, "has_images": False}, loop)
        elif text:
            value = {"text": text, "category": "internal", "has_images": False}
            self.emit("runtime.context", "structural", value, loop)

    def _assistant(self, message: dict[str, Any]) -> None:
        if is_display_only(message):  # shown to the user, never sent to the model
            said = "\n".join(t for b in blocks(message) if isinstance(t := b.get("text"), str))
            value = {"text": said or None, "has_images": False}
            if is_error_display(message):  # the turn ended on an error: no model call
                self.emit("runtime.notice", "structural", value, self._current())
                self._end("failed")
            else:
                self.emit("runtime.notice", "structural", value, self.loop)
            return
        loop = self._response_loop()
        info = dict_or_empty(message.get("modelInfo"))
        model = nonempty_str(info.get("id"))
        if loop.model_id is None and model is not None:
            loop.model_id = model
        sample = usage_of(message.get("metrics"))
        if sample is not None:
            provider = nonempty_str(info.get("provider"))
            loop.usage.append(sample.located((self.position,), self.time, model, provider))
        parts = blocks(message)
        calls = False
        last_text = None
        for block in parts:
            kind = block_kind(block)
            if kind == "thinking":
                thought = block.get("thinking")
                value = reasoning_value(thought if isinstance(thought, str) else None)
                self.emit("agent.reasoning", "structural", value, loop)
            elif kind == "redacted_thinking":
                self.emit("agent.reasoning", "structural", reasoning_value(None), loop)
            elif kind == "text":
                text = block.get("text")
                if isinstance(text, str) and text:
                    value = {"text": text, "has_images": False}
                    last_text = self.emit("agent.commentary", "structural", value, loop)
            elif kind == "tool_use":
                calls = True
                self._tool_use(block, loop)
            else:
                self.count_unknown(f"assistant/{kind}")
        if not calls and last_text is not None:
            last_text.role, last_text.strength = "agent.final_answer", "heuristic"
            self.final = last_text
