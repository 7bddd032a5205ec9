"""The read side: a DuckDB connection with the dataset's views, and Polars helpers.

`connect` reads the manifest, exposes each table's live part files as a private relation
(``_items`` …; an empty relation of the derived schema when a table has no parts) and then runs
the view definitions shipped with traceidx (`traceidx.analysis.sqlfiles`; `VIEWS`, in
dependency order). Readers use the manifest's file list, never a glob, so a build in
progress is invisible to them.

The dataset is a read-only `Store` (traceidx.store.open.reader). One on object storage (a URI,
traceidx.store.remote) is read through pyarrow.fs: each table's parts are a pyarrow dataset that
DuckDB scans, so no DuckDB extension is needed; extension autoinstall and autoload stay off, and
nothing is downloaded at run time.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from traceidx.analysis import sqlfiles
from traceidx.domain.model import TABLES
from traceidx.errors import DamagedPart, DatasetError
from traceidx.storage import default_dataset
from traceidx.store.base import Store
from traceidx.store.open import reader

if TYPE_CHECKING:  # Polars and Arrow load only where a frame or an empty table is made
    import polars as pl

#: DuckDB never fetches an extension (a remote dataset is read through pyarrow.fs)
OFFLINE: dict[str, Any] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}

#: public views in dependency order; each is ``sql/views/<name>.sql``
VIEWS: tuple[str, ...] = (
    "sources",
    "records",
    "sessions",
    "loops",
    "model_calls",
    "items",
    "tool_kinds",
    "tool_calls",
    "loop_usage",
    "shell_statements",
    "shell_invocations",
    "shell_redirects",
)


def view_sql(name: str) -> str:
    """The shipped SQL text of one view."""
    return sqlfiles.text("views", name)


def _sql_list(paths: list[str]) -> str:
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def connect(
    dataset: str | Path | None = None,
    *,
    database: str = ":memory:",
    prices: str | Path | None = None,
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection over a published dataset (default: the default dataset), with views.

    `model_calls.cost_usd` prices each call with genai-prices, or with the entries of a
    `prices` override file (see ``traceidx prices --help``).

    >>> con = traceidx.connect("~/.local/share/traceidx")  # doctest: +SKIP
    >>> con.sql("SELECT model, sum(total) FROM loop_usage GROUP BY 1").show()  # doctest: +SKIP
    """
    store = reader(dataset if dataset is not None else default_dataset())
    root = store.where
    manifest = store.read_published()
    if manifest is None:
        raise DatasetError(f"{root}: no dataset here yet (run `traceidx build` first)")
    from traceidx.tables.schema import schema_digest

    written = manifest.settings.schema if manifest.settings is not None else ""
    if written and written != schema_digest():
        raise DatasetError(
            f"{root}: its tables were written by another version of traceidx; run `traceidx "
            "build` on it (which re-projects every source) before querying"
        )
    damage = store.check_parts(manifest, checksums=False)
    if damage:
        raise DamagedPart([d.line(root) for d in damage])
    con = duckdb.connect(database, config=OFFLINE)
    con.execute("SET TimeZone = 'UTC'")
    with contextlib.suppress(duckdb.Error):  # in Jupyter without ipywidgets it is off anyway
        con.execute("SET enable_progress_bar = false")
    files = {table: manifest.files(table) for table in TABLES}
    _define_views(con, files, store, prices)
    return con


def _define_views(
    con: duckdb.DuckDBPyConnection,
    files: dict[str, list[str]],
    store: Store | None = None,
    prices: str | Path | None = None,
) -> None:
    """Each table's part files (dataset-relative names in `store`) as ``_<table>`` (an empty
    relation of the derived schema when it has none), the price tables of its model calls
    (`traceidx.analysis.pricing.load`), then the shipped views. Parts on a pyarrow
    filesystem are a pyarrow dataset that DuckDB scans; local parts DuckDB reads by path."""
    for table in TABLES:
        if files.get(table) and store is not None and store.filesystem is not None:
            import pyarrow.dataset as ds

            from traceidx.tables.schema import table_schema

            parts = [store.path(f) for f in files[table]]
            scanned = ds.dataset(parts, table_schema(table), "parquet", store.filesystem)
            con.register(f"_{table}_parts", scanned)
            con.execute(f"CREATE VIEW _{table} AS SELECT * FROM _{table}_parts")
        elif files.get(table):
            assert store is not None
            con.execute(
                f"CREATE VIEW _{table} AS SELECT * FROM read_parquet("
                f"{_sql_list([store.path(f) for f in files[table]])}, hive_partitioning = false)"
            )
        else:
            from traceidx.tables.schema import table_schema

            empty = table_schema(table).empty_table()
            con.register(f"_{table}_empty", empty)
            con.execute(f"CREATE VIEW _{table} AS SELECT * FROM _{table}_empty")
    from traceidx.analysis import pricing

    pricing.load(con, Path(prices) if prices is not None else None)
    con.execute(_tool_kinds_sql())
    for name in VIEWS:
        con.execute(view_sql(name))


