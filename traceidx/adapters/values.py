"""Typed reads of decoded JSON members, shared by the adapters: a member counts only when it
has the JSON type the adapter expects (a changed format then yields absent facts, not errors)."""

from __future__ import annotations

from typing import Any

from traceidx.domain.rules import in_int64


def str_or_none(value: object) -> str | None:
    """`value` if it is a string (the empty string included)."""
    return value if isinstance(value, str) else None


def nonempty_str(value: object) -> str | None:
    """`value` if it is a non-empty string."""
    return value if isinstance(value, str) and value else None


def int_or_none(value: object) -> int | None:
    """`value` if it is an integer that fits a published column (JSON ``true``/``false`` are
    not integers; one past int64 is not believable evidence)."""
    if isinstance(value, int) and not isinstance(value, bool) and in_int64(value):
        return value
    return None


def dict_or_empty(value: Any) -> dict[str, Any]:
    """`value` if it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def dicts_in(value: Any) -> list[dict[str, Any]]:
    """The objects among the members of `value` if it is an array (e.g. content blocks)."""
    return [b for b in value if isinstance(b, dict)] if isinstance(value, list) else []


def refined(kind: str, refinement: object) -> str:
    """A record's native type: its type, refined by a subtype when that is a string."""
    return f"{kind}/{refinement}" if isinstance(refinement, str) else kind


def reasoning_value(text: str | None, representation: str = "full") -> dict[str, Any]:
    """An agent.reasoning value: the text the runtime kept (`representation`: ``full`` or
    ``summary``), else unavailable."""
    if not text:
        return {"representation": "unavailable"}
    return {"representation": representation, "text": text}


def declared_command(name: str | None, args: object, shell_tools: frozenset[str]) -> str | None:
    """The command of a call to a declared shell tool: its string ``command`` argument."""
    command = args.get("command") if name in shell_tools and isinstance(args, dict) else None
    return command if isinstance(command, str) else None
