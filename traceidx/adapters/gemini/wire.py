"""The shapes of Gemini CLI chat records: the members read, record kinds, parts, native types.

A chat file (``~/.gemini/tmp/<project>/chats/session-*.jsonl``) holds four kinds of line,
told apart the way the CLI's own loader (``loadConversationRecord``) tells them, in its order:
``{"$rewindTo": id}``; a message (a string ``id``); ``{"$set": {...}}``; the metadata line
(string ``sessionId`` and ``projectHash``). See ``docs/runtimes/gemini.md``.
"""

from __future__ import annotations

import re
from typing import Any, Final

from traceidx.adapters.base import members
from traceidx.adapters.values import refined

#: the members of a line the adapter reads (`obj` in this package; `tests/adapters/test_decoding.py`
#: checks that every key looked up on it is here); a metadata line's ``messages`` is the whole
#: conversation of a record written on one line (the CLI's loader reads that form too)
_READS: Final = (
    "id", "timestamp", "type", "content", "displayContent", "thoughts", "tokens", "model",
    "toolCalls", "$set", "$rewindTo", "sessionId", "projectHash", "startTime", "kind",
    "directories", "summary", "messages",
)  # fmt: skip
RECORD: Final = members("GeminiRecord", _READS)

#: the shell tool: its ``command`` argument is a shell program
SHELL_TOOLS: Final = frozenset({"run_shell_command"})
#: the tool that runs a subagent (``invoke_agent``); a call of any tool whose record names
#: an ``agentId`` ran one too (older releases offered each subagent as a tool of its own)
DELEGATION_TOOLS: Final = frozenset({"invoke_agent"})
#: message types of the UI's own notes (``info``, ``warning``, ``error``)
NOTICE_TYPES: Final = frozenset({"info", "warning", "error"})
#: the notes the interactive UI records when the user cancels the running request
CANCEL_NOTES: Final = frozenset({"Request cancelled.", "User cancelled the request."})
#: the environment context the CLI injects as the first history turn (a fixed template)
SESSION_CONTEXT: Final = "<session_context>"
HOOK_CONTEXT: Final = "<hook_context>"
#: a compression summary (the history turn that replaces the compressed context)
STATE_SNAPSHOT: Final = "<state_snapshot>"
#: the text the interactive UI prepends to tool results for a hint typed during a turn
STEERING: Final = "User steering update:"
#: the template line of the session context that lists the workspace directories
_WORKSPACE: Final = re.compile(r"^- \*\*Workspace Directories:\*\*\n  - ([^\n]+)$", re.M)


def is_metadata(obj: dict[str, Any]) -> bool:
    """The metadata line the CLI writes first (and again when a process resumes the file)."""
    return isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str)


def is_chat_log(head: list[Any]) -> bool:
    """Whether decoded leading records are a chat file: the first is its metadata line (no
    ``type``, no message ``id``: no other runtime's first record has that shape)."""
    first = next((o for o in head if isinstance(o, dict)), None)
    return (
        first is not None
        and is_metadata(first)
        and "type" not in first
        and not isinstance(first.get("id"), str)
    )


def parts_of(content: Any) -> list[dict[str, Any]]:
    """A message's ``content`` (a PartListUnion: a string, a part, or a list of either) as
    parts."""
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if not isinstance(content, list):
        return []
    return [{"text": p} if isinstance(p, str) else p for p in content if isinstance(p, str | dict)]


def parts_text(parts: list[dict[str, Any]]) -> str:
    """The non-empty text parts that are not thoughts, joined by newlines."""
    texts = [
        p["text"]
        for p in parts
        if isinstance(p.get("text"), str) and p["text"] and p.get("thought") is not True
    ]
    return "\n".join(texts)


def has_media(parts: list[dict[str, Any]]) -> bool:
    """Whether the parts carry inline or referenced media (an image, a file)."""
    return any(
        isinstance(p.get("inlineData"), dict) or isinstance(p.get("fileData"), dict) for p in parts
    )


def function_responses(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``functionResponse`` members of the parts (tool results sent to the model)."""
    return [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]


def workspace_directory(text: str) -> str | None:
    """The first workspace directory the session context lists (the folder the CLI ran in)."""
    found = _WORKSPACE.search(text)
    return found.group(1).strip() or None if found else None


def native_type(obj: dict[str, Any]) -> str | None:
    """A line's native type: ``$rewindTo``; a message's ``type`` (a user message refined by
    whether it returns tool results, a ``gemini`` one by whether it holds tool calls);
    ``$set`` (``$set/messages`` when it re-syncs the message list); ``metadata/<kind>``."""
    if "$rewindTo" in obj:
        return "$rewindTo"
    if isinstance(obj.get("id"), str):
        kind = obj.get("type")
        if not isinstance(kind, str):
            return None
        refinement: object = None
        if kind == "user":
            parts = parts_of(obj.get("content"))
            refinement = "functionResponse" if function_responses(parts) else "text"
        elif kind == "gemini" and obj.get("toolCalls"):
            refinement = "toolCalls"
        return refined(kind, refinement)
    update = obj.get("$set")
    if isinstance(update, dict):
        return "$set/messages" if isinstance(update.get("messages"), list) else "$set"
    if is_metadata(obj):
        return refined("metadata", obj.get("kind"))
    return None
