"""OpenCode's rows: the members read of a framed row, its JSON ``data``, native types, and the
fixed texts the runtime writes (default titles, a task tool's result)."""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from traceidx.adapters.base import members
from traceidx.adapters.values import refined

#: the columns of the ``session``, ``message`` and ``part`` rows read (a framed row is
#: ``{"table": …, "row": {<column>: <value>}}``: traceidx.sources.rowsource)
_ROW: Final = (
    "id", "parent_id", "project_id", "directory", "title", "version", "slug",
    "time_created", "message_id", "data",
)  # fmt: skip
RECORD: Final = members("OpenCodeRecord", ("table",), {"row": members("OpenCodeRow", _ROW)})

#: the members read of a message's ``data``
_MESSAGE: Final = (
    "role", "parentID", "agent", "modelID", "providerID", "tokens", "finish", "error",
    "summary", "path", "model",
)  # fmt: skip
#: the members read of a part's ``data``
_PART: Final = (
    "type", "text", "synthetic", "ignored", "metadata", "tool", "callID", "state", "auto",
    "mime", "error",
)  # fmt: skip
_MESSAGE_DATA: Final = msgspec.json.Decoder(members("OpenCodeMessage", _MESSAGE))
_PART_DATA: Final = msgspec.json.Decoder(members("OpenCodePart", _PART))

#: the tables of a session's rows (`traceidx.runtimes.RUNTIMES` declares them)
SESSION: Final = "session"
MESSAGE: Final = "message"
PART: Final = "part"

SHELL_TOOLS: Final = frozenset({"bash"})
DELEGATION_TOOLS: Final = frozenset({"task"})
#: a step finished with one of these goes on (OpenCode's prompt loop runs another step)
CONTINUING: Final = frozenset({"tool-calls", "unknown"})
#: the error OpenCode records on the message of a step the user aborted
ABORTED: Final = "MessageAbortedError"
#: a part's type that is the record of a fact read elsewhere, or of none the contract has
RECORD_ONLY: Final = frozenset(
    {"step-start", "step-finish", "snapshot", "patch", "agent", "subtask", "file"}
)
#: the placeholder titles OpenCode gives a session before it names it
DEFAULT_TITLES: Final = re.compile(r"(New session|Child session) - \d{4}-\d\d-\d\dT")
#: the result the task tool returns: the child's session id and its answer
_TASK_ID: Final = re.compile(r'<task id="([^"]+)"')
_TASK_RESULT: Final = re.compile(r"<task_result>\n?(.*?)\n?</task_result>", re.DOTALL)


def decoded(table: str, text: object) -> dict[str, Any]:
    """A row's ``data`` (the members read), empty when it is not a JSON object."""
    if not isinstance(text, str):
        return {}
    decoder = _MESSAGE_DATA if table == MESSAGE else _PART_DATA
    try:
        data = decoder.decode(text)
    except msgspec.DecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def native_type(table: str, data: dict[str, Any]) -> str:
    """A row's native type: its table, refined by a message's role or a part's type."""
    if table == MESSAGE:
        return refined(table, data.get("role"))
    if table == PART:
        return refined(table, data.get("type"))
    return table


def task_child(output: str) -> str | None:
    """The child session a task tool's result names."""
    found = _TASK_ID.search(output)
    return found.group(1) if found else None


def task_result(output: str) -> str:
    """The child's answer inside a task tool's result (the whole result when it has none)."""
    found = _TASK_RESULT.search(output)
    return found.group(1) if found else output
