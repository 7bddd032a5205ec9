"""Sources: finding trace files (discovery), reading their logical bytes (plain, zstd, object
storage, SQLite databases) and framing them into Records (lines, JSON documents, rows).

It knows where runtimes keep traces (`traceidx.runtimes`) but not what a record means. It may
import the domain.
"""

from __future__ import annotations

#: the stages this one may import (beside itself and the shared `errors`, `runtimes`, `storage`)
MAY_IMPORT: tuple[str, ...] = ("traceidx.domain",)
