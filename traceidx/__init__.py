"""traceidx: coding-agent traces as a queryable, partitioned Parquet dataset."""

from __future__ import annotations

__version__ = "0.1.0"
