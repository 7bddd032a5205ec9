"""OpenCode tools: a ``tool`` part holds a call and, once it ran, its result (one row)."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.opencode.state import Message, OpenCodeState
from traceidx.adapters.opencode.wire import (
    DELEGATION_TOOLS,
    SHELL_TOOLS,
    task_child,
    task_result,
)
from traceidx.adapters.values import (
    dict_or_empty,
    int_or_none,
    nonempty_str,
    str_or_none,
)


class OpenCodeTools(OpenCodeState):
    """Drafts tool calls, their outputs, and the subagent work the task tool hands over."""

    def _tool(self, message: Message, data: dict[str, Any]) -> None:
        """A tool part: its call (with a delegation for the task tool) and, when its state is
        final (``completed`` or ``error``), its output (and the subagent's report). A part
        still ``pending`` or ``running`` (the process died meanwhile) has no output."""
        loop = message.loop
        name, call_id = nonempty_str(data.get("tool")), nonempty_str(data.get("callID"))
        state = dict_or_empty(data.get("state"))
        args = state.get("input")
        self.tool_call(name, call_id, args, loop, SHELL_TOOLS, working_directory=message.cwd)
        status = state.get("status")
        output = str_or_none(state.get("output" if status == "completed" else "error"))
        metadata = dict_or_empty(state.get("metadata"))
        delegated = name in DELEGATION_TOOLS
        child = nonempty_str(metadata.get("sessionId")) if delegated else None
        if delegated and child is None and output is not None:
            child = task_child(output)
        if delegated:  # the same part hands work to a child agent (its own session)
            arguments = dict_or_empty(args)
            task = {
                "text": nonempty_str(arguments.get("prompt")),
                "has_images": False,
                "agent_type": nonempty_str(arguments.get("subagent_type")),
            }
            self.emit("agent.delegation", "structural", task, loop, session_ref=child)
        if status not in ("completed", "error"):
            return
        result: dict[str, Any] = {"failed": status == "error"}
        code = int_or_none(metadata.get("exit")) if name in SHELL_TOOLS else None
        if code is not None:  # a non-zero exit is still a completed call
            result["exit_code"] = code
            result["failed"] = result["failed"] or code != 0
        if isinstance(metadata.get("truncated"), bool):
            result["runtime_truncated"] = metadata["truncated"]
        reported = delegated and status == "completed"
        result["text"] = None if reported else output or None  # a report holds the answer
        self.emit("tool.output", "structural", result, loop, output_of=call_id)
        if reported:
            report = {"text": task_result(output) if output else None, "has_images": False}
            self.emit("subagent.report", "structural", report, loop, session_ref=child)
