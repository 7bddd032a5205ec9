"""Analysis: the read side of a published dataset: DuckDB views, reports, prices, search,
evidence checks, the HTML report, the summary a statusline reads and the usage rollup
`report usage` answers from.

It may import the domain, sources (to re-read evidence), the tables' schema and the store; never
the build.
"""

from __future__ import annotations

#: the stages this one may import (beside itself and the shared `errors`, `runtimes`, `storage`)
MAY_IMPORT: tuple[str, ...] = (
    "traceidx.domain",
    "traceidx.sources",
    "traceidx.tables",
    "traceidx.store",
)
