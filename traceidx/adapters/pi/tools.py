"""Pi tools: tool calls, their results, and the shell commands a user runs (``!``)."""

from __future__ import annotations

from typing import Any, ClassVar

from traceidx.adapters.pi.state import MODEL, TOOLS, PiState
from traceidx.adapters.pi.wire import EXIT_LINE, SHELL_TOOLS
from traceidx.adapters.values import str_or_none
from traceidx.domain.drafts import DraftLoop
from traceidx.domain.rules import exit_code_from_header, message_text


class PiTools(PiState):
    """Drafts tool calls, the tool results that answer them, and user shell executions."""

    #: the tools whose ``command`` argument is a shell command
    shell_tools: ClassVar[frozenset[str]] = SHELL_TOOLS

    def _tool_call(self, block: dict[str, Any], loop: DraftLoop) -> None:
        name, call_id = str_or_none(block.get("name")), str_or_none(block.get("id"))
        args = block.get("arguments")
        self.tool_call(name, call_id, args, loop, self.shell_tools)
        if call_id is not None:
            self.call_loops[call_id] = loop

    def _tool_result(self, message: dict[str, Any]) -> None:
        call_id = message.get("toolCallId")
        ref = call_id if isinstance(call_id, str) else None
        loop = self.call_loops.get(ref) if ref is not None else None
        if loop is None:
            loop = self._running()
        text, _ = message_text(message.get("content"))
        value: dict[str, Any] = {"text": text or None}
        if isinstance(message.get("isError"), bool):
            value["failed"] = message["isError"]
        self._result_facts(message, text, value)
        self.emit("tool.output", "structural", value, loop, output_of=ref)
        if ref is not None:
            self.waiting.discard(ref)
        if self.phase == TOOLS and not self.waiting:
            self.phase = MODEL

    def _result_facts(self, message: dict[str, Any], text: str, value: dict[str, Any]) -> None:
        """Add what a tool result states beyond its text and error flag to its output's value:
        the exit code in the text of Pi's bash tool, the truncation its details state."""
        if message.get("toolName") == "bash" and text:
            code = exit_code_from_header(text[text.rfind("\n") + 1 :], EXIT_LINE)
            if code is not None:
                value["exit_code"] = code
                value["failed"] = bool(value.get("failed")) or code != 0
        details = message.get("details")
        truncation = details.get("truncation") if isinstance(details, dict) else None
        if isinstance(truncation, dict) and isinstance(truncation.get("truncated"), bool):
            value["runtime_truncated"] = truncation["truncated"]

    def _bash_execution(self, message: dict[str, Any]) -> None:
        command = message.get("command")
        if isinstance(command, str) and command:
            value = {"text": command, "category": "internal", "has_images": False}
            self.emit("runtime.context", "structural", value, None)
        output = message.get("output")
        result: dict[str, Any] = {"text": output if isinstance(output, str) and output else None}
        code = message.get("exitCode")
        if isinstance(code, int) and not isinstance(code, bool):
            result["exit_code"] = code
        cancelled = message.get("cancelled") is True
        if cancelled or "exit_code" in result:
            result["failed"] = cancelled or result.get("exit_code") != 0
        if isinstance(message.get("truncated"), bool):
            result["runtime_truncated"] = message["truncated"]
        self.emit("tool.output", "structural", result, None)
