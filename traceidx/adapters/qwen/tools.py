"""Qwen Code tools: function calls, their results and the durations the runtime reports."""

from __future__ import annotations

import os
from typing import Any

from traceidx.adapters.qwen.state import ENDED, MODEL, TOOLS, QwenState
from traceidx.adapters.qwen.wire import (
    CANCELLED,
    DELEGATION_TOOLS,
    FAILED_STATUSES,
    SHELL_TOOLS,
)
from traceidx.adapters.values import dict_or_empty, int_or_none, str_or_none
from traceidx.domain.drafts import DraftLoop


class QwenTools(QwenState):
    """Drafts function calls and the tool results that answer them."""

    def _function_call(self, call: dict[str, Any], loop: DraftLoop, cwd: str | None) -> None:
        name, call_id = str_or_none(call.get("name")), str_or_none(call.get("id"))
        args = call.get("args")
        # a call runs in the session's directory unless it names another one
        directory = args.get("directory") if isinstance(args, dict) else None
        where: dict[str, Any] = {}
        if directory is None:
            where["working_directory"] = cwd
        elif isinstance(directory, str) and os.path.isabs(directory):
            where["working_directory"] = directory
        self.tool_call(name, call_id, args, loop, SHELL_TOOLS, **where)
        if name in DELEGATION_TOOLS and isinstance(args, dict):  # the call also delegates
            task = {
                "text": str_or_none(args.get("prompt")),
                "has_images": False,
                "agent_type": str_or_none(args.get("subagent_type")),
            }
            self.emit("agent.delegation", "structural", task, loop)
        if call_id is not None:
            self.call_loops[call_id] = loop
            self.waiting.add(call_id)

    def _timing(self, event: dict[str, Any]) -> None:
        """A ``qwen-code.tool_call`` event: the duration of a call that finished (joined to its
        result, which the runtime writes next)."""
        call_id = event.get("call_id")
        duration = int_or_none(event.get("duration_ms"))
        if isinstance(call_id, str) and duration is not None and duration >= 0:
            self.timings[call_id] = (self.position, duration)

    def _tool_result(self, obj: dict[str, Any], response: dict[str, Any]) -> None:
        """One ``functionResponse`` part of a ``tool_result`` record."""
        call_id = str_or_none(response.get("id"))
        result = obj.get("toolCallResult")
        facts = result if isinstance(result, dict) else {}
        if call_id is None:
            call_id = str_or_none(facts.get("callId"))
        elif facts.get("callId") not in (None, call_id):
            facts = {}  # the record's result facts describe another call
        body = dict_or_empty(response.get("response"))
        text = body.get("output")
        if not isinstance(text, str):
            text = body.get("error")
        value: dict[str, Any] = {"text": text if isinstance(text, str) and text else None}
        status = facts.get("status")
        if isinstance(status, str):
            value["failed"] = status in FAILED_STATUSES
        display = facts.get("resultDisplay")
        if isinstance(display, dict) and display.get("type") == "shell_result":
            code = int_or_none(display.get("exitCode"))
            if code is not None:
                value["exit_code"] = code
                value["failed"] = bool(value.get("failed")) or code != 0
            if isinstance(display.get("truncated"), bool):
                value["runtime_truncated"] = display["truncated"]
        records = [self.position]
        timing = self.timings.pop(call_id, None) if call_id is not None else None
        if timing is not None:
            records.insert(0, timing[0])
            value["duration_ms"] = timing[1]
        loop = self.call_loops.pop(call_id, None) if call_id is not None else None
        if loop is None:
            loop = self._running()
        item = self.emit("tool.output", "structural", value, loop, output_of=call_id)
        item.records = records
        if call_id is not None:
            self.waiting.discard(call_id)
        if loop is None or loop is not self.loop:
            return  # a late result of an earlier Loop's call
        if status == CANCELLED:  # the user cancelled the call: the run stops
            self._end("interrupted")
        elif self.phase == ENDED:
            loop.end = self.position  # a result written after the run stopped
        elif self.phase == TOOLS and not self.waiting:
            self.phase = MODEL
