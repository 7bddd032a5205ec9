"""The Gemini CLI adapter: reads each chat-file line into the message it upserts, then
projects the timeline of messages and events into Loops and Items once every line was read.

The format, the versions checked against and the evidence rules: ``docs/runtimes/gemini.md``.
"""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.gemini.state import (
    MESSAGE,
    PROCESS,
    RESTATE,
    REWIND,
    ROLLBACK,
    Entry,
    Message,
    time_of,
)
from traceidx.adapters.gemini.tools import GeminiTools
from traceidx.adapters.gemini.usage import usage_of
from traceidx.adapters.gemini.wire import (
    CANCEL_NOTES,
    HOOK_CONTEXT,
    NOTICE_TYPES,
    RECORD,
    SESSION_CONTEXT,
    STATE_SNAPSHOT,
    STEERING,
    function_responses,
    has_media,
    is_chat_log,
    is_metadata,
    native_type,
    parts_of,
    parts_text,
)
from traceidx.adapters.values import dicts_in, int_or_none, nonempty_str, str_or_none
from traceidx.domain.drafts import Draft, DraftLoop, RecordFacts
from traceidx.domain.rules import type_tag
from traceidx.domain.timestamps import rfc3339_ms
from traceidx.errors import AdapterFailure

_MESSAGE_TYPES: Final = frozenset({"user", "gemini"}) | NOTICE_TYPES


