"""The domain: the runtime-neutral model (Source, Record, Session, Loop, Item and the typed
Semantic), its columns' descriptions, evidence-derived ids and the rules every adapter shares.

The lowest stage: it reads no file and knows no runtime, and it holds no Arrow, DuckDB, Polars
or numpy (the Arrow schema derived from its Structs is `traceidx.tables`; ids of whole runs are
computed by `traceidx.sources.idruns`). It may import only `traceidx.errors`.
"""

from __future__ import annotations

#: the stages this one may import (beside itself and the shared `errors`, `runtimes`, `storage`)
MAY_IMPORT: tuple[str, ...] = ()
