"""Arrow tables of the domain: the schema derived from the domain Structs and the encoders that
turn projected rows into Arrow tables.

`schema` derives each table's Arrow schema from `traceidx.domain.model` (and the Parquet
columns worth dictionary encoding or statistics); `records` and `items` encode the runs of
columns framing and projection keep (`traceidx.sources.records.RecordColumns`,
`traceidx.projection.items.ItemColumns`), `encode` every table of a source's rows, and guards
the uniqueness of ids in a build.

It sits after projection and before the pipeline: it may import the domain, sources and
projection (the column-holding classes it encodes). No earlier stage imports it.
"""

from __future__ import annotations

#: the stages this one may import (beside itself and the shared `errors`, `runtimes`, `storage`)
MAY_IMPORT: tuple[str, ...] = (
    "traceidx.domain",
    "traceidx.sources",
    "traceidx.projection",
)
