"""Kimi tools: calls, their results (exit codes, failures, truncation), subagent delegations.

Kimi Code writes a call as a ``tool.call`` loop event ``{toolCallId, name, args}`` and its
result as ``tool.result`` ``{toolCallId, result: {output, isError?, durationMs}}``; legacy
``kimi-cli`` as ``ToolCall`` ``{id, function: {name, arguments}}`` (arguments as JSON text)
and ``ToolResult`` ``{tool_call_id, return_value: {is_error, output, message}}``. The shell
tool states an exit code only when it is not 0, as a fixed line (`wire.EXIT_LINE`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from traceidx.adapters.kimi.state import KimiState
from traceidx.adapters.kimi.wire import DELEGATION_TOOLS, EXIT_LINE, SHELL_TOOLS, TRUNCATED
from traceidx.adapters.values import dict_or_empty, dicts_in, int_or_none, nonempty_str, str_or_none
from traceidx.domain.rules import exit_code_from_header


def output_text(output: Any) -> str | None:
    """A result's output: a string, or the text of a list of content parts."""
    if isinstance(output, str):
        return output
    texts = [p["text"] for p in dicts_in(output) if isinstance(p.get("text"), str) and p["text"]]
    return "\n".join(texts) if texts else None


def last_line(text: str) -> str:
    """The last non-empty line of a text."""
    return text.rstrip("\n").rsplit("\n", 1)[-1]


class KimiTools(KimiState):
    """Drafts tool calls, their outputs, and the subagent runs an ``Agent`` call starts."""

    def _tool_call(self, call_id: str | None, name: str | None, args: Any) -> None:
        """A call; an ``Agent`` (legacy ``Task``) call is also the delegation of its task."""
        loop = self._current()
        self._no_answer_yet()
        self.tool_call(name, call_id, args, loop, SHELL_TOOLS)
        if call_id is not None:
            self.calls[call_id] = name or ""
        if name not in DELEGATION_TOOLS:
            return
        fields = dict_or_empty(args)
        task = {
            "text": str_or_none(fields.get("prompt")),
            "has_images": False,
            "agent_type": nonempty_str(fields.get("subagent_type"))
            or nonempty_str(fields.get("subagent_name")),
        }
        item = self.emit("agent.delegation", "structural", task, loop)
        if call_id is not None and self.native is not None and not self.legacy:
            self.delegations[call_id] = item  # its child is named by `subagent.spawned`
            self._hold(item)

    def _legacy_call(self, payload: dict[str, Any]) -> None:
        """A legacy ``ToolCall``: its arguments are JSON text (kept as text if they are not)."""
        function = dict_or_empty(payload.get("function"))
        raw = function.get("arguments")
        args: Any = raw
        if isinstance(raw, str):
            try:
                args = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                args = raw
        name = nonempty_str(function.get("name"))
        self._tool_call(nonempty_str(payload.get("id")), name, args)

    def _tool_result(
        self,
        call_id: str | None,
        text: str | None,
        error: Any,
        duration: Any,
        message: str | None = None,
    ) -> None:
        """A call's output: `error` the runtime's failure flag, the exit code from the shell
        tool's fixed line (the output's last line, or the legacy result message)."""
        name = self.calls.get(call_id) if call_id is not None else None
        value: dict[str, Any] = {"text": text if text else message}
        if isinstance(error, bool):
            value["failed"] = error
        if name in SHELL_TOOLS and error is True:
            stated = message if message is not None else (text or "")
            code = exit_code_from_header(last_line(stated), EXIT_LINE) if stated else None
            if code is not None:
                value["exit_code"] = code
        ms = int_or_none(duration)
        if ms is not None and ms >= 0:
            value["duration_ms"] = ms
        if text is not None and text.startswith(TRUNCATED):
            value["runtime_truncated"] = True  # the full output went to a file
        self.emit("tool.output", "structural", value, self._current(), output_of=call_id)

    # -- subagents (Kimi Code) ---------------------------------------------------------------

    def _spawned(self, obj: dict[str, Any]) -> None:
        """``subagent.spawned``: the delegating call's child is the agent it names."""
        call_id = nonempty_str(obj.get("parentToolCallId"))
        agent = nonempty_str(obj.get("subagentId"))
        item = self.delegations.pop(call_id, None) if call_id is not None else None
        folder = self._folder()
        if item is not None:
            if agent is not None and folder is not None:
                item.session_ref = f"{folder}/{agent}"
            self._release(item)

    def _completed(self, obj: dict[str, Any]) -> None:
        """``subagent.completed``: the child's summary, handed back (its usage is the sum of
        the child's own calls, counted in the child's file)."""
        agent = nonempty_str(obj.get("subagentId"))
        folder = self._folder()
        child = f"{folder}/{agent}" if agent is not None and folder is not None else None
        report = {"text": str_or_none(obj.get("resultSummary")), "has_images": False}
        self.emit("subagent.report", "structural", report, self._current(), session_ref=child)
