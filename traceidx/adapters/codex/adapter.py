"""The Codex adapter: dispatches each rollout line to the handler of its record type."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.codex.tools import CodexTools
from traceidx.adapters.codex.usage import total_key, usage_growth, usage_of
from traceidx.adapters.codex.wire import (
    KNOWN_TYPES,
    QUIET_EVENTS,
    RESPONSE_ITEM_TYPES,
    content_text,
    is_rollout,
    native_type,
)
from traceidx.adapters.values import int_or_none, str_or_none
from traceidx.domain.drafts import RecordFacts
from traceidx.domain.rules import type_tag


class CodexAdapter(CodexTools):
    """Projects one Codex rollout (the format: ``docs/runtimes/codex.md``)."""

    runtime = "codex"

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        return is_rollout(head)

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        if not self.enter(position, obj):
            return RecordFacts(None, None)
        kind = type_tag(obj.get("type"))
        payload = obj.get("payload")
        if position == 0 and self.session is None and kind is None and "instructions" in obj:
            self._legacy_header(obj)
        elif isinstance(payload, dict) and isinstance(kind, str):
            if self._inherited(obj):
                pass
            elif kind == "session_meta":
                self._session_meta(payload)
            elif kind == "response_item":
                self._response_item(payload)
            elif kind == "event_msg":
                self._event(payload)
            elif kind == "turn_context":
                self._turn_context(payload)
            elif kind == "compacted":
                self._compacted(payload)
            elif kind == "token_usage_record":
                self._usage_record(payload)
            elif kind not in KNOWN_TYPES:
                self.count_unknown(kind)
        elif self.legacy and kind in RESPONSE_ITEM_TYPES:
            self._response_item(obj)
        elif not (self.legacy and "record_type" in obj):
            self.count_unknown(str(kind))
        return RecordFacts(self.time, native_type(obj))

    # -- event_msg -----------------------------------------------------------------------------

    def _event(self, payload: dict[str, Any]) -> None:
        kind = type_tag(payload.get("type"))
        if kind in ("task_started", "turn_started"):
            self._task_started(payload)
        elif kind in ("task_complete", "turn_complete"):
            failed = payload.get("error") is not None
            self._task_end(payload, "failed" if failed else "completed")
        elif kind == "turn_aborted":
            self._task_end(payload, "failed" if payload.get("reason") == "error" else "interrupted")
        elif kind == "user_message":
            text = str_or_none(payload.get("message")) or ""
            images = bool(payload.get("images")) or bool(payload.get("local_images"))
            self._ui_user(text, images)
        elif kind == "agent_message":
            text = str_or_none(payload.get("message")) or ""
            self._agent_message(text, False, str_or_none(payload.get("phase")), None, "ui")
        elif kind == "agent_reasoning":
            self.ui_reasoning.append(self.position)
        elif kind == "item_completed":
            self._item_completed(payload)
        elif kind == "token_count":
            self._token_count(payload)
        elif kind in ("exec_command_end", "patch_apply_end", "mcp_tool_call_end"):
            self._end_event(payload.get("call_id"), payload)
        elif kind == "context_compacted":
            if self.last_compaction is not None and self.last_compaction.records[-1] >= (
                self.position - 2
            ):
                self.last_compaction.records.append(self.position)
            else:
                self._emit("runtime.compaction_summary", "structural", {}, self._current())
            self.last_compaction = None
        elif kind in ("error", "stream_error"):
            text = str_or_none(payload.get("message")) or str(kind)
            self._emit("runtime.notice", "structural", {"text": text}, self._current())
        elif kind not in QUIET_EVENTS and kind != "agent_reasoning_raw_content":
            self.count_unknown(f"event_msg/{kind}")

    def _item_completed(self, payload: dict[str, Any]) -> None:
        item = payload.get("item")
        if not isinstance(item, dict):
            return
        kind = type_tag(item.get("type"))
        if kind == "UserMessage":
            text, images = content_text(item.get("content"))
            self._ui_user(text, images)
        elif kind == "AgentMessage":
            text, images = content_text(item.get("content"))
            self._agent_message(
                text, images, str_or_none(item.get("phase")), str_or_none(item.get("id")), "ui"
            )
        elif kind == "Reasoning":
            self.ui_reasoning.append(self.position)
        elif kind in ("CommandExecution", "FileChange"):
            self._end_event(item.get("id"), item)

    # -- response items --------------------------------------------------------------------------

    def _response_item(self, payload: dict[str, Any]) -> None:
        kind = type_tag(payload.get("type"))
        if kind == "message":
            role = type_tag(payload.get("role"))
            if role == "user":
                self._user_input(payload)
            elif role == "assistant":
                text, images = content_text(payload.get("content"))
                phase = str_or_none(payload.get("phase"))
                self._agent_message(text, images, phase, str_or_none(payload.get("id")), "model")
            elif role in ("developer", "system"):
                self._developer(payload)
        elif kind == "reasoning":
            self._reasoning(payload)
        elif kind in (
            "function_call",
            "custom_tool_call",
            "local_shell_call",
            "web_search_call",
            "tool_search_call",
            "image_generation_call",
        ):
            self._tool_call(str(kind), payload)
        elif kind in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
            self._tool_output(str(kind), payload)
        elif kind not in RESPONSE_ITEM_TYPES and kind not in (
            "compaction",
            "ghost_snapshot",
            None,
        ):
            self.count_unknown(f"response_item/{kind}")

    # -- usage -------------------------------------------------------------------------------------

    def _usage_record(self, payload: dict[str, Any]) -> None:
        sample = usage_of(payload.get("usage"))
        if sample is None:
            return
        turn = str_or_none(payload.get("turn_id"))
        if self._sealed_turn(turn):
            return
        state = (self.by_turn.get(turn) if turn else None) or self.loop
        if state is not None:
            model = str_or_none(payload.get("model")) or state.draft.model_id
            call = sample.located((self.position,), self.time, model, self.provider)
            state.record_usage.append(call)

    def _token_count(self, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        if not isinstance(info, dict):
            return
        state = self.loop
        window = int_or_none(info.get("model_context_window"))
        if state is not None and window is not None:
            state.draft.context_window = window
        model = str_or_none(info.get("model"))
        if state is not None and model and state.draft.model_id is None:
            state.draft.model_id = model
        total = info.get("total_token_usage")
        key = total_key(total)
        if key is None or key == self.last_total:
            return  # a repeat (rate-limit update) or no cumulative count
        previous, self.last_total = self.last_total, key
        sample = usage_of(info.get("last_token_usage"))
        if sample is None and isinstance(total, dict):
            sample = usage_growth(total, previous)
        if sample is not None and state is not None:
            model = model or state.draft.model_id
            call = sample.located((self.position,), self.time, model, self.provider)
            state.count_usage.append(call)

    # -- compaction --------------------------------------------------------------------------------

    def _compacted(self, payload: dict[str, Any]) -> None:
        summary = str_or_none(payload.get("message")) or str_or_none(payload.get("summary"))
        value = {"summary": summary or None}
        item = self._emit("runtime.compaction_summary", "structural", value, self._current())
        self.last_compaction = item
