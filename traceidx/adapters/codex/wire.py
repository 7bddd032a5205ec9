"""The shapes of Codex rollout lines: record types, content, JSON-text members, native types."""

from __future__ import annotations

import json
from typing import Any, Final

import msgspec

from traceidx.adapters.values import refined
from traceidx.domain.rules import type_tag

WRAPPED_TYPES: Final = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "token_usage_record",
        "world_state",
    }
)
KNOWN_TYPES: Final = WRAPPED_TYPES | {
    "inter_agent_communication",
    "inter_agent_communication_metadata",
}
RESPONSE_ITEM_TYPES: Final = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
    }
)
#: event_msg types persisted only as records (bookkeeping or repeats of other records)
QUIET_EVENTS: Final = frozenset(
    {
        "thread_settings_applied",
        "web_search_end",
        "collab_waiting_end",
        "collab_agent_spawn_end",
        "turn_diff",
        "exec_command_begin",
        "patch_apply_begin",
        "mcp_tool_call_begin",
        "thread_rolled_back",
        "undo_completed",
        "entered_review_mode",
        "exited_review_mode",
        "plan_update",
        "sub_agent_activity",
        "view_image_tool_call",
    }
)


def content_text(content: object) -> tuple[str, bool]:
    """(joined text, has images) of a message content list (or a plain string)."""
    if isinstance(content, str):
        return content, False
    texts: list[str] = []
    images = False
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = str(block.get("type"))
            text = block.get("text")
            if "image" in kind:
                images = True
            elif isinstance(text, str) and text:
                texts.append(text)
    return "\n".join(texts), images


def json_text(value: object) -> str | None:
    """Tool arguments as JSON text: a JSON string argument is kept verbatim when valid."""
    if value is None:
        return None
    if isinstance(value, str):
        if _loads(value, _INVALID) is _INVALID:
            return json.dumps(value, ensure_ascii=False)
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_INVALID: Final = object()  # `_loads` of text that is not JSON
_decode_json = msgspec.json.Decoder().decode


def parsed(value: object) -> Any:
    """JSON text parsed (None if it is not JSON); any other value as it is."""
    return _loads(value, None) if isinstance(value, str) else value


def _loads(text: str, invalid: object) -> Any:
    """The value JSON `text` holds, or `invalid`."""
    try:  # msgspec first: the json module runs three interpreted frames a call
        return _decode_json(text)
    except ValueError:
        pass
    try:  # what msgspec refuses and the json module takes (NaN, Infinity)
        return json.loads(text)
    except ValueError:
        return invalid


def is_rollout(head: list[Any]) -> bool:
    """Whether decoded leading records are a rollout: a legacy header, or wrapped lines."""
    dicts = [o for o in head if isinstance(o, dict)]
    if not dicts:
        return False
    first = dicts[0]
    if (
        "type" not in first
        and isinstance(first.get("id"), str)
        and isinstance(first.get("timestamp"), str)
        and "instructions" in first
    ):
        return True  # legacy pre-wrapper header
    return any(
        type_tag(o.get("type")) in WRAPPED_TYPES and isinstance(o.get("payload"), dict)
        for o in dicts
    )


def native_type(obj: dict[str, Any]) -> str | None:
    """A line's native type: ``type/payload.type`` (an ``item_completed`` also its item's)."""
    kind = obj.get("type")
    payload = obj.get("payload")
    if isinstance(kind, str) and isinstance(payload, dict):
        sub = payload.get("type")
        if kind == "event_msg" and sub == "item_completed":
            item = payload.get("item")
            inner = item.get("type") if isinstance(item, dict) else None
            return refined(f"{kind}/{sub}", inner)
        return refined(kind, sub)
    if isinstance(kind, str):
        return kind
    if "record_type" in obj:
        return f"record_type/{obj['record_type']}"
    return "header" if "id" in obj else None
