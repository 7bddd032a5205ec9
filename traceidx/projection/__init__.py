"""Projection: one source in, domain rows out: detect its runtime, feed its Records to the
adapter, turn the draft into domain objects with ids and links, kept column by column for
`traceidx.tables` to encode.

It may import the domain, sources, adapters and the store's partition layout.
"""

from __future__ import annotations

#: the stages this one may import (beside itself and the shared `errors`, `runtimes`, `storage`)
MAY_IMPORT: tuple[str, ...] = (
    "traceidx.domain",
    "traceidx.sources",
    "traceidx.adapters",
    "traceidx.store",
)
