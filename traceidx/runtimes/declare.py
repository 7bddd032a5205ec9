"""What a registry entry declares of its runtime: homes, files, database, tools and fixtures."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

#: the runtime-neutral kinds of tools (`tool_kinds` view; `tool_calls.kind`)
ToolKind = Literal[
    "shell", "read", "write", "edit", "search", "fetch", "delegate", "plan", "ask_user", "mcp"
]
TOOL_KINDS: tuple[ToolKind, ...] = (
    "shell", "read", "write", "edit", "search", "fetch", "delegate", "plan", "ask_user", "mcp"
)  # fmt: skip
#: how a file is split into Records: JSON lines (`traceidx.sources.frame`) or one JSON
#: document rewritten whole (`traceidx.sources.document`)
FileFraming = Literal["lines", "document"]


def kinds(**names: str) -> dict[str, ToolKind]:
    """A runtime's tool names by kind, each kind given its names in one string separated by
    spaces: ``kinds(shell="bash", read="read ls")``."""
    out: dict[str, ToolKind] = {}
    for kind, listed in names.items():
        if kind not in TOOL_KINDS:
            raise ValueError(f"{kind!r} is not a tool kind ({', '.join(TOOL_KINDS)})")
        for tool in listed.split():
            out[tool] = kind
    return out


@dataclass(frozen=True, slots=True)
class TraceHome:
    """A runtime's home folder and the trace roots in it.

    The home is the environment variable `variable` when it is set and not empty, else
    `default` (relative to the user's home folder; empty: that folder itself); its trace
    roots are `folders` in it. `note` says, where the variable does not name the home
    folder itself, what it names (Gemini CLI's ``GEMINI_CLI_HOME`` stands for the user's
    home folder, in which the CLI keeps ``.gemini``).
    """

    variable: str
    default: str
    folders: tuple[str, ...]
    note: str = ""

    def roots(self) -> list[Path]:
        """The trace roots (whether or not they exist)."""
        value = os.environ.get(self.variable)
        home = Path(value) if value else Path.home() / self.default
        return [home / folder for folder in self.folders]

    def shown(self) -> list[str]:
        """The default trace roots as a person writes them (``~/.codex/sessions``)."""
        home = "~/" + self.default if self.default else "~"
        return [home if folder == "." else f"{home}/{folder}" for folder in self.folders]


@dataclass(frozen=True, slots=True)
class FileRule:
    """Files a runtime writes that discovery takes as candidates when it walks a folder, beyond
    the JSON-lines files (``*.jsonl``, ``*.jsonl.zst``, ``*.jsonl.zstd``) every walk takes:
    an `fnmatch` pattern for the file's name, one for the name of its folder (None: any), and
    the file's framing."""

    name: str
    folder: str | None = None
    framing: FileFraming = "document"


@dataclass(frozen=True, slots=True)
class Packed:
    """A column a runtime may store compressed in another column of the same row: where
    `column` is NULL and `source` holds a value, the row's `column` is `source` decoded by
    `codec` (``zstd``: a zstd frame of UTF-8 text)."""

    column: str
    source: str
    codec: str = "zstd"


@dataclass(frozen=True, slots=True)
class RowTable:
    """A table of a runtime's database holding rows of its sessions.

    `key` is the table's primary key column; `session` the column naming the session a row
    belongs to (for the session table, its key). In a `Database`'s `tables`, every table after
    the first hangs on the table before it: `parent` names the column holding that table's
    key, and a row is framed right after its parent row, its siblings in `order`. `changed`
    is the column holding the row's last change time (epoch milliseconds). `packed`: the
    columns the runtime may store compressed in another (`Packed`).
    """

    name: str
    session: str
    parent: str | None = None
    key: str = "id"
    order: tuple[str, ...] = ("id",)
    changed: str = "time_updated"
    packed: tuple[Packed, ...] = ()


@dataclass(frozen=True, slots=True)
class Database:
    """A runtime's SQLite database: its file names (`fnmatch` patterns) and the tables that
    hold a session's rows, the session table first (one row per session).

    `mark`, when set, is written into every record framed from the database (its member
    ``database``): a runtime whose tables repeat another's (Kilo Code's ``kilo.db`` has
    OpenCode's schema) is told apart by it, since adapters detect a runtime from the records.
    """

    names: tuple[str, ...]
    tables: tuple[RowTable, ...]
    mark: str | None = None


@dataclass(frozen=True, slots=True)
class Folder:
    """A session a runtime keeps as a folder of several files (`traceidx.sources.folder`): a
    folder holding every entry of `markers` (a file's name, a folder's name ending ``/``) is one
    session, and its files matching
    `members` (`fnmatch` patterns of paths relative to the folder) are framed, pattern by
    pattern in this order, names sorted within a pattern."""

    markers: tuple[str, ...]
    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Runtime:
    """A registered runtime and what is known of it.

    * `name`: the name published in the `runtime` columns; `title`: as people write it.
    * `module`, `adapter`: the module and class of its adapter (imported on first use).
    * `version`: the adapter's projection version: a build by another version re-projects
      this runtime's sources, and only them.
    * `homes`: its trace homes, with the runtime's own override variables.
    * `tools`: the tool names it uses (lower case) with their runtime-neutral kind.
    * `fixtures`: its folders of the generated corpus (``generated/<folder>/``), each with a
      committed copy under ``tests/fixtures/generated/``.
    * `files`: the files it writes that are not JSON lines, for discovery.
    * `database`: the SQLite database it keeps its sessions in, if any.
    * `folders`: the layouts of the session folders it keeps, if any (a session as a folder of
      several files).
    """

    name: str
    title: str
    module: str
    adapter: str
    version: int
    homes: tuple[TraceHome, ...]
    tools: Mapping[str, ToolKind]
    fixtures: tuple[str, ...]
    files: tuple[FileRule, ...] = ()
    database: Database | None = None
    folders: tuple[Folder, ...] = ()
