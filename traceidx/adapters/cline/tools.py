"""Cline tools: tool calls, their results, and the tasks handed to sub-agents and teammates."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.cline.state import ClineState
from traceidx.adapters.cline.wire import (
    ABORTED,
    DELEGATION_TOOLS,
    EXIT_ERROR,
    SHELL_TOOLS,
    TRUNCATED,
    blocks_text,
    entry_text,
    result_entries,
    shell_command,
)
from traceidx.adapters.values import dict_or_empty, nonempty_str, str_or_none
from traceidx.domain.drafts import DraftLoop
from traceidx.domain.rules import exit_code_from_header


class ClineTools(ClineState):
    """Drafts tool calls and the tool results that answer them."""

    def _tool_use(self, block: dict[str, Any], loop: DraftLoop) -> None:
        name, call_id = str_or_none(block.get("name")), str_or_none(block.get("id"))
        args = block.get("input")
        call = self.tool_call(name, call_id, args, loop, frozenset())
        if name in SHELL_TOOLS:
            call.shell_command = shell_command(args)
        if name in DELEGATION_TOOLS:
            given = dict_or_empty(args)
            task = {
                "text": str_or_none(given.get("task")),
                "has_images": False,
                "agent_type": nonempty_str(given.get("agentId")),
            }
            self.emit("agent.delegation", "structural", task, loop)
        if call_id is not None:
            self.call_loops[call_id] = loop

    def _tool_result(self, block: dict[str, Any]) -> None:
        call_id = str_or_none(block.get("tool_use_id"))
        name = str_or_none(block.get("name"))
        loop = self.call_loops.get(call_id) if call_id is not None else None
        if loop is None:
            loop = self.loop
        content = block.get("content")
        entries = result_entries(content)
        value: dict[str, Any] = {}
        report: str | None = None
        if entries is None:
            value["text"] = blocks_text(content)
        else:
            texts = [t for t in (entry_text(e) for e in entries) if t]
            value["text"] = "\n\n".join(texts) if texts else None
            flags = [e.get("success") for e in entries]
            if flags and all(isinstance(f, bool) for f in flags):
                value["failed"] = not all(flags)
            if name in SHELL_TOOLS:
                self._shell_facts(entries, value)
            if name in DELEGATION_TOOLS and len(entries) == 1:
                report = nonempty_str(entries[0].get("text"))
        if block.get("is_error") is True:
            value["failed"] = True
        if report is not None:
            value["text"] = None  # the agent's answer is its report
        self.emit("tool.output", "structural", value, loop, output_of=call_id)
        if name in DELEGATION_TOOLS:
            if report is not None:
                text = {"text": report, "has_images": False}
                self.emit("subagent.report", "structural", text, loop)
            elif entries is not None:  # dispatched, still running (a teammate's async task)
                text = {"text": value.get("text"), "has_images": False}
                self.emit("subagent.activity", "structural", text, loop)
        aborted = entries is not None and any(e.get("error") == ABORTED for e in entries)
        if aborted and loop is not None and loop is self.loop:
            self._end("interrupted")

    @staticmethod
    def _shell_facts(entries: list[dict[str, Any]], value: dict[str, Any]) -> None:
        """A ``run_commands`` result: the exit code Cline's fixed ``error`` sentence states (for
        a call of one command; a success states none), and whether it cut the output."""
        if len(entries) == 1:
            error = str_or_none(entries[0].get("error"))
            code = exit_code_from_header(error, EXIT_ERROR) if error else None
            if code is not None:
                value["exit_code"] = code
                value["failed"] = bool(value.get("failed")) or code != 0
        results = [str_or_none(e.get("result")) or "" for e in entries]
        if any(TRUNCATED in r for r in results):
            value["runtime_truncated"] = True
