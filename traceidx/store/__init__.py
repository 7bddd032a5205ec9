"""The store: a published dataset's manifest, its parts and their atomic generations, on a
local disk or on object storage.

The rest of traceidx reaches a dataset through one interface, `base.Store`, made by
`open.open_store` (for a build: locked, with a local working folder) or `open.reader` (to read):
`local.LocalStore` for a folder (`dataset`: lock, swap, garbage), `remote.ObjectStore` for a URI
(uploads, a manifest per generation, conditional write). `manifest` is the manifest's shape.

It may import the domain (the tables' names); it never reads traces.
"""

from __future__ import annotations

#: the stages this one may import (beside itself and the shared `errors`, `runtimes`, `storage`)
MAY_IMPORT: tuple[str, ...] = ("traceidx.domain",)
