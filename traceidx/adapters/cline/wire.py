"""The shapes of Cline CLI session documents: the head, messages, content blocks, tool results.

A session document (``<id>.messages.json``) is ``{version, updated_at, agent, sessionId,
[taskType,] origin, messages[], [system_prompt]}``; document framing
(`traceidx.sources.document`) hands the adapter the document without its ``messages`` first
(the *head*), then one record per message. See ``docs/runtimes/cline.md``.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from traceidx.adapters.values import dict_or_empty, dicts_in, refined, str_or_none
from traceidx.domain.rules import type_tag

#: the shell tool: ``{"commands": [...]}``, each command run on its own
SHELL_TOOLS: Final = frozenset({"run_commands"})
#: tools that hand a task to another agent: ``spawn_agent`` (a sub-agent) and ``team_run_task``
#: (a teammate); both name the task in ``task``
DELEGATION_TOOLS: Final = frozenset({"spawn_agent", "team_run_task"})
#: the agent of a session the user talks to (a sub-agent's is ``subagent``, a teammate's
#: ``teammate``)
LEAD: Final = "lead"
#: how Cline wraps a prompt the user typed (the mode: ``act``, ``plan``, ``yolo``)
_USER_INPUT: Final = re.compile(r'<user_input mode="[^"]*">(.*)</user_input>', re.S)
#: the working directory in the system prompt's environment block
_WORKING_DIRECTORY: Final = re.compile(r"^\d+\. Working Directory: (.+)$", re.M)
#: the ``error`` of a command that exited non-zero (a fixed sentence, the result's whole text)
EXIT_ERROR: Final = re.compile(r"Command exited with code (-?\d+)\Z")
#: the ``error`` of a command stopped because the run was aborted (Ctrl-C, SIGINT)
ABORTED: Final = "Command failed: Command was aborted"
#: the line Cline puts in place of the middle of a long command output
TRUNCATED: Final = "[... output truncated: "
_DECODE: Final = msgspec.json.Decoder()


def is_session_document(head: list[Any]) -> bool:
    """Whether decoded leading records are a Cline session document: the first is its head
    (a string ``sessionId`` and ``agent``, an ``origin`` object, no message ``role``)."""
    first = next((o for o in head if isinstance(o, dict)), None)
    return (
        first is not None
        and isinstance(first.get("sessionId"), str)
        and isinstance(first.get("agent"), str)
        and isinstance(first.get("origin"), dict)
        and "role" not in first
    )


def is_head(obj: dict[str, Any]) -> bool:
    """The document's head (not a message)."""
    return isinstance(obj.get("sessionId"), str) and "role" not in obj


def parent_of(head: dict[str, Any]) -> str | None:
    """The session that started this one (a sub-agent's or teammate's lead session)."""
    parent = str_or_none(dict_or_empty(head.get("origin")).get("parentThreadId"))
    return parent or None


def working_directory(system_prompt: Any) -> str | None:
    """The working directory the system prompt's environment block states."""
    if not isinstance(system_prompt, str):
        return None
    found = _WORKING_DIRECTORY.search(system_prompt)
    return found.group(1).strip() or None if found else None


def user_input(text: str) -> str | None:
    """The prompt inside Cline's ``<user_input mode="…">`` wrapper, if the text is one."""
    found = _USER_INPUT.fullmatch(text)
    return found.group(1) if found else None


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content blocks (a plain string content is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return dicts_in(content)


def block_kind(block: dict[str, Any]) -> str | None:
    kind = block.get("type")
    return kind if isinstance(kind, str) else None


def is_error_display(message: dict[str, Any]) -> bool:
    """The message Cline shows (and stores) when a turn ends on an error it could not retry."""
    meta = dict_or_empty(message.get("metadata"))
    return meta.get("displayOnly") is True and meta.get("displayRole") == "error"


def is_display_only(message: dict[str, Any]) -> bool:
    """A message stored for display only: never sent to the model."""
    return dict_or_empty(message.get("metadata")).get("displayOnly") is True


def shell_command(args: Any) -> str | None:
    """The shell program of a ``run_commands`` call: its commands, one per line."""
    commands = args.get("commands") if isinstance(args, dict) else None
    if isinstance(commands, str):
        return commands or None
    if isinstance(commands, list):
        texts = [c for c in commands if isinstance(c, str) and c]
        return "\n".join(texts) if texts and len(texts) == len(commands) else None
    return None


def result_entries(content: Any) -> list[dict[str, Any]] | None:
    """A tool result's entries ``{query, result, error?, success}``: a list of them (commands,
    files read), or one JSON object written as a string (editors, patches, agents); None when
    the content has neither shape."""
    if isinstance(content, str):
        text = content.strip()
        if not text.startswith("{"):
            return None
        try:
            value = _DECODE.decode(text)
        except msgspec.DecodeError:
            return None
        return [value] if isinstance(value, dict) else None
    if isinstance(content, list) and content and all(isinstance(e, dict) for e in content):
        if any(block_kind(e) in ("text", "image") for e in content):
            return None  # content blocks, not entries
        return list(content)
    return None


def entry_text(entry: dict[str, Any]) -> str | None:
    """An entry's text: its ``result``, else its ``error``, else an agent's ``text``."""
    for key in ("result", "error", "text"):
        text = str_or_none(entry.get(key))
        if text:
            return text
    return None


def blocks_text(content: Any) -> str | None:
    """The text of a result given as a string or as content blocks."""
    if isinstance(content, str):
        return content or None
    texts = [b["text"] for b in dicts_in(content) if isinstance(b.get("text"), str) and b["text"]]
    return "\n".join(texts) if texts else None


def native_type(obj: dict[str, Any]) -> str | None:
    """A record's native type: ``session/<agent>`` for the head; a message's ``role``, a user
    message refined by whether it returns tool results, an assistant one by whether it calls
    tools or is an error shown to the user."""
    if is_head(obj):
        return refined("session", obj.get("agent"))
    role = type_tag(obj.get("role"))
    if role is None or role.startswith("<"):
        return None
    kinds = {block_kind(b) for b in blocks(obj)}
    if role == "user":
        return refined(role, "tool_result" if "tool_result" in kinds else "text")
    if role == "assistant":
        if is_error_display(obj):
            return "assistant/error"
        return refined(role, "tool_use" if "tool_use" in kinds else None)
    return role
