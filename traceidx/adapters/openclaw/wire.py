"""OpenClaw's record shapes beyond Pi's: the marks of its entries, its database rows, the exec
tool's result."""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from traceidx.adapters.pi.wire import is_header, openclaw_marked

#: the shell tools: ``exec`` (Pi's is ``bash``), and ``bash``, which runs on the Gateway's host
SHELL_TOOLS: Final = frozenset({"exec", "bash"})
#: the ``api`` of the assistant message OpenClaw may append after an aborted run, repeating the
#: run's text and its usage summed over the run's calls (never a call of its own)
MIRROR_API: Final = "cli"
#: the ``usage`` member counting reasoning tokens (within ``output``; chat-completions wire only)
REASONING: Final = "reasoningTokens"
#: the end of a tool result text OpenClaw cut (the rest of the output is not kept)
TRUNCATED: Final = re.compile(r"\[\.\.\. \d+ more characters truncated; [^\]\n]*\]\Z")

#: the tables of a session's rows in ``openclaw-agent.sqlite`` (`traceidx.runtimes.RUNTIMES`)
WINDOWS: Final = "session_windows"
EVENTS: Final = "transcript_events"
#: the column of an event row holding the entry (decoded from ``event_zstd`` where it was
#: stored compressed: `traceidx.sources.rowsource`)
EVENT: Final = "event_json"

_ENTRY: Final = msgspec.json.Decoder()


def is_transcript(head: list[Any]) -> bool:
    """A JSON-lines transcript: Pi's session header first, and an entry only OpenClaw writes
    (its ``model-snapshot`` follows the header of every run's session) in the head."""
    first = next((o for o in head if isinstance(o, dict)), None)
    if first is None or not is_header(first) or "createdAt" in first:
        return False
    return any(openclaw_marked(o) for o in head if isinstance(o, dict))


def is_window(obj: Any) -> bool:
    """A framed ``session_windows`` row (the first row of every database session)."""
    if not isinstance(obj, dict) or obj.get("table") != WINDOWS:
        return False
    row = obj.get("row")
    return (
        isinstance(row, dict)
        and isinstance(row.get("session_id"), str)
        and isinstance(row.get("session_key"), str)
    )


def entry_of(row: dict[str, Any]) -> dict[str, Any] | None:
    """The transcript entry an event row holds; None when it holds no JSON object."""
    text = row.get(EVENT)
    if not isinstance(text, str):
        return None
    try:
        entry = _ENTRY.decode(text)
    except msgspec.DecodeError:
        return None
    return entry if isinstance(entry, dict) else None


def exit_code(details: object) -> int | None:
    """The exit code an exec result's ``details`` state (none for a killed command)."""
    if not isinstance(details, dict):
        return None
    code = details.get("exitCode")
    return code if isinstance(code, int) and not isinstance(code, bool) else None
