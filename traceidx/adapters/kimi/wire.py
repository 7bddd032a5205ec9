"""The shapes of Kimi's ``wire.jsonl`` records, in both dialects, and the session a file is.

Kimi Code (npm ``@moonshot-ai/kimi-code``) writes flat records ``{type, agentId, time, ...}``
after a ``{"type": "metadata", "protocol_version": ...}`` line; the legacy ``kimi-cli`` (PyPI)
wrote ``{"timestamp": <seconds>, "message": {"type": <Name>, "payload": {...}}}`` after an
optional metadata line. Neither names its session inside the file: the session is the folder
the file lies in (`native_ids`). See ``docs/runtimes/kimi.md``.
"""

from __future__ import annotations

import re
from typing import Any, Final

#: Kimi Code record types the adapter reads nothing from: bookkeeping whose facts other records
#: state (the turn and prompt markers that repeat ``turn.prompt``/``turn.ended``, the
#: conversation the runtime keeps and its token counts, the usage copies in ``step.end`` and
#: ``agent.message.appended``, the tool catalogue, the binding of the runtime, file history)
RECORD_ONLY: Final = frozenset(
    {
        "metadata",
        "runtime.set_binding",
        "permission.set_mode",
        "plugin.session_start",
        "llm.tools_snapshot",
        "agent.message.appended",
        "agent.turn.started",
        "agent.turn.ended",
        "prompt.completed",
        "prompt.aborted",
        "token_counting.measured",
        "token_counting.rebased",
        "token_counting.turn_recorded",
        "file_history.tracked",
        "subagent.started",
        "turn.cancel",
        "full_compaction.begin",
        "full_compaction.complete",
    }
)
#: loop events (``context.append_loop_event``) that state nothing of their own: a step's
#: bounds (its usage is a copy of the ``usage.record`` before it)
LOOP_EVENTS_RECORD_ONLY: Final = frozenset({"step.begin"})

#: legacy ``kimi-cli`` message types the adapter reads nothing from
LEGACY_RECORD_ONLY: Final = frozenset(
    {
        "StepBegin",
        "CompactionBegin",
        "CompactionEnd",
        "ToolCallPart",
        "ApprovalRequest",
        "ApprovalResponse",
        "ApprovalRequestResolved",
        "QuestionRequest",
        "QuestionResponse",
        "ToolCallRequest",
        "HookTriggered",
        "HookResolved",
        "MCPLoadingBegin",
        "MCPLoadingEnd",
        "PlanDisplay",
        "Notification",
    }
)
#: the legacy message types that only a ``kimi-cli`` wire file holds
LEGACY_TYPES: Final = frozenset({"TurnBegin", "StepBegin", "ContentPart", "StatusUpdate"})

#: Kimi Code record types that only a Kimi Code wire file holds
CODE_TYPES: Final = frozenset(
    {"runtime.set_binding", "profile.bind", "turn.prompt", "context.append_loop_event"}
)

#: the shell tools: Kimi Code's ``Bash``, legacy ``kimi-cli``'s ``Shell``
SHELL_TOOLS: Final = frozenset({"Bash", "Shell"})
#: the tools that run a subagent: Kimi Code's ``Agent``, legacy ``kimi-cli``'s ``Task``
DELEGATION_TOOLS: Final = frozenset({"Agent", "Task"})
#: the fixed last line the shell tool writes for a non-zero exit (Kimi Code: the output's last
#: line; legacy ``kimi-cli``: the whole result ``message``)
EXIT_LINE: Final = re.compile(r"Command failed with exit code: (-?\d+)\.\Z")
#: how Kimi Code begins a result whose full output it saved to a file
TRUNCATED: Final = "Tool output exceeded "

#: ``turn.ended`` reasons, as outcomes
OUTCOMES: Final = {"completed": "completed", "failed": "failed", "cancelled": "interrupted"}
#: the folder a Kimi Code session keeps its agents' wire files in
AGENTS_FOLDER: Final = "agents"
#: the main agent's folder (every other agent is a subagent: ``agent-<n>``)
MAIN_AGENT: Final = "main"


def native_ids(locator: str) -> tuple[str, str | None]:
    """(the session's native id, its parent's) from a wire file's locator.

    Kimi Code: ``.../<session>/agents/main/wire.jsonl`` is ``<session>``;
    ``.../<session>/agents/<agent>/wire.jsonl`` is ``<session>/<agent>``, a child of
    ``<session>`` (agent ids restart in every session). Legacy ``kimi-cli``:
    ``.../<work dir hash>/<session>/wire.jsonl`` is ``<session>``. A file that lies elsewhere
    is named by its folder when it is called ``wire.jsonl``, else by its own name.
    """
    path = locator.replace("\\", "/")
    parts = [p for p in path.split("/") if p]
    name = parts[-1] if parts else path
    folders = parts[:-1]
    if len(folders) >= 3 and folders[-2] == AGENTS_FOLDER:
        session, agent = folders[-3], folders[-1]
        if agent == MAIN_AGENT:
            return session, None
        return f"{session}/{agent}", session
    if name == "wire.jsonl" and folders:
        return folders[-1], None
    stem = name.split(".", 1)[0]
    return stem or name, None


def is_wire_log(head: list[Any]) -> bool:
    """Whether decoded leading records are a Kimi wire file: a metadata line naming its
    protocol version followed by Kimi Code records or legacy messages, or (a legacy file
    written before the metadata line existed) a legacy message first."""
    objs = [o for o in head if isinstance(o, dict)]
    if not objs:
        return False
    first = objs[0]
    rest = objs[1:]
    if first.get("type") == "metadata" and isinstance(first.get("protocol_version"), str):
        return any(o.get("type") in CODE_TYPES or legacy_type(o) is not None for o in rest)
    return legacy_type(first) in LEGACY_TYPES


def legacy_type(obj: dict[str, Any]) -> str | None:
    """The message type of a legacy record ``{timestamp, message: {type, payload}}``."""
    message = obj.get("message")
    if "timestamp" not in obj or not isinstance(message, dict):
        return None
    kind = message.get("type")
    return kind if isinstance(kind, str) and isinstance(message.get("payload"), dict) else None
