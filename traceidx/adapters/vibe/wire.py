"""Mistral Vibe's session folder: the members the adapter reads and the shapes it relies on.

A 3.x session folder (``logs/session/unified/<id>/``) holds ``CURRENT`` (the current
generation and ``store_format``), ``meta.json``, ``generations/<seq>/`` (``manifest.json``
naming the ``chunks/`` of the projection history; ``projection-state.json`` with the session's
cumulative ``tokenUsage`` and the latest turn; ``runtime-state.json`` with the subagents;
``checkpoint.json``), ``chunks/<sha256>.json`` (arrays: each element one Record),
``tool-results/<tool>-<call id>.json`` and ``journal/<first seq>.jsonl``. A 1.x/2.x session
folder holds ``meta.json`` (with the session totals in ``stats``) and ``messages.jsonl``.
"""

from __future__ import annotations

import re
from typing import Any, Final

from traceidx.adapters.values import dicts_in, str_or_none

#: the unified store's format name in ``CURRENT``
STORE_FORMAT: Final = "mistral.vibe.unified-session-store/"
#: a member of a generation folder: (generation, file)
GENERATION: Final = re.compile(r"generations/([^/]+)/([^/]+)\.json")
CHUNK: Final = re.compile(r"chunks/([0-9a-f]+)\.json")
TOOL_RESULT: Final = re.compile(r"tool-results/([^/]+)\.json")
#: where an effect's excerpt says the whole result was saved
SAVED_RESULT: Final = re.compile(r"tool-results/([\w.-]+)\.json")
JOURNAL: Final = re.compile(r"journal/\d+\.jsonl")
#: the shell tool (its ``command`` argument is a shell command)
SHELL_TOOLS: Final = frozenset({"file_system.bash", "bash"})
#: the effect kind of a subagent's spawn
SUBAGENT: Final = "subagent"
#: a history entry's id prefixes: an assistant message of a completion action, an effect of
#: an action
ASSISTANT_PREFIX: Final = "assistant-"
EFFECT_PREFIX: Final = "effect-"


def text_of(content: Any) -> str | None:
    """The text of a message's content blocks (``{"type": "text", "text": …}``), joined."""
    if isinstance(content, str):
        return content or None
    texts = [t for b in dicts_in(content) if (t := str_or_none(b.get("text")))]
    return "\n".join(texts) or None
