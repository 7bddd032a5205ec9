"""The shapes of Qwen Code chat records: the members read, record types, message parts."""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.base import members
from traceidx.adapters.values import dict_or_empty, dicts_in, refined
from traceidx.domain.rules import type_tag

#: the members of a record the adapter reads (`obj` here; `tests/adapters/test_decoding.py`
#: checks that every key looked up on it is here); of ``toolCallResult`` (`result`) and its
#: ``resultDisplay`` (`display`) only the status and the shell facts, not the output the runtime
#: repeats there; of ``systemPayload`` (`payload`) the members of the subtypes read, not the
#: attribution snapshots
_READS: Final = (  # in the order the runtime writes them (each lookup starts after the last match)
    "sessionId", "timestamp", "type", "provenance", "cwd", "gitBranch", "subtype", "model",
    "message", "usageMetadata", "contextWindowSize", "toolCallResult", "systemPayload",
    "agentId", "isSidechain",
)  # fmt: skip
_RESULT: Final = ("callId", "status", "resultDisplay")
_DISPLAY: Final = ("type", "exitCode", "truncated")
_PAYLOAD: Final = ("uiEvent", "compressedHistory", "customTitle", "phase", "rawCommand")
RECORD: Final = members(
    "QwenRecord",
    _READS,
    {
        "toolCallResult": members(
            "QwenToolCallResult", _RESULT, {"resultDisplay": members("QwenDisplay", _DISPLAY)}
        ),
        "systemPayload": members("QwenSystemPayload", _PAYLOAD),
    },
)

#: the record types of a chat file (``ChatRecord.type``)
TYPES: Final = frozenset({"user", "assistant", "tool_result", "system"})
#: system subtypes kept as Records only: bookkeeping the adapter reads nothing from
RECORD_ONLY: Final = frozenset({"attribution_snapshot", "at_command"})
#: ui_telemetry events (``uiEvent["event.name"]``)
API_RESPONSE: Final = "qwen-code.api_response"  # the usage of an assistant record, again
API_ERROR: Final = "qwen-code.api_error"  # one failed request attempt
TOOL_CALL: Final = "qwen-code.tool_call"  # a finished tool call: its duration

SHELL_TOOLS: Final = frozenset({"run_shell_command"})
#: the subagent tool (``agent``; ``task`` before it was renamed)
DELEGATION_TOOLS: Final = frozenset({"agent", "task"})
#: the ``toolCallResult.status`` of a call that did not succeed
FAILED_STATUSES: Final = frozenset({"error", "cancelled"})
CANCELLED: Final = "cancelled"
#: the ``provenance`` of a prompt a user submitted (absent before the runtime wrote one)
HUMAN: Final = "real_user"


def _parts_message(record: dict[str, Any]) -> bool:
    """A message in the Gemini ``Content`` shape: a ``parts`` list (Claude Code's messages
    have ``content``)."""
    message = record.get("message")
    return isinstance(message, dict) and isinstance(message.get("parts"), list)


def is_chat(head: list[Any]) -> bool:
    """Whether decoded leading records are a Qwen Code chat file (``docs/runtimes/qwen.md``):
    a record with the chat record's identity members, of a chat record type, carrying a
    ``parts`` message or a ``systemPayload``."""
    return any(
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and isinstance(record.get("uuid"), str)
        and record.get("type") in TYPES
        and (_parts_message(record) or isinstance(record.get("systemPayload"), dict))
        for record in head
    )


def parts(message: Any) -> list[dict[str, Any]]:
    """The part objects of a message."""
    return dicts_in(dict_or_empty(message).get("parts"))


def text_of(blocks: list[dict[str, Any]]) -> str:
    """The text of message parts, concatenated as the runtime does (streamed chunks of one
    text are consecutive parts)."""
    return "".join(p["text"] for p in blocks if isinstance(p.get("text"), str))


def has_images(blocks: list[dict[str, Any]]) -> bool:
    """Whether parts carry an image (inline or by reference)."""
    for part in blocks:
        for key in ("inlineData", "fileData"):
            data = part.get(key)
            mime = data.get("mimeType") if isinstance(data, dict) else None
            if isinstance(mime, str) and mime.startswith("image/"):
                return True
    return False


def part_kind(part: dict[str, Any]) -> str | None:
    """``thought``, ``text``, ``call`` or ``response`` (of a model or tool-result part)."""
    if isinstance(part.get("functionCall"), dict):
        return "call"
    if isinstance(part.get("functionResponse"), dict):
        return "response"
    if isinstance(part.get("text"), str):
        return "thought" if part.get("thought") is True else "text"
    return None


def summary_text(history: Any) -> str | None:
    """The summary a chat compression put first in the history it kept (a user turn)."""
    first = next(iter(dicts_in(history)), None)
    if first is None or first.get("role") != "user":
        return None
    text = text_of(parts(first))
    return text or None


def event_name(payload: Any) -> str | None:
    """The ``event.name`` of a ui_telemetry payload's event."""
    name = dict_or_empty(dict_or_empty(payload).get("uiEvent")).get("event.name")
    return name if isinstance(name, str) else None


def native_type(obj: dict[str, Any]) -> str | None:
    """A record's native type: its ``type``, a system record's refined by its subtype (and a
    ui_telemetry record's by its event)."""
    kind = type_tag(obj.get("type"))
    if kind is None or kind.startswith("<"):
        return None
    if kind != "system":
        return kind
    subtype = obj.get("subtype")
    if subtype == "ui_telemetry":
        return refined("system/ui_telemetry", event_name(obj.get("systemPayload")))
    return refined(kind, subtype)
