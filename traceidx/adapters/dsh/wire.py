"""The shapes of dsh log records: record types, seqs, content, errors, native types."""

from __future__ import annotations

from typing import Any, Final

import msgspec

from traceidx.adapters.values import dict_or_empty, int_or_none, nonempty_str, refined

PACKED_ROWS: Final = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
DISPATCH_START: Final = frozenset({"tool/code-dispatch-start", "tool/ptc-dispatch-start"})
DISPATCH_END: Final = frozenset({"tool/code-dispatch", "tool/ptc-dispatch"})
INPUT_EVENTS: Final = frozenset(
    {"user/message", "steering/message", "context/message", "prompt/blocked"}
)

KNOWN_TYPES: Final = frozenset(
    {
        "session",
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "user/message",
        "steering/message",
        "context/message",
        "prompt/blocked",
        "assistant/message",
        "assistant/chunk",
        "assistant/attempt",
        "system/message",
        "developer/message",
        "tool/call",
        "tool/result",
        "request/header",
        "request/header-delta",
        "request/context",
        "agent/inbox/spliced",
        "session/title",
        "session/title-llm-request",
        "session/end-seed",
        "todo/write",
        "llm/retry",
        "llm/retry-started",
        "approval/policy",
        "approval/asked",
        "approval/decided",
        "sandbox/mode",
        "permission/preset",
        "plan/mode",
        "goal/change",
        "command/run",
        "command/done",
        "hook/invoked",
        "hook/result",
        "subagent/descriptor",
        "subagent/catalog",
        "image/offload",
        "workspace/changes",
        "schedule/change",
        "tool-workflow/run-start",
        "tool-workflow/run-end",
        "tool-workflow/agent-start",
        "tool-workflow/agent-end",
        "compaction/start",
        "compaction/summary",
        "compaction/end",
        "compaction/prune",
        "compact/start",
        "compact/summary",
        "compact/end",
        "compact/prune",
        *PACKED_ROWS,
        *DISPATCH_START,
        *DISPATCH_END,
    }
)


def step_key(data: dict[str, Any]) -> tuple[Any, Any]:
    """The (turn, step) a step's facts belong to, hashable whatever JSON values they are."""
    turn, step = data.get("turn"), data.get("step")
    return (
        msgspec.json.encode(turn) if isinstance(turn, dict | list) else turn,
        msgspec.json.encode(step) if isinstance(step, dict | list) else step,
    )


def epoch_ms(value: Any) -> int | None:
    number = int_or_none(value)
    return number if number is not None and number >= 0 else None


def content_text(blocks: list[dict[str, Any]]) -> tuple[str, bool]:
    """(joined non-empty text blocks, has images) of a content array."""
    texts = [b["text"] for b in blocks if b.get("type") == "text" and nonempty_str(b.get("text"))]
    images = any(b.get("type") == "image" for b in blocks)
    return "\n".join(texts), images


def source_seqs(value: Any) -> set[int]:
    """Expanded ``sourceEventSeqs``: members are seqs or inclusive ``[start, end]`` runs."""
    out: set[int] = set()
    if isinstance(value, list):
        for member in value:
            if int_or_none(member) is not None:
                out.add(member)
            elif (
                isinstance(member, list)
                and len(member) == 2
                and int_or_none(member[0]) is not None
                and int_or_none(member[1]) is not None
            ):
                out.update(range(member[0], member[1] + 1))
    return out


def error_text(reason: dict[str, Any], data: dict[str, Any]) -> str | None:
    for holder in (
        dict_or_empty(reason.get("error")),
        dict_or_empty(reason.get("failure")),
        reason,
    ):
        message = nonempty_str(holder.get("message"))
        if message:
            code = nonempty_str(holder.get("code"))
            return f"{code}: {message}" if code else message
    return nonempty_str(data.get("error"))


def native_type(kind: str, data: dict[str, Any]) -> str:
    """A record's native type: its ``type`` (a chunk's refined by the chunk's type)."""
    if kind == "assistant/chunk":
        return refined(kind, nonempty_str(dict_or_empty(data.get("chunk")).get("type")))
    return kind


def is_session_log(head: list[Any]) -> bool:
    """Whether decoded leading records open with a dsh session header."""
    first = next((o for o in head if isinstance(o, dict)), None)
    return (
        first is not None
        and first.get("type") == "session"
        and isinstance(first.get("id"), str)
        and int_or_none(first.get("createdAt")) is not None
        and "timestamp" not in first
    )
