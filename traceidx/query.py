"""The read side: a DuckDB connection with the dataset's views, and Polars helpers.

`connect` reads the manifest, exposes each table's live part files as a private relation
(``_items`` …; an empty relation of the derived schema when a table has no parts) and then runs
the view definitions shipped in ``traceidx.sql`` (`VIEWS`, in dependency order). Readers use
the manifest's file list, never a glob, so a build in progress is invisible to them.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from traceidx.dataset import DatasetError, read_manifest
from traceidx.model import TABLES
from traceidx.schema import table_schema

#: public views in dependency order; each is ``sql/views/<name>.sql``
VIEWS: tuple[str, ...] = (
    "sources",
    "records",
    "sessions",
    "loops",
    "items",
    "tool_calls",
    "loop_usage",
    "shell_statements",
    "shell_invocations",
    "shell_redirects",
)


def view_sql(name: str) -> str:
    """The shipped SQL text of one view."""
    return resources.files("traceidx.sql").joinpath("views", f"{name}.sql").read_text("utf-8")


def _sql_list(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def connect(dataset: str | Path, *, database: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """A DuckDB connection over a published dataset, with every view registered.

    >>> con = traceidx.connect("~/.local/share/traceidx")  # doctest: +SKIP
    >>> con.sql("SELECT model, sum(total) FROM loop_usage GROUP BY 1").show()  # doctest: +SKIP
    """
    root = Path(dataset).expanduser()
    manifest = read_manifest(root)
    if manifest is None:
        raise DatasetError(f"{root}: no dataset here yet (run `traceidx build` first)")
    con = duckdb.connect(database)
    con.execute("SET TimeZone = 'UTC'")
    for table in TABLES:
        files = [root / f for f in manifest["tables"].get(table, [])]
        if files:
            con.execute(
                f"CREATE VIEW _{table} AS SELECT * FROM read_parquet({_sql_list(files)}, "
                "hive_partitioning = false)"
            )
        else:
            empty = table_schema(table).empty_table()
            con.register(f"_{table}_empty", empty)
            con.execute(f"CREATE VIEW _{table} AS SELECT * FROM _{table}_empty")
    for name in VIEWS:
        con.execute(view_sql(name))
    return con


def scan(dataset: str | Path, view: str) -> pl.LazyFrame:
    """A Polars LazyFrame of one view (nested structs intact)."""
    con = connect(dataset)
    frame: pl.DataFrame = con.sql(f"SELECT * FROM {view}").pl()
    return frame.lazy()


def scan_sources(dataset: str | Path) -> pl.LazyFrame:
    """Sources as a LazyFrame."""
    return scan(dataset, "sources")


def scan_records(dataset: str | Path) -> pl.LazyFrame:
    """Records as a LazyFrame."""
    return scan(dataset, "records")


def scan_sessions(dataset: str | Path) -> pl.LazyFrame:
    """Sessions as a LazyFrame."""
    return scan(dataset, "sessions")


def scan_loops(dataset: str | Path) -> pl.LazyFrame:
    """Loops as a LazyFrame."""
    return scan(dataset, "loops")


def scan_items(dataset: str | Path) -> pl.LazyFrame:
    """Items as a LazyFrame, `semantic` as a nested struct."""
    return scan(dataset, "items")


def scan_tool_calls(dataset: str | Path) -> pl.LazyFrame:
    """Tool calls with their outputs as a LazyFrame."""
    return scan(dataset, "tool_calls")


def scan_loop_usage(dataset: str | Path) -> pl.LazyFrame:
    """Per-loop model and usage as a LazyFrame."""
    return scan(dataset, "loop_usage")


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of a query."""
    rel = con.sql(sql)
    if rel is None:
        return [], []
    return list(rel.columns), rel.fetchall()
