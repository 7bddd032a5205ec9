"""`traceidx mcp`: the dataset as a Model Context Protocol server over stdio, read-only.

Built on the official `mcp` SDK (the ``mcp`` extra). Tools: ``sql`` (a SELECT over the views,
rows capped and the cap said), ``report`` (any report with its parameters, as JSON rows),
``schema`` (views, columns, meanings), ``inspect`` (a record's raw evidence, verified) and
``search`` (`analysis.search`). The server can never write, read a file outside the dataset,
attach a database, install or load an extension or reach the network, whatever SQL it is
sent: only SELECT statements run, on a DuckDB connection whose views are defined first and
whose file access is then limited to the dataset's folder, external access and extensions
off, and its configuration locked. Each refusal is a tool error; the server keeps answering.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceidx.analysis.rows import jsonable
from traceidx.errors import TraceidxError, UsageError

if TYPE_CHECKING:
    import duckdb
    from mcp.server.mcpserver import MCPServer

#: the most rows one tool call returns (the call says when it cut the result)
ROW_CAP = 500
#: the statements a query may hold
ALLOWED = frozenset({"SELECT", "EXPLAIN"})


def locked_connection(dataset: Path) -> duckdb.DuckDBPyConnection:
    """A connection with the dataset's views and nothing else it could reach."""
    from traceidx.analysis.query import connect

    con = connect(dataset)
    folder = str(dataset.resolve()) + "/"
    con.execute("SET allowed_directories = [?]", [folder])
    con.execute("SET enable_external_access = false")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET lock_configuration = true")
    return con


def run_sql(con: duckdb.DuckDBPyConnection, query: str, limit: int = ROW_CAP) -> dict[str, Any]:
    """A read-only query's rows as JSON values, at most `limit` (capped to `ROW_CAP`)."""
    import duckdb

    cap = max(1, min(int(limit), ROW_CAP))
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        raise UsageError(f"the query does not parse: {_first_line(exc)}") from None
    if len(statements) != 1:
        raise UsageError("send one statement per call")
    kind = statements[0].type.name
    if kind not in ALLOWED:
        raise UsageError(f"only SELECT queries run here (this is {kind}): the dataset is read-only")
    try:
        relation = con.execute(query)
        columns = [d[0] for d in relation.description or []]
        rows = relation.fetchmany(cap + 1)
    except duckdb.Error as exc:
        raise UsageError(f"the query failed: {_first_line(exc)}") from None
    return {
        "columns": columns,
        "rows": [[jsonable(v) for v in row] for row in rows[:cap]],
        "capped": len(rows) > cap,
        "note": f"the first {cap} rows; narrow the query or aggregate" if len(rows) > cap else "",
    }


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _day(name: str, value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        raise UsageError(f"{name} {value!r} is not a date (YYYY-MM-DD)") from None


def server(dataset: Path) -> MCPServer[Any]:
    """The MCP server of one dataset (its tools bound to one locked connection)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from traceidx.analysis.evidence import inspect_record
    from traceidx.analysis.query import VIEWS, view_summary
    from traceidx.analysis.reports import REPORTS, params, report_summary, run_report
    from traceidx.analysis.search import COLUMNS, Query, search
    from traceidx.domain.model import COLUMN_DOCS, DERIVED_COLUMNS

    con = locked_connection(dataset)
    app: MCPServer[Any] = MCPServer(
        "traceidx",
        instructions=(
            "Coding-agent traces as a queryable dataset: sessions, loops, model calls with "
            "cost, tool calls, shell commands. Use `schema` for the views, `sql` for a SELECT, "
            "`report` for the common questions, `search` for text, `inspect` for evidence."
        ),
    )

    def refuse(exc: Exception) -> ToolError:
        return ToolError(str(exc))

    @app.tool()
    def sql(query: str, limit: int = 200) -> dict[str, Any]:
        """Run one read-only SELECT over the views (see `schema`); rows capped at 500."""
        try:
            return run_sql(con, query, limit)
        except TraceidxError as exc:
            raise refuse(exc) from None

    @app.tool()
    def report(
        name: str,
        since: str | None = None,
        until: str | None = None,
        runtimes: list[str] | None = None,
        models: list[str] | None = None,
        period: str | None = None,
        group_by: list[str] | None = None,
        timezone: str = "UTC",
        limit: int = 200,
    ) -> dict[str, Any]:
        """A report as JSON rows: usage, models, projects, sessions, subagents, tools,
        slowest or prices (see `traceidx report --help`)."""
        if name not in REPORTS:
            raise ToolError(f"no report named {name!r}; reports: {', '.join(REPORTS)}")
        try:
            p = params(
                since=since,
                until=until,
                runtimes=runtimes,
                models=models,
                period=period,
                group_by=group_by,
                timezone=timezone,
                limit=max(1, min(limit, ROW_CAP)),
            )
            relation = run_report(con, name, p)
            columns = list(relation.columns)
            rows = relation.fetchall()
        except Exception as exc:  # a report's error is the caller's to read
            raise refuse(exc) from None
        return {
            "report": name,
            "about": report_summary(name),
            "columns": columns,
            "rows": [[jsonable(v) for v in row] for row in rows],
        }

    @app.tool()
    def schema() -> dict[str, Any]:
        """The views, each with what it holds and its columns with their meanings."""
        out: dict[str, Any] = {}
        for view in VIEWS:
            docs = {**COLUMN_DOCS.get(view, {}), **DERIVED_COLUMNS.get(view, {})}
            described = con.execute(f"DESCRIBE {view}").fetchall()
            out[view] = {
                "about": view_summary(view),
                "columns": [
                    {"name": c[0], "type": c[1], "meaning": docs.get(c[0], "")} for c in described
                ],
            }
        return out

    @app.tool()
    def inspect(record_id: int) -> dict[str, Any]:
        """A record's raw evidence, re-read from its source and checked against its
        fingerprint (ids as `search` and `sql` return them)."""
        info = inspect_record(con, record_id)
        if info is None:
            raise ToolError(f"record {record_id} is not in the dataset")
        return info

    @app.tool(name="search")
    def search_text(
        text: str,
        regex: bool = False,
        runtimes: list[str] | None = None,
        roles: list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        """Items whose published text matches (every word, any case; or a regex), newest
        first, with their session, snippet and the record id to `inspect`."""
        try:
            q = Query(
                text,
                regex=regex,
                runtimes=tuple(runtimes or ()),
                roles=tuple(roles or ()),
                since=_day("since", since),
                until=_day("until", until),
                limit=max(1, min(limit, ROW_CAP)),
            )
            rows = search(con, q)
        except Exception as exc:
            raise refuse(exc) from None
        return {"columns": list(COLUMNS), "rows": [[jsonable(v) for v in r] for r in rows]}

    return app


def main(dataset: Path) -> int:
    """Serve the dataset over stdio until the client closes it."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError("traceidx mcp needs the mcp extra: pip install 'traceidx[mcp]'") from None
    server(dataset).run("stdio")
    return 0
