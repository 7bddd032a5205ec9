"""The command line: argument parsing, the commands and the one output layer (table, markdown,
JSON, CSV) they all print through.

It may import every stage. This package's `__init__` stays empty so that `statusline`, which
runs after every agent message, loads nothing else.
"""

from __future__ import annotations

#: the stages this one may import (beside itself and the shared `errors`, `runtimes`, `storage`)
MAY_IMPORT: tuple[str, ...] = (
    "traceidx.domain",
    "traceidx.sources",
    "traceidx.store",
    "traceidx.adapters",
    "traceidx.projection",
    "traceidx.tables",
    "traceidx.pipeline",
    "traceidx.analysis",
    "traceidx.demo",
)
