"""The runtime registry: every runtime traceidx reads, each declared in a module of its own.

Each module of this package but `declare` declares one runtime as ``RUNTIME``
(`traceidx.runtimes.declare.Runtime`): its adapter, its trace homes and override variables,
the files it writes that are not JSON lines, the database it keeps its sessions in, its tool
names with their kinds, its fixture folders and its adapter's projection version. Adding a
runtime is one adapter package under `traceidx.adapters` and one module here; the places that
need to know every runtime read this table: discovery (homes, files, databases), the
`tool_kinds` view, the manifest's adapter versions, the README's table of roots (generated
and checked), and every test that loops over runtimes.

This package imports no stage of the pipeline and no adapter: discovery, the first stage, and
the command line read the table as it stands; `traceidx.adapters` imports an adapter's module
by the name given here, on first use.

A runtime that keeps its sessions in a SQLite database declares the database's file names and
the tables that hold a session's rows (`Database`): discovery and the framing of database
sources (`traceidx.sources.rowsource`) read that declaration, so that an adapter never opens
a database (ARCHITECTURE.md, "Sources that are not JSON lines").
"""

from __future__ import annotations

import fnmatch
import functools
import importlib
import pkgutil
import re
from collections.abc import Callable

from traceidx.runtimes.declare import (
    TOOL_KINDS,
    Database,
    FileFraming,
    FileRule,
    Folder,
    Packed,
    RowTable,
    Runtime,
    ToolKind,
    TraceHome,
)

__all__ = [
    "RUNTIMES",
    "TOOL_KINDS",
    "Database",
    "FileFraming",
    "FileRule",
    "Folder",
    "Packed",
    "RowTable",
    "Runtime",
    "ToolKind",
    "TraceHome",
    "databases",
    "declared",
    "file_rules",
    "folders",
    "names",
    "tool_kinds",
    "versions",
]


#: the stages the registry may import: none (every stage reads it)
MAY_IMPORT: tuple[str, ...] = ()
#: a declared tool name: lower case, as `tool_calls` matches it
_TOOL_NAME = re.compile(r"[a-z0-9_.-]+")


def _load() -> dict[str, Runtime]:
    """Every runtime declared by a module of this package, by name (sorted)."""
    found: dict[str, Runtime] = {}
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if module == "declare":
            continue
        runtime = importlib.import_module(f"{__name__}.{module}").RUNTIME
        if not isinstance(runtime, Runtime) or runtime.name != module:
            raise RuntimeError(f"traceidx.runtimes.{module} does not declare runtime {module!r}")
        found[runtime.name] = runtime
    return found


#: every runtime traceidx reads, by the name published in the `runtime` columns
RUNTIMES: dict[str, Runtime] = _load()


def names() -> list[str]:
    """The registered runtimes' names, sorted."""
    return sorted(RUNTIMES)


def declared() -> dict[str, tuple[TraceHome, ...]]:
    """Every registered runtime's trace homes, by runtime name (sorted)."""
    return {name: RUNTIMES[name].homes for name in sorted(RUNTIMES)}


@functools.lru_cache(maxsize=16)
def any_name(patterns: tuple[str, ...]) -> Callable[[str], object]:
    """Whether a file name matches any of some declared `fnmatch` patterns (one compiled
    pattern: most names match none, and one match says so)."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns) or "(?!)").match


def databases() -> dict[str, Database]:
    """The databases of the registered runtimes that keep one, by runtime name (sorted)."""
    return {
        name: database
        for name in sorted(RUNTIMES)
        if (database := RUNTIMES[name].database) is not None
    }


def file_rules() -> list[FileRule]:
    """Every registered runtime's rules for files that are not JSON lines."""
    return [rule for name in sorted(RUNTIMES) for rule in RUNTIMES[name].files]


def folders() -> dict[str, tuple[Folder, ...]]:
    """The session-folder layouts of the registered runtimes that keep any, by runtime name."""
    return {name: RUNTIMES[name].folders for name in sorted(RUNTIMES) if RUNTIMES[name].folders}


def versions() -> dict[str, int]:
    """Each registered runtime's adapter projection version, by runtime name (sorted)."""
    return {name: RUNTIMES[name].version for name in sorted(RUNTIMES)}


def tool_kinds() -> dict[str, ToolKind]:
    """Every tool name the registered runtimes declare, with its kind. A name two runtimes use
    has one meaning: declaring it with another kind is an error of the registry."""
    kinds: dict[str, ToolKind] = {}
    owner: dict[str, str] = {}
    for name in sorted(RUNTIMES):
        for tool, kind in RUNTIMES[name].tools.items():
            if _TOOL_NAME.fullmatch(tool) is None:
                raise RuntimeError(f"runtime {name}: tool name {tool!r} is not a lower-case name")
            if kinds.setdefault(tool, kind) != kind:
                raise RuntimeError(
                    f"runtime {name} declares tool {tool!r} as {kind}, "
                    f"runtime {owner[tool]} as {kinds[tool]}"
                )
            owner.setdefault(tool, name)
    return dict(sorted(kinds.items()))
