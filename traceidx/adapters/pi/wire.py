"""Pi's record shapes: the header, native types, text and reasoning blocks, file names."""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from traceidx.adapters.values import refined
from traceidx.domain.model import CallOutcome
from traceidx.domain.timestamps import rfc3339_ms

SHELL_TOOLS: Final = frozenset({"bash"})
#: the fixed last line Pi's bash tool appends for a non-zero exit, anchored at the text's end
EXIT_LINE: Final = re.compile(r"Command exited with code (-?\d+)\Z")
SKILL_OPEN: Final = '<skill name="'
SKILL_CLOSE: Final = "</skill>"
RECORD_ONLY: Final = frozenset({"custom", "label", "session_info"})
CUSTOM_ROLES: Final = frozenset({"custom", "hookMessage"})
#: the ``customType`` of the pi-subagents extension's completion notices (``details.status``:
#: completed / failed end the child's run; blocked / paused report it still open)
SUBAGENT_NOTIFY: Final = "subagent-notify"
SUBAGENT_ENDED: Final = frozenset({"completed", "failed"})
#: a Pi session file's name ends with its session id
SESSION_FILE: Final = re.compile(
    r"_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl\Z"
)


def session_file_id(details: dict[str, Any]) -> str | None:
    """The child Session a notice names: its session file's id (not a share URL)."""
    value = details.get("sessionValue")
    if details.get("sessionLabel") != "session file" or not isinstance(value, str):
        return None
    found = SESSION_FILE.search(value)
    return found.group(1) if found else None


SUMMARY_ROLES: Final = frozenset({"compactionSummary", "branchSummary"})
FINAL_STOPS: Final = frozenset({"stop", "length"})
#: the stop reasons of an attempt that ended without an answer, and the call's outcome
CALL_FAILURES: Final[dict[str, CallOutcome]] = {"error": "error", "aborted": "aborted"}


def is_header(obj: dict[str, Any]) -> bool:
    """Pi's ``session`` header; dsh's header has the same ``type`` but an epoch ``createdAt``."""
    if not isinstance(obj.get("id"), str) or "createdAt" in obj or "message" in obj:
        return False
    if "type" in obj:
        return bool(obj["type"] == "session")
    return isinstance(obj.get("cwd"), str) and rfc3339_ms(obj.get("timestamp")) is not None


#: the ``customType`` of the entry OpenClaw writes when a run starts (the model it uses),
#: and the prefixes of its own custom entries (``openclaw:prompt-error``, ``openclaw.cache-ttl``)
OPENCLAW_SNAPSHOT: Final = "model-snapshot"
OPENCLAW_CUSTOM: Final = ("openclaw:", "openclaw.")


def openclaw_marked(obj: dict[str, Any]) -> bool:
    """Whether an entry is one only OpenClaw writes: its custom entries, a message carrying its
    ``__openclaw`` member. (OpenClaw keeps Pi's session format; ``docs/runtimes/openclaw.md``.)"""
    kind = obj.get("type")
    if kind == "custom":
        custom = obj.get("customType")
        return isinstance(custom, str) and (
            custom == OPENCLAW_SNAPSHOT or custom.startswith(OPENCLAW_CUSTOM)
        )
    message = obj.get("message")
    return kind == "message" and isinstance(message, dict) and "__openclaw" in message


def parent_native_id(path: object) -> str | None:
    """The native id of the session stored at a Pi session file path (see Session in
    ``docs/runtimes/pi.md``)."""
    if not isinstance(path, str) or not path:
        return None
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem = name.removesuffix(".jsonl")
    _, sep, native = stem.partition("_")
    return native if sep and native else None


def block_text(block: dict[str, Any]) -> str | None:
    """A text block's text, if it is a non-empty string."""
    text = block.get("text")
    return text if isinstance(text, str) and text else None


def block_reasoning(block: dict[str, Any]) -> dict[str, Any]:
    text = block.get("thinking")
    if block.get("redacted") is True or not isinstance(text, str) or not text.strip():
        return {"representation": "unavailable"}
    signature = block.get("thinkingSignature")
    if isinstance(signature, str) and signature.startswith("{"):
        try:
            sig = msgspec.json.decode(signature)
        except msgspec.DecodeError:
            sig = None
        if isinstance(sig, dict) and sig.get("type") == "reasoning" and sig.get("summary"):
            return {"representation": "summary", "text": text}
    return {"representation": "full", "text": text}


def native_type(obj: dict[str, Any]) -> str | None:
    kind = obj.get("type", "session" if is_header(obj) else None)
    if not isinstance(kind, str):
        return None
    refinement: object = None
    if kind == "message" and isinstance(obj.get("message"), dict):
        refinement = obj["message"].get("role")
    elif kind in ("custom", "custom_message"):
        refinement = obj.get("customType")
    return refined(kind, refinement)
