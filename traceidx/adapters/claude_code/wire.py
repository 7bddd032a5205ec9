"""The shapes of Claude Code transcript lines: the members read, record types, content."""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.base import members
from traceidx.adapters.values import refined
from traceidx.domain.rules import message_text, type_tag

#: the members of a record the adapter reads (`obj` here; `tests/adapters/test_decoding.py`
#: checks that every key looked up on it is here), and of its ``toolUseResult`` (`facts`) only
#: the facts taken from it, not the file contents, output and patches the runtime repeats there
_READS: Final = (  # in the order the runtime writes them (each lookup starts after the last match)
    "parentUuid", "operation", "isSidechain", "cwd", "sessionId", "gitBranch", "agentId",
    "content", "type", "message", "requestId", "uuid", "subtype", "isCompactSummary",
    "compactMetadata", "isMeta",
    "error", "isApiErrorMessage", "interruptedMessageId", "attachment", "toolUseResult", "taskId",
    "timestamp", "sourceToolUseID", "promptSource", "origin", "effort",
)  # fmt: skip
_TOOL_USE_RESULT: Final = (
    "durationMs", "totalDurationMs", "truncated", "backgroundTaskId", "taskId", "agentId",
    "status", "isAsync",
)  # fmt: skip
RECORD: Final = members(
    "ClaudeCodeRecord", _READS, {"toolUseResult": members("ToolUseResult", _TOOL_USE_RESULT)}
)

KNOWN_TYPES: Final = frozenset(
    {
        "user",
        "assistant",
        "system",
        "attachment",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "permission-mode",
        "ai-title",
        "custom-title",
        "last-prompt",
        "mode",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "atis-latch",
        "cost-state",
        "tools-used",
        "started",
        "result",
        "agent-name",
        "tag",
    }
)


def text_blocks(content: Any) -> tuple[str, bool, list[dict[str, Any]]]:
    """(joined non-empty text, has images, tool_result blocks) of a message content."""
    text, images = message_text(content)
    blocks = content if isinstance(content, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    return text, images, results


def result_text(block: dict[str, Any]) -> tuple[str | None, bool]:
    content = block.get("content")
    if content is None:
        return None, False
    text, images, _ = text_blocks(content)
    return text, images


def _message_role(obj: dict[str, Any]) -> str | None:
    message = obj.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    return role if role in ("user", "assistant") else None


def _early_line(line: dict[str, Any]) -> bool:
    """A leading line (fully decoded) of the early transcript format: no ``type``, a message
    with its role, and the response's ``costUSD``."""
    cost = line.get("costUSD")
    return (
        line.get("type") is None
        and isinstance(line.get("sessionId"), str)
        and _message_role(line) is not None
        and isinstance(cost, int | float)
        and not isinstance(cost, bool)
    )


def _gemini_shaped(line: dict[str, Any]) -> bool:
    """A line Claude Code never writes: a message in the Gemini ``Content`` shape (``parts``,
    not ``content``) or a ``systemPayload``: Qwen Code's chat records, which share this
    format's ``sessionId``/``type``/``uuid`` envelope (``docs/runtimes/qwen.md``)."""
    message = line.get("message")
    parts = isinstance(message, dict) and isinstance(message.get("parts"), list)
    return parts or isinstance(line.get("systemPayload"), dict)


def is_transcript(head: list[Any]) -> bool:
    """Whether decoded leading records are a transcript (see ``docs/runtimes/claude_code.md``)."""
    dicts = [o for o in head if isinstance(o, dict)]
    if any(_gemini_shaped(o) for o in dicts):
        return False
    if dicts and dicts[0].get("type") == "summary" and "leafUuid" in dicts[0]:
        return True
    return any(
        (isinstance(o.get("sessionId"), str) and isinstance(o.get("type"), str)) or _early_line(o)
        for o in dicts
    )


def record_type(obj: dict[str, Any]) -> str | None:
    """A line's type tag (`type_tag`); a line without one (the early format) is typed by its
    message's role."""
    kind = obj.get("type")
    if kind is None:
        return _message_role(obj)
    return type_tag(kind)


def native_type(obj: dict[str, Any]) -> str | None:
    """A line's native type: its ``type``, refined by its subtype, attachment or first block."""
    kind = record_type(obj)
    if not isinstance(kind, str) or kind.startswith("<"):
        return None
    refinement: object = None
    if kind == "system":
        refinement = obj.get("subtype")
    elif kind == "attachment" and isinstance(obj.get("attachment"), dict):
        refinement = obj["attachment"].get("type")
    elif kind == "queue-operation":
        refinement = obj.get("operation")
    elif kind in ("user", "assistant") and isinstance(obj.get("message"), dict):
        content = obj["message"].get("content")
        if isinstance(content, str):
            refinement = "text"
        elif isinstance(content, list) and content and isinstance(content[0], dict):
            refinement = content[0].get("type")
    return refined(kind, refinement)
