"""The store: a published dataset's manifest, its parts and their atomic generations, on a
local disk or on object storage.

It may import the domain (the tables' names); it never reads traces.
"""

from __future__ import annotations

#: the stages this one may import (beside itself and the shared `errors`, `runtimes`, `storage`)
MAY_IMPORT: tuple[str, ...] = ("traceidx.domain",)
