"""The runtime registry: one literal table of every runtime, its adapter and its trace homes.

Adding a runtime is one adapter package under `traceidx.adapters` and one line in `RUNTIMES`.
This module imports no stage of the pipeline and no adapter: discovery, the first stage, and
the command line read the table as it stands; `traceidx.adapters` imports an adapter's module
by the name given here, on first use.

A runtime that keeps its sessions in a SQLite database instead of JSON-lines files declares
the database's file names and the tables that hold a session's rows (`Database`): discovery
and the framing of database sources (`traceidx.sources.rowsource`) read that declaration, so that an
adapter never opens a database (ARCHITECTURE.md, "Sources that are not JSON lines").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class TraceHome:
    """A runtime's home folder and the trace roots in it.

    The home is the environment variable `variable` when it is set and not empty, else
    `default` (relative to the user's home folder; empty: that folder itself); its trace
    roots are `folders` in it. (Gemini CLI's ``GEMINI_CLI_HOME`` stands for the user's home
    folder, in which the CLI keeps ``.gemini``.)
    """

    variable: str
    default: str
    folders: tuple[str, ...]

    def roots(self) -> list[Path]:
        """The trace roots (whether or not they exist)."""
        value = os.environ.get(self.variable)
        home = Path(value) if value else Path.home() / self.default
        return [home / folder for folder in self.folders]


@dataclass(frozen=True, slots=True)
class RowTable:
    """A table of a runtime's database holding rows of its sessions.

    `key` is the table's primary key column; `session` the column naming the session a row
    belongs to (for the session table, its key). In a `Database`'s `tables`, every table after
    the first hangs on the table before it: `parent` names the column holding that table's
    key, and a row is framed right after its parent row, its siblings in `order`. `changed`
    is the column holding the row's last change time (epoch milliseconds).
    """

    name: str
    session: str
    parent: str | None = None
    key: str = "id"
    order: tuple[str, ...] = ("id",)
    changed: str = "time_updated"


@dataclass(frozen=True, slots=True)
class Database:
    """A runtime's SQLite database: its file names (`fnmatch` patterns) and the tables that
    hold a session's rows, the session table first (one row per session)."""

    names: tuple[str, ...]
    tables: tuple[RowTable, ...]


@dataclass(frozen=True, slots=True)
class Folder:
    """A session a runtime keeps as a folder of several files (`traceidx.sources.folder`): a
    folder holding every file of `markers` (names) is one session, and its files matching
    `members` (`fnmatch` patterns of paths relative to the folder) are framed, pattern by
    pattern in this order, names sorted within a pattern."""

    markers: tuple[str, ...]
    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Runtime:
    """A registered runtime: the module and class of its adapter, its trace homes, and the
    database it keeps its sessions in (None: its sessions are JSON-lines files), or the
    layouts of the session folders it keeps (`Folder`)."""

    module: str
    adapter: str
    homes: tuple[TraceHome, ...]
    database: Database | None = None
    folders: tuple[Folder, ...] = ()


#: every runtime traceidx reads, by the name published in the `runtime` columns
RUNTIMES: dict[str, Runtime] = {
    "claude_code": Runtime(
        "traceidx.adapters.claude_code.adapter",
        "ClaudeCodeAdapter",
        (TraceHome("CLAUDE_CONFIG_DIR", ".claude", ("projects",)),),
    ),
    "codex": Runtime(
        "traceidx.adapters.codex.adapter",
        "CodexAdapter",
        (TraceHome("CODEX_HOME", ".codex", ("sessions", "archived_sessions")),),
    ),
    "copilot": Runtime(
        "traceidx.adapters.copilot.adapter",
        "CopilotAdapter",
        (TraceHome("COPILOT_HOME", ".copilot", ("session-state",)),),
    ),
    "dsh": Runtime(
        "traceidx.adapters.dsh.adapter",
        "DshAdapter",
        (TraceHome("DSH_HOME", ".dsh", ("sessions",)),),
    ),
    "gemini": Runtime(
        "traceidx.adapters.gemini.adapter",
        "GeminiAdapter",
        (TraceHome("GEMINI_CLI_HOME", "", (".gemini/tmp",)),),
    ),
    "opencode": Runtime(
        "traceidx.adapters.opencode.adapter",
        "OpenCodeAdapter",
        (
            TraceHome("XDG_DATA_HOME", ".local/share", ("opencode",)),
            TraceHome("OPENCODE_DB", ".local/share/opencode/opencode.db", (".",)),
        ),
        Database(
            ("opencode.db", "opencode-*.db"),
            (
                RowTable("session", session="id"),
                RowTable("message", "session_id", "session_id", order=("time_created", "id")),
                RowTable("part", "session_id", "message_id"),
            ),
        ),
    ),
    "pi": Runtime(
        "traceidx.adapters.pi.adapter",
        "PiAdapter",
        (TraceHome("PI_CODING_AGENT_DIR", ".pi/agent", ("sessions",)),),
    ),
    # Qwen Code writes chats under QWEN_RUNTIME_DIR, else QWEN_HOME, else ~/.qwen: both homes
    "qwen": Runtime(
        "traceidx.adapters.qwen.adapter",
        "QwenAdapter",
        (
            TraceHome("QWEN_RUNTIME_DIR", ".qwen", ("projects",)),
            TraceHome("QWEN_HOME", ".qwen", ("projects",)),
        ),
    ),
    # Mistral Vibe: 3.x keeps a session as a journaled store folder (`unified/<id>/`), 1.x
    # and 2.x as `session_*/` with meta.json (its totals) and messages.jsonl
    "vibe": Runtime(
        "traceidx.adapters.vibe.adapter",
        "VibeAdapter",
        (TraceHome("VIBE_HOME", ".vibe", ("logs/session",)),),
        folders=(
            Folder(
                ("CURRENT",),
                (
                    "CURRENT",
                    "meta.json",
                    "generations/*/manifest.json",
                    "generations/*/projection-state.json",
                    "generations/*/runtime-state.json",
                    "generations/*/checkpoint.json",
                    "chunks/*.json",
                    "tool-results/*.json",
                    "journal/*.jsonl",
                ),
            ),
            Folder(("meta.json", "messages.jsonl"), ("meta.json", "messages.jsonl")),
        ),
    ),
}


def declared() -> dict[str, tuple[TraceHome, ...]]:
    """Every registered runtime's trace homes, by runtime name (sorted)."""
    return {name: RUNTIMES[name].homes for name in sorted(RUNTIMES)}


def databases() -> dict[str, Database]:
    """The databases of the registered runtimes that keep one, by runtime name (sorted)."""
    return {
        name: database
        for name in sorted(RUNTIMES)
        if (database := RUNTIMES[name].database) is not None
    }


def folders() -> dict[str, tuple[Folder, ...]]:
    """The session-folder layouts of the registered runtimes that keep any, by runtime name."""
    return {name: RUNTIMES[name].folders for name in sorted(RUNTIMES) if RUNTIMES[name].folders}


def names() -> list[str]:
    """The registered runtimes' names, sorted."""
    return sorted(RUNTIMES)
