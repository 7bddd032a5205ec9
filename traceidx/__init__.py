"""traceidx: coding-agent traces as a queryable, partitioned Parquet dataset."""

from __future__ import annotations

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """`traceidx.connect` and the `scan_*` helpers, imported on first use (keeps the CLI fast)."""
    if name == "connect" or name.startswith("scan_"):
        import importlib

        return getattr(importlib.import_module("traceidx.query"), name)
    raise AttributeError(f"module 'traceidx' has no attribute {name!r}")
