"""The build job: plan what changed, project each changed source in a worker (a local process
pool or Ray), stage the rows and publish the new generation atomically.

It may import every stage below it: domain, sources, adapters, projection, tables and the store.
"""

from __future__ import annotations

#: the stages this one may import (beside itself and the shared `errors`, `runtimes`, `storage`)
MAY_IMPORT: tuple[str, ...] = (
    "traceidx.domain",
    "traceidx.sources",
    "traceidx.adapters",
    "traceidx.projection",
    "traceidx.tables",
    "traceidx.store",
)
