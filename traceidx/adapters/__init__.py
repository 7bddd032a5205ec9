"""Adapters: one package per runtime, each turning its decoded records into draft facts.

The runtimes and the module of each adapter are listed once, in `traceidx.runtimes.RUNTIMES`;
this package imports an adapter's module on first use. Every adapter package has the same
layout: `wire` (the native record shapes and the members decoded), `state` (the `<Rt>State`
class: session, Loops, responses and usage bookkeeping, draining), `tools` (`<Rt>Tools`, a
`<Rt>State`: tool calls and outputs), `usage` (the runtime's usage units to the contract's) and
`adapter` (the registered `<Rt>Adapter`, a `<Rt>Tools`: `claims`, and `feed`, which dispatches
each record); a package may add modules (Codex and Claude Code add `messages`).
`tests/test_registry.py` holds every runtime package to this layout.
Adapters import `base`, `values` and the per-line core (rules, timestamps); never a later
stage, files or storage.
"""

from __future__ import annotations

import importlib
from typing import Any

from traceidx.adapters.base import Adapter
from traceidx.runtimes import RUNTIMES

#: the stages adapters may import (beside their own package and the shared `errors`, `runtimes`)
MAY_IMPORT: tuple[str, ...] = ("traceidx.domain",)
_LOADED: dict[str, type[Adapter]] = {}


def adapter(runtime: str) -> type[Adapter]:
    """The adapter class of a registered runtime (its module imported on first use)."""
    cls = _LOADED.get(runtime)
    if cls is None:
        entry = RUNTIMES[runtime]
        cls = getattr(importlib.import_module(entry.module), entry.adapter)
        if not (isinstance(cls, type) and issubclass(cls, Adapter)) or cls.runtime != runtime:
            raise RuntimeError(f"{entry.module}.{entry.adapter} is not the {runtime} adapter")
        _LOADED[runtime] = cls
    return cls


def adapters() -> dict[str, type[Adapter]]:
    """Every registered adapter by runtime name, sorted."""
    return {name: adapter(name) for name in sorted(RUNTIMES)}


def detect(head: list[Any], only: set[str] | None = None) -> type[Adapter] | None:
    """The adapter whose structure the leading decoded records have, if any."""
    for name in sorted(RUNTIMES):
        if only is None or name in only:
            cls = adapter(name)
            if cls.claims(head):
                return cls
    return None
