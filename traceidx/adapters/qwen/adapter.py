"""The Qwen Code adapter: dispatches each chat record to the handler of its type."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.qwen.state import ENDED, MODEL, STOPPED, TOOLS
from traceidx.adapters.qwen.tools import QwenTools
from traceidx.adapters.qwen.usage import usage_of
from traceidx.adapters.qwen.wire import (
    API_ERROR,
    API_RESPONSE,
    HUMAN,
    RECORD,
    RECORD_ONLY,
    TOOL_CALL,
    event_name,
    has_images,
    is_chat,
    native_type,
    part_kind,
    parts,
    summary_text,
    text_of,
)
from traceidx.adapters.values import dict_or_empty, int_or_none, nonempty_str, reasoning_value
from traceidx.domain.drafts import RecordFacts
from traceidx.domain.rules import type_tag


class QwenAdapter(QwenTools):
    """Projects one Qwen Code chat file (the format: ``docs/runtimes/qwen.md``)."""

    runtime = "qwen"

    record_type = RECORD

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        return is_chat(head)

    def feed(self, position: int, obj: Any) -> RecordFacts:
        if not self.enter(position, obj):
            return RecordFacts(None, None)
        self._session_facts(obj)
        kind = type_tag(obj.get("type"))
        if self.session is None:
            self.count_unknown(f"{kind} (before the session id)")
        elif not self.subagent and obj.get("isSidechain") is True:
            self.count_unknown(f"{kind} (a subagent's, in the main transcript)")
        elif kind == "user":
            self._user(obj)
        elif kind == "assistant":
            self._assistant(obj)
        elif kind == "tool_result":
            for part in parts(obj.get("message")):
                response = part.get("functionResponse")
                if isinstance(response, dict):
                    self._tool_result(obj, response)
        elif kind == "system":
            self._system(obj)
        else:
            self.count_unknown(str(kind))
        return RecordFacts(self.time, native_type(obj))

    # -- prompts and responses ---------------------------------------------------------------

    def _user(self, obj: dict[str, Any]) -> None:
        """A prompt starts a run: a new Loop (Qwen Code queues input typed while a run goes on
        and submits it as the next prompt)."""
        blocks = [p for p in parts(obj.get("message")) if part_kind(p) in ("text", None)]
        text, images = text_of(blocks), has_images(blocks)
        loop = self._open_loop()
        if not text and not images:
            return
        value = {"text": text or None, "has_images": images}
        provenance = obj.get("provenance")
        if provenance is None or provenance == HUMAN:
            self.emit("human.request", "heuristic", value, loop)
        else:  # a prompt the runtime wrote itself (e.g. a goal's continuation)
            value["category"] = "internal"
            self.emit("runtime.context", "structural", value, loop)

    def _assistant(self, obj: dict[str, Any]) -> None:
        loop = self._response_loop()
        model = nonempty_str(obj.get("model"))
        if loop.model_id is None and model is not None:
            loop.model_id = model
        window = int_or_none(obj.get("contextWindowSize"))
        if loop.context_window is None and window is not None and window > 0:
            loop.context_window = window
        sample = usage_of(obj.get("usageMetadata"))
        if sample is not None:
            loop.usage.append(sample.located((self.position,), self.time, model))
        blocks = parts(obj.get("message"))
        calls = [p["functionCall"] for p in blocks if part_kind(p) == "call"]
        cwd = nonempty_str(obj.get("cwd"))
        final = None
        run: list[dict[str, Any]] = []  # consecutive parts of one kind
        for index, part in enumerate(blocks):
            kind = part_kind(part)
            run.append(part)
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            if (
                following is not None
                and kind in ("text", "thought")
                and part_kind(following) == kind
            ):
                continue
            if kind == "thought":
                self.emit("agent.reasoning", "structural", reasoning_value(text_of(run)), loop)
            elif kind == "text" and text_of(run):
                value = {"text": text_of(run), "has_images": False}
                final = self.emit("agent.commentary", "structural", value, loop)
            elif kind == "call":
                self._function_call(part["functionCall"], loop, cwd)
            run = []
        if calls:
            self.phase = TOOLS
        else:  # no function call: generation ended; its last text answers the prompt
            self.phase = STOPPED
            if final is not None:
                final.role, final.strength = "agent.final_answer", "heuristic"
                self.final = final

    # -- system records -------------------------------------------------------------------------

    def _system(self, obj: dict[str, Any]) -> None:
        subtype = obj.get("subtype")
        payload = obj.get("systemPayload")
        if not isinstance(payload, dict):
            payload = {}
        if subtype == "ui_telemetry":
            self._telemetry(obj)
        elif subtype == "chat_compression":  # its summary replaces the earlier history
            summary = {"summary": summary_text(payload.get("compressedHistory"))}
            self.emit("runtime.compaction_summary", "structural", summary, self._running())
        elif subtype == "slash_command":  # a command the runtime runs itself: no Loop
            command = payload.get("rawCommand")
            if payload.get("phase") == "invocation" and isinstance(command, str) and command:
                context = {"text": command, "category": "internal", "has_images": False}
                self.emit("runtime.context", "structural", context, self._running())
        elif subtype == "custom_title":
            title = payload.get("customTitle")
            if isinstance(title, str) and title.strip() and self.session is not None:
                self.session.name = title.strip()
        elif not isinstance(subtype, str) or subtype not in RECORD_ONLY:
            self.count_unknown(f"system/{subtype}")

    def _telemetry(self, obj: dict[str, Any]) -> None:
        payload = obj.get("systemPayload")
        name = event_name(payload)
        event = dict_or_empty(dict_or_empty(payload).get("uiEvent"))
        if name == API_RESPONSE:
            return  # the usage of the assistant record that follows: counted there
        if name == TOOL_CALL:
            self._timing(event)
        elif name == API_ERROR:
            self._api_error(event)
        else:
            self.count_unknown(f"system/ui_telemetry/{name}")

    def _api_error(self, event: dict[str, Any]) -> None:
        """A request attempt failed. While the run awaits a response, the Loop fails here
        unless a later response shows the runtime went on."""
        message = nonempty_str(event.get("error_message"))
        loop = self.loop if self.phase in (MODEL, TOOLS, ENDED) else None
        if message is not None:
            self.emit("runtime.notice", "structural", {"text": message, "has_images": False}, loop)
        if loop is None:
            return
        if self.phase == MODEL:
            self._end("failed")
        elif self.phase == ENDED:
            loop.end = self.position  # another attempt that failed