class GeminiAdapter(GeminiTools):
    """Projects one Gemini CLI chat file (the format: ``docs/runtimes/gemini.md``)."""

    runtime = "gemini"
    record_type = RECORD

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        return is_chat_log(head)

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position = position
        if not isinstance(obj, dict):
            self.count_unknown("<not an object>")
            return RecordFacts(None, None)
        time: int | None = None
        if isinstance(obj.get("$rewindTo"), str):
            if self._has_session():
                self._rewind(obj["$rewindTo"])
        elif isinstance(obj.get("id"), str):
            time = rfc3339_ms(obj.get("timestamp"))
            kind = type_tag(obj.get("type"))
            if kind not in _MESSAGE_TYPES:
                self.count_unknown(f"message/{kind}")
            elif self._has_session():
                self._write(obj, synced=False)
        elif isinstance(obj.get("$set"), dict):
            update: dict[str, Any] = obj["$set"]
            time = rfc3339_ms(update.get("lastUpdated"))
            if self._has_session():
                self._update(update)
        elif is_metadata(obj):
            time = rfc3339_ms(obj.get("startTime"))
            self.time = time
            self._metadata(obj)
        else:
            self.count_unknown("<no message id, $set, $rewindTo or session id>")
        return RecordFacts(time, native_type(obj))

    def _has_session(self) -> bool:
        if self.session is None:
            self.count_unknown("<line before the metadata line>")
            return False
        return True

    def finish(self) -> Draft:
        if not self.projected:
            self.projected = True
            if self.session is not None:
                if self.session.working_directory is None:
                    self.session.working_directory = self.from_context
                for entry in self.timeline:
                    try:
                        self._project(entry)
                    except Exception as exc:  # a bug: name the line whose message it was
                        raise AdapterFailure(self.position, exc) from exc
                self._promote()
        return Draft(self.session, self.loops, self.items, self.unknown, self.calls)

    # -- the timeline ------------------------------------------------------------------------

    def _project(self, entry: Entry) -> None:
        message = entry.message
        self.position, self.time = entry.position, None
        if entry.kind == MESSAGE and message is not None:
            if message.restated:  # a loaded checkpoint's turn, written again: no new fact
                return
            self.position, self.time = message.last, time_of(message.obj)
            kind = type_tag(message.obj.get("type"))
            if kind == "user":
                self._user(message)
            elif kind == "gemini":
                self._gemini(message)
            elif kind in NOTICE_TYPES:
                self._notice(message)
        elif entry.kind == PROCESS:
            self._close(entry.position, None)
        elif entry.kind == ROLLBACK:
            if self.open and self.opened_by is message:
                self._close(entry.position, None)
        elif entry.kind == REWIND:
            self._close(entry.position, None)
            target = entry.target
            text = f"rewound to message {target}" if target else "rewound: conversation cleared"
            self.emit("runtime.state", "structural", {"text": text, "has_images": False}, None)
        elif entry.kind == RESTATE:
            self._close(entry.position, None)
            text = f"history restated from a checkpoint: {entry.count} messages"
            self.emit("runtime.state", "structural", {"text": text, "has_images": False}, None)

    # -- Loops -------------------------------------------------------------------------------

    def _start(self, message: Message | None) -> DraftLoop:
        loop = DraftLoop(start=self.position)
        self.loops.append(loop)
        self.loop, self.open, self.opened_by, self.candidate = loop, True, message, None
        return loop

    def _current(self) -> DraftLoop | None:
        return self.loop if self.open else None

    def _close(self, position: int, outcome: str | None) -> None:
        """The running Loop ends at `position`; with no outcome stated, the text of its last
        response (when that response made no tool call) is its final answer."""
        loop = self.loop
        if loop is None or not self.open:
            return
        loop.end, loop.outcome = position, outcome
        if outcome is None:
            self._promote()
        self.open, self.candidate = False, None

    def _promote(self) -> None:
        candidate = self.candidate
        if candidate is not None and self.open:
            candidate.role, candidate.strength = "agent.final_answer", "heuristic"
        self.candidate = None

    # -- messages ----------------------------------------------------------------------------

    def _user(self, message: Message) -> None:
        obj = message.obj
        parts = parts_of(obj.get("content"))
        text, images = parts_text(parts), has_media(parts)
        responses = function_responses(parts)
        if responses:
            loop = self._current()
            if text:  # text sent along with tool results: a hint typed during the turn
                value = {"text": text, "has_images": images}
                if text.startswith(STEERING) and loop is not None:
                    self.emit("human.steering", "heuristic", value, loop)
                else:
                    self.emit("runtime.context", "heuristic", value, loop)
            self._function_responses(responses, loop)
            self.candidate = None  # the run goes on with the results
            return
        if not text and not images:
            return
        head = text.lstrip()
        if head.startswith(SESSION_CONTEXT):
            context = {"text": text, "category": "environment", "has_images": images}
            self.emit("runtime.context", "heuristic", context, None)
        elif message.synced and STATE_SNAPSHOT in text:
            summary = {"summary": text}
            self.emit("runtime.compaction_summary", "heuristic", summary, self._current())
        elif message.synced:
            return
        elif head.startswith(HOOK_CONTEXT):
            value = {"text": text, "has_images": images}
            self.emit("runtime.context", "heuristic", value, self._current())
        elif self.subagent:
            self._subagent_input(message, text, images)
        else:
            self._close(self.position, None)  # the next prompt bounds the previous Loop
            loop = self._start(message)
            shown = parts_text(parts_of(obj.get("displayContent"))) or text
            self.emit("human.request", "heuristic", {"text": shown, "has_images": images}, loop)

    def _subagent_input(self, message: Message, text: str, images: bool) -> None:
        """A subagent's task, as its parent handed it over: it opens the subagent's run (a
        Loop) and stays a Record (the delegation is the parent's item); later input is what
        the runtime tells the subagent."""
        session = self.session
        if session is not None and session.task is None and not self.loops:
            session.task = text
            self._start(message)
            return
        value = {"text": text, "has_images": images}
        self.emit("runtime.context", "heuristic", value, self._current())

    def _gemini(self, message: Message) -> None:
        obj = message.obj
        loop = self._current() or self._start(None)
        model = nonempty_str(obj.get("model"))
        if loop.model_id is None and model is not None:
            loop.model_id = model
        tokens = obj.get("tokens")
        sample = usage_of(tokens)
        if sample is not None:
            loop.usage.append(sample.located((message.last,), self.time, model))
        self._thoughts(obj.get("thoughts"), tokens, loop)
        text = parts_text(parts_of(obj.get("content")))
        calls = dicts_in(obj.get("toolCalls"))
        self.candidate = None
        if text:
            value = {"text": text, "has_images": False}
            item = self.emit("agent.commentary", "structural", value, loop)
            if not calls:
                self.candidate = item
        if calls:
            self._tool_calls(calls, loop)

    def _thoughts(self, thoughts: Any, tokens: Any, loop: DraftLoop) -> None:
        """Thought summaries (``subject`` and ``description``), each an ``agent.reasoning``
        summary; none kept but a thoughts count above 0: reasoning happened, unavailable."""
        summaries = dicts_in(thoughts)
        for thought in summaries:
            lines = [
                line
                for line in (
                    str_or_none(thought.get("subject")),
                    str_or_none(thought.get("description")),
                )
                if line is not None and line.strip()
            ]
            value: dict[str, Any] = {"representation": "unavailable"}
            if lines:
                value = {"representation": "summary", "text": "\n".join(lines)}
            at = rfc3339_ms(thought.get("timestamp"))
            saved = self.time
            self.time = at if at is not None else saved
            self.emit("agent.reasoning", "structural", value, loop)
            self.time = saved
        counted = int_or_none(tokens.get("thoughts")) if isinstance(tokens, dict) else None
        if not summaries and counted is not None and counted > 0:
            self.emit("agent.reasoning", "structural", {"representation": "unavailable"}, loop)

    def _notice(self, message: Message) -> None:
        """The UI's own notes (``info``, ``warning``, ``error``); a cancellation note ends
        the running Loop, interrupted."""
        text = parts_text(parts_of(message.obj.get("content")))
        if not text:
            return
        self.emit(
            "runtime.notice", "structural", {"text": text, "has_images": False}, self._current()
        )
        if message.obj.get("type") == "info" and text.strip() in CANCEL_NOTES:
            self._close(self.position, "interrupted")
