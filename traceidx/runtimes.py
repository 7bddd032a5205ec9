"""What each runtime declares beside its records: where its traces live by default.

Runtime knowledge lives in the runtime's adapter (`traceidx.adapters`): an adapter declares
its trace homes (`Adapter.homes`) and the adapter registry enters them here when it registers
the adapter. This module imports no stage of the pipeline, so discovery, the first stage,
reads what the adapters declared without importing them: `declared` only asks the registry,
by name, to load its adapters (they are plugins, found by listing their package), the one
place the runtime list comes from.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class TraceHome:
    """A runtime's home folder and the trace roots in it.

    The home is the environment variable `variable` when it is set and not empty, else
    `default` (relative to the user's home folder); its trace roots are `folders` in it.
    """

    variable: str
    default: str
    folders: tuple[str, ...]

    def roots(self) -> list[Path]:
        """The trace roots (whether or not they exist)."""
        value = os.environ.get(self.variable)
        home = Path(value) if value else Path.home() / self.default
        return [home / folder for folder in self.folders]


_DECLARED: dict[str, tuple[TraceHome, ...]] = {}


def declare(runtime: str, homes: tuple[TraceHome, ...]) -> None:
    """Enter a registered runtime and its trace homes (called by the adapter registry)."""
    _DECLARED[runtime] = homes


def declared() -> dict[str, tuple[TraceHome, ...]]:
    """Every registered runtime's trace homes, by runtime name (sorted)."""
    importlib.import_module("traceidx.adapters").adapters()  # registers them all, once
    return {name: _DECLARED[name] for name in sorted(_DECLARED)}


def names() -> list[str]:
    """The registered runtimes' names, sorted."""
    return list(declared())
