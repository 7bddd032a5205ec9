"""traceidx: coding-agent traces as a queryable, partitioned Parquet dataset.

The Python API, imported on first use (``import traceidx`` stays cheap):

* ``connect(dataset=None)``: a DuckDB connection with every view;
* ``scan_<view>(dataset=None)`` / ``read_<view>(dataset=None)``: a view as a Polars
  LazyFrame / DataFrame, nested structs intact (``scan_items()``, ``read_loop_usage()``…);
  ``scan(view)`` / ``read(view)`` take the view's name;
* ``report(name, dataset=None, **params)``: a report as a Polars DataFrame;
* ``build(paths, dataset)``: sync a dataset with trace files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers see; at run time `__getattr__` imports them on use
    from traceidx.analysis.query import connect, read, scan
    from traceidx.analysis.reports import report
    from traceidx.pipeline.job import build

__version__ = "0.1.0"
__all__ = ["build", "connect", "read", "report", "scan"]

#: the public names and the module each comes from (none is a submodule's name)
_LAZY = {
    "build": "traceidx.pipeline.job",
    "connect": "traceidx.analysis.query",
    "read": "traceidx.analysis.query",
    "scan": "traceidx.analysis.query",
    "report": "traceidx.analysis.reports",
}


def __getattr__(name: str) -> object:
    """A public function of the Python API, its module imported on first use."""
    import importlib

    module = _LAZY.get(name)
    if module is None and name.startswith(("scan_", "read_")):
        module = "traceidx.analysis.query"
    if module is None:
        raise AttributeError(f"module 'traceidx' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
