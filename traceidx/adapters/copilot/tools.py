"""Copilot CLI tools: calls (from a response's tool requests), results, inline subagents."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.copilot.state import CopilotState
from traceidx.adapters.copilot.wire import DELEGATION_TOOLS, EXIT_LINE, SHELL_TOOLS
from traceidx.adapters.values import (
    dict_or_empty,
    int_or_none,
    nonempty_str,
    str_or_none,
)
from traceidx.domain.drafts import DraftLoop
from traceidx.domain.rules import exit_code_from_header


class CopilotTools(CopilotState):
    """Drafts tool calls, their results, and the subagent runs a ``task`` call starts."""

    def _call(self, call_id: str | None, name: str | None, args: Any, loop: DraftLoop) -> None:
        """A tool call; a ``task`` call is also the delegation of a subagent run."""
        self.tool_call(name, call_id, args, loop, SHELL_TOOLS)
        if name in DELEGATION_TOOLS and isinstance(args, dict):
            task = {
                "text": str_or_none(args.get("prompt")),
                "has_images": False,
                "agent_type": nonempty_str(args.get("agent_type")),
            }
            self.emit("agent.delegation", "structural", task, loop)
        if call_id is not None:
            self.calls[call_id] = name or ""

    def _tool_request(self, request: dict[str, Any], loop: DraftLoop) -> None:
        call_id = nonempty_str(request.get("toolCallId"))
        self._call(call_id, nonempty_str(request.get("name")), request.get("arguments"), loop)

    def _tool_start(self, data: dict[str, Any]) -> None:
        """A call's execution starts: its call was drafted from the response that requested
        it; only a call no response requested (none in the log) is drafted from here."""
        call_id = nonempty_str(data.get("toolCallId"))
        if call_id is not None and call_id in self.calls:
            return
        loop = self._working().loop
        self._call(call_id, nonempty_str(data.get("toolName")), data.get("arguments"), loop)

    def _tool_complete(self, data: dict[str, Any]) -> None:
        call_id = nonempty_str(data.get("toolCallId"))
        name = self.calls.get(call_id) if call_id is not None else None
        result = dict_or_empty(data.get("result"))
        content = str_or_none(result.get("content"))
        error = data.get("error")
        reason = nonempty_str(error.get("message")) if isinstance(error, dict) else None
        success = data.get("success")
        value: dict[str, Any] = {}
        exit_code = int_or_none(dict_or_empty(data.get("shellExecution")).get("exitCode"))
        if exit_code is None and name in SHELL_TOOLS and content:
            exit_code = exit_code_from_header(content, EXIT_LINE)
        if exit_code is not None:
            value["exit_code"] = exit_code
        # `success` stays true for a non-zero exit: the exit code says the command failed
        if isinstance(success, bool):
            value["failed"] = not success or (exit_code is not None and exit_code != 0)
        elif exit_code is not None:
            value["failed"] = exit_code != 0
        properties = dict_or_empty(dict_or_empty(data.get("toolTelemetry")).get("properties"))
        if properties.get("largeOutputHandled") == "true":
            value["runtime_truncated"] = True  # the full output went to a file, not the log
        delegated = name in DELEGATION_TOOLS and success is True
        value["text"] = None if delegated else (content or reason)
        loop = self._current()
        self.emit("tool.output", "structural", value, loop, output_of=call_id)
        if not delegated:
            return
        # the result of a sync run is the subagent's final message: its report; a background
        # run's result only says it started (its report comes later, through other tools)
        mode = self.modes.pop(call_id, None) if call_id is not None else None
        background = "background" in (mode, properties.get("execution_mode"))
        role = "subagent.activity" if background else "subagent.report"
        self.emit(role, "structural", {"text": content, "has_images": False}, loop)