def _tool_kinds_sql() -> str:
    """The ``_tool_kinds`` relation: every tool name the registry declares, with its kind."""
    from traceidx.runtimes import tool_kinds

    rows = ", ".join(f"('{tool}', '{kind}')" for tool, kind in tool_kinds().items())
    return (
        f"CREATE OR REPLACE VIEW _tool_kinds AS SELECT * FROM (VALUES {rows}) AS t(tool_name, kind)"
    )


def view_summary(name: str) -> str:
    """The first sentence of a view's header comment, without the leading ``<name>:``."""
    header = []
    for line in view_sql(name).splitlines():
        if not line.startswith("--"):
            break
        header.append(line.removeprefix("--").strip())
    text = " ".join(header).removeprefix(f"{name}:").strip()
    return re.split(r"(?<!e\.g)(?<!i\.e)\.\s|;\s", text, maxsplit=1)[0].rstrip(".")


def describe_views() -> dict[str, list[tuple[str, str]]]:
    """Every public view's columns and DuckDB types, as the shipped view SQL defines them
    (described over empty tables of the derived schema; no dataset needed)."""
    con = duckdb.connect(":memory:", config=OFFLINE)
    try:
        _define_views(con, {})
        return {
            name: [(str(r[0]), str(r[1])) for r in con.execute(f"DESCRIBE {name}").fetchall()]
            for name in VIEWS
        }
    finally:
        con.close()


def scan(view: str, dataset: str | Path | None = None) -> pl.LazyFrame:
    """A lazy Polars frame over one view (nested structs intact; DuckDB streams the rows)."""
    if view not in VIEWS:
        raise ValueError(f"no view named {view!r}; views: {', '.join(VIEWS)}")
    con = connect(dataset if dataset is not None else default_dataset())
    frame: pl.LazyFrame = con.sql(f"SELECT * FROM {view}").pl(lazy=True)
    return frame


def read(view: str, dataset: str | Path | None = None) -> pl.DataFrame:
    """One view as a Polars DataFrame."""
    return scan(view, dataset).collect()


def _accessors(
    view: str,
) -> tuple[
    Callable[[str | Path | None], pl.LazyFrame], Callable[[str | Path | None], pl.DataFrame]
]:
    """`scan_<view>` and `read_<view>` for one view."""

    def scan_view(dataset: str | Path | None = None) -> pl.LazyFrame:
        return scan(view, dataset)

    def read_view(dataset: str | Path | None = None) -> pl.DataFrame:
        return read(view, dataset)

    for fn, kind in ((scan_view, "LazyFrame"), (read_view, "DataFrame")):
        fn.__name__ = f"{fn.__name__.split('_')[0]}_{view}"
        fn.__doc__ = f"The `{view}` view as a Polars {kind} (see `traceidx schema`)."
    return scan_view, read_view


scan_sources, read_sources = _accessors("sources")
scan_records, read_records = _accessors("records")
scan_sessions, read_sessions = _accessors("sessions")
scan_loops, read_loops = _accessors("loops")
scan_model_calls, read_model_calls = _accessors("model_calls")
scan_items, read_items = _accessors("items")
scan_tool_calls, read_tool_calls = _accessors("tool_calls")
scan_loop_usage, read_loop_usage = _accessors("loop_usage")
scan_shell_statements, read_shell_statements = _accessors("shell_statements")
scan_shell_invocations, read_shell_invocations = _accessors("shell_invocations")
scan_shell_redirects, read_shell_redirects = _accessors("shell_redirects")


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of a query."""
    rel = con.sql(sql)
    if rel is None:
        return [], []
    return list(rel.columns), rel.fetchall()
