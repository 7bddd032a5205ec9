"""OpenClaw tool calls: the exec tool, whose every result states its exit code."""

from __future__ import annotations

from typing import Any, ClassVar

from traceidx.adapters.openclaw.state import OpenClawState
from traceidx.adapters.openclaw.wire import SHELL_TOOLS, TRUNCATED, exit_code
from traceidx.adapters.pi.tools import PiTools
from traceidx.adapters.values import dict_or_empty, int_or_none


class OpenClawTools(OpenClawState, PiTools):
    """Pi's tool calls and results, with OpenClaw's exec tool."""

    shell_tools: ClassVar[frozenset[str]] = SHELL_TOOLS

    def _result_facts(self, message: dict[str, Any], text: str, value: dict[str, Any]) -> None:
        """An exec result states its exit code in ``details.exitCode``, 0 included (none for
        a killed command); a non-zero one is a failure whether or not ``isError`` says so
        (2026.8 on no longer flags it), and ``details.durationMs`` how long it ran. A text
        OpenClaw cut ends with its own marker."""
        details = message.get("details")
        code = exit_code(details)
        if message.get("toolName") in SHELL_TOOLS:
            if code is not None:
                value["exit_code"] = code
                value["failed"] = bool(value.get("failed")) or code != 0
            duration = int_or_none(dict_or_empty(details).get("durationMs"))
            if duration is not None and duration >= 0:
                value["duration_ms"] = duration
        if text and TRUNCATED.search(text) is not None:
            value["runtime_truncated"] = True
