"""traceidx: coding-agent traces as a queryable, partitioned Parquet dataset."""

from __future__ import annotations

__version__ = "0.1.0"


def compiled() -> bool:
    """Whether this install runs its per-line modules compiled by mypyc (else pure Python)."""
    from importlib.util import find_spec

    spec = find_spec("traceidx.ingest")
    return spec is not None and spec.origin is not None and not spec.origin.endswith(".py")


def __getattr__(name: str) -> object:
    """The Python API, imported on first use (keeps the CLI fast).

    * ``connect(dataset=None)``: a DuckDB connection with every view;
    * ``scan_<view>(dataset=None)`` / ``read_<view>(dataset=None)``: a view as a Polars
      LazyFrame / DataFrame, nested structs intact (``scan_items()``, ``read_loop_usage()``…);
    * ``report(name, dataset=None, **params)``: a report as a Polars DataFrame;
    * ``build(paths, dataset)``: sync a dataset with trace files.
    """
    import importlib

    if name in ("connect", "scan", "read") or name.startswith(("scan_", "read_")):
        return getattr(importlib.import_module("traceidx.query"), name)
    if name == "report":
        return importlib.import_module("traceidx.reports").report
    if name == "build":
        return importlib.import_module("traceidx.build").build
    raise AttributeError(f"module 'traceidx' has no attribute {name!r}")
