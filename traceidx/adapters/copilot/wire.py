"""The shapes of Copilot CLI ``events.jsonl`` records: the members read, the record types.

Every record is ``{type, data, id, timestamp, parentId, [agentId], [ephemeral]}``; only
``type``, ``data``, ``agentId`` and ``timestamp`` are read, and of ``data`` only the members
below (the system prompt, a compaction's request messages and snapshots, the shutdown metrics
and tool telemetry bulk are skipped unbuilt where the adapter does not read them).
"""

from __future__ import annotations

import re
from typing import Any, Final

from traceidx.adapters.base import members

#: the members of ``data`` the adapter reads (the record's payload is named `data` in this
#: package; `tests/adapters/test_decoding.py` checks that every key looked up on it is here)
_DATA: Final = (
    # session.start / session.resume
    "sessionId", "producer", "copilotVersion", "startTime", "context",
    # user.message, system.message
    "content", "source", "delivery", "interactionId", "attachments", "isAutopilotContinuation",
    "messageId",
    # assistant.message, session.usage_record
    "model", "toolRequests", "phase", "reasoningText", "reasoningOpaque", "encryptedContent",
    "reasoningBlocks", "usage",
    # tool.execution_start / tool.execution_complete
    "toolCallId", "toolName", "arguments", "success", "result", "error", "shellExecution",
    "toolTelemetry",
    # subagent.*, abort, session.error / warning / info, mode changes, notifications
    "executionMode", "message", "originatingMessageId", "eligibleForAutoSwitch", "newMode",
    # session.compaction_start / session.compaction_complete
    "trigger", "summaryContent", "compactionTokensUsed",
)  # fmt: skip
RECORD: Final = members(
    "CopilotRecord",
    ("type", "data", "agentId", "timestamp"),
    {"data": members("CopilotData", _DATA)},
)

#: the tools whose ``command`` argument is a bash program (the ``powershell`` tool Copilot
#: offers on Windows is not bash; ``write_bash``/``read_bash`` talk to a running shell)
SHELL_TOOLS: Final = frozenset({"bash"})
#: the tool that runs a subagent inline (its ``prompt`` is the task, ``agent_type`` its kind)
DELEGATION_TOOLS: Final = frozenset({"task"})
#: the fixed line Copilot's bash tool appends to every result, anchored at the text's end
EXIT_LINE: Final = re.compile(r"(?s).*<shellId: \S+ completed with exit code (-?\d+)>\s*\Z")

#: record types that stay Records: bookkeeping whose facts other records state (turn
#: boundaries, the subagent's configuration, cumulative usage snapshots, the non-schema
#: ``model.*`` trace of a compaction call, which repeats ``session.compaction_complete``),
#: or runtime state the contract has no role for yet
RECORD_ONLY: Final = frozenset(
    {
        "assistant.turn_end",
        "session.model_change",
        "subagent.configured",
        "subagent.selected",
        "subagent.deselected",
        "session.usage_checkpoint",
        "session.title_changed",
        "session.plan_changed",
        "session.workspace_file_changed",
        "session.context_changed",
        "session.handoff",
        "session.truncation",
        "session.snapshot_rewind",
        "session.task_complete",
        "session.remote_steerable_changed",
        "session.session_limits_changed",
        "session.permissions_changed",
        "session.binary_asset",
        "session.auto_mode_resolved",
        "assistant.reasoning",
        "tool.user_requested",
        "tool_search.activated",
        "permission.requested",
        "permission.completed",
        "external_tool.requested",
        "external_tool.completed",
        "hook.start",
        "hook.end",
        "model.turn_started",
        "model.model_call_started",
        "model.model_call_success",
        "model.call_failure",
        "model.message",
        "model.response",
        "model.turn_ended",
        "model.messages_snapshot",
    }
)


def is_events_log(head: list[Any]) -> bool:
    """Whether decoded leading records are a Copilot CLI session log: a ``session.start``
    record whose ``data`` names the session and the Copilot agent that wrote it."""
    for obj in head:
        if isinstance(obj, dict) and obj.get("type") == "session.start":
            data = obj.get("data")
            if not isinstance(data, dict) or not isinstance(data.get("sessionId"), str):
                return False
            return data.get("producer") == "copilot-agent" or isinstance(
                data.get("copilotVersion"), str
            )
    return False
