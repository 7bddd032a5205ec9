"""The adapter registry: each runtime module registers itself; none is listed here.

Registering an adapter also declares its runtime's trace homes (`traceidx.runtimes`), which
is where discovery and the command line take the runtime list from.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from traceidx import runtimes
from traceidx.adapters.base import Adapter

_REGISTRY: dict[str, type[Adapter]] = {}
_LOADED = False
#: modules of this package that are not adapters
_HELPERS = frozenset({"base", "values"})


def register(cls: type[Adapter]) -> type[Adapter]:
    """Class decorator: make an adapter known under its runtime name."""
    if cls.runtime in _REGISTRY:
        raise RuntimeError(f"two adapters claim runtime {cls.runtime!r}")
    _REGISTRY[cls.runtime] = cls
    runtimes.declare(cls.runtime, cls.homes)
    return cls


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _HELPERS:
            importlib.import_module(f"{__name__}.{info.name}")
    _LOADED = True


def adapters() -> dict[str, type[Adapter]]:
    """All registered adapters by runtime name."""
    _load()
    return dict(_REGISTRY)


def detect(head: list[Any], only: set[str] | None = None) -> type[Adapter] | None:
    """The adapter whose structure the leading decoded records have, if any."""
    for name, cls in sorted(adapters().items()):
        if (only is None or name in only) and cls.claims(head):
            return cls
    return None
