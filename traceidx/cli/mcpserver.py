"""`traceidx mcp`: the dataset as a Model Context Protocol server over stdio, read-only.

Built on the official `mcp` SDK (the ``mcp`` extra). Tools: ``sql`` (a SELECT over the views,
rows capped and the cap said), ``report`` (any report with its parameters, as JSON rows),
``schema`` (views, columns, meanings), ``inspect`` (a record's raw evidence, verified) and
``search`` (`analysis.search`). The server can never write, read a file outside the dataset,
attach a database, install or load an extension or reach the network, whatever SQL it is
sent: only SELECT statements run, on a DuckDB connection whose views are defined first and
whose file access is then limited to the dataset's folder, external access and extensions
off, and its configuration locked. Each refusal is a tool error; the server keeps answering.

A call's query is stopped by DuckDB's own interrupt once it has run the time limit (`Limits`),
and the queries share a memory limit and never spill to disk; the calls take the connection
one at a time, so a stopped query frees it for the next. Ids leave as strings
(`traceidx.analysis.rows.portable`: JavaScript clients hold JSON numbers as doubles), and
`inspect` takes a record id as a string or an integer.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from traceidx.analysis.rows import MAX_EXACT, portable
from traceidx.errors import TraceidxError, UsageError

if TYPE_CHECKING:
    import duckdb
    from mcp.server.mcpserver import MCPServer

#: the most rows one tool call returns (the call says when it cut the result)
ROW_CAP = 500
#: the statements a query may hold
ALLOWED = frozenset({"SELECT", "EXPLAIN"})
#: how long one call's query may run, in seconds, unless the command line or
#: ``TRACEIDX_MCP_TIMEOUT`` says otherwise
TIMEOUT_S = 30.0
#: the most memory the queries may take together, unless the command line or
#: ``TRACEIDX_MCP_MEMORY_LIMIT`` says otherwise
MEMORY_LIMIT = "1GB"

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Limits:
    """What the calls may spend: seconds per call, memory for all of them (a DuckDB size)."""

    timeout: float = TIMEOUT_S
    memory: str = MEMORY_LIMIT


def limits(timeout: float | None = None, memory: str | None = None) -> Limits:
    """The limits given (the command line's), else the environment's, else the defaults."""
    if timeout is None:
        text = os.environ.get("TRACEIDX_MCP_TIMEOUT", "").strip()
        if text:
            try:
                timeout = float(text)
            except ValueError:
                timeout = 0.0
            if not 0 < timeout < float("inf"):
                raise UsageError(
                    f"TRACEIDX_MCP_TIMEOUT={text!r} is not a number of seconds above 0"
                )
    memory = memory or os.environ.get("TRACEIDX_MCP_MEMORY_LIMIT", "").strip() or MEMORY_LIMIT
    return Limits(timeout or TIMEOUT_S, memory)


def locked_connection(dataset: Path, memory: str = MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """A connection with the dataset's views and nothing else it could reach, its queries held
    to `memory` and never spilled to disk."""
    import duckdb

    from traceidx.analysis.query import connect

    con = connect(dataset)
    try:
        con.execute("SET memory_limit = ?", [memory])
    except duckdb.Error:
        raise UsageError(
            f"memory limit {memory!r} is not a size (e.g. 512MB, 2GB); set --memory-limit or "
            "TRACEIDX_MCP_MEMORY_LIMIT"
        ) from None
    con.execute("SET temp_directory = ''")
    folder = str(dataset.resolve()) + "/"
    con.execute("SET allowed_directories = [?]", [folder])
    con.execute("SET enable_external_access = false")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET lock_configuration = true")
    return con


class Calls:
    """The tool calls' use of one connection: one call at a time, each stopped by DuckDB's own
    interrupt (from a timer thread, never a thread kill) once it has run the time limit."""

    def __init__(self, con: duckdb.DuckDBPyConnection, limits: Limits) -> None:
        self.con = con
        self.limits = limits
        self._turn = threading.Lock()

    def run(self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """`work` on the connection, stopped after the time limit; a query stopped, or
        refused for memory, is a `UsageError` that says which limit and what to do."""
        import duckdb

        with self._turn:
            finished, stopped = threading.Event(), threading.Event()

            def stop() -> None:
                """Once the time is up, interrupt until the work ends (a call of several
                statements is stopped whichever of them runs)."""
                if finished.wait(self.limits.timeout):
                    return
                stopped.set()
                while not finished.is_set():
                    self.con.interrupt()
                    finished.wait(0.05)

            timer = threading.Thread(target=stop, name="traceidx-mcp-timer", daemon=True)
            timer.start()
            try:
                return work(self.con)
            except duckdb.OutOfMemoryException as exc:
                raise UsageError(
                    f"the query needs more memory than the server's limit of "
                    f"{self.limits.memory} ({_first_line(exc)}); narrow it or aggregate "
                    "(traceidx mcp --memory-limit, TRACEIDX_MCP_MEMORY_LIMIT)"
                ) from None
            except Exception:
                if stopped.is_set():
                    raise UsageError(
                        f"the query was stopped after {self.limits.timeout:g} s, the server's "
                        "time limit for one call (traceidx mcp --timeout, "
                        "TRACEIDX_MCP_TIMEOUT); narrow it or aggregate, then call again"
                    ) from None
                raise
            finally:
                finished.set()
                timer.join()  # no interrupt can reach the next call's query


def row_limit(limit: int) -> int:
    """A call's row limit: at least 1 (else refused), at most `ROW_CAP`."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise UsageError(f"limit must be a whole number of at least 1 (it was {limit!r})")
    return min(limit, ROW_CAP)


def run_sql(con: duckdb.DuckDBPyConnection, query: str, limit: int = ROW_CAP) -> dict[str, Any]:
    """A read-only query's rows as JSON values (ids as strings), at most `limit` (capped to
    `ROW_CAP`). A stopped query and one refused for memory raise DuckDB's own errors (for
    `Calls` to explain)."""
    import duckdb

    cap = row_limit(limit)
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
    except (duckdb.InterruptException, duckdb.OutOfMemoryException):
        raise
    except duckdb.Error as exc:
        raise UsageError(f"the query failed: {_first_line(exc)}") from None
    return {
        "columns": columns,
        "rows": [portable_row(columns, row) for row in rows[:cap]],
        "capped": len(rows) > cap,
        "note": f"the first {cap} rows; narrow the query or aggregate" if len(rows) > cap else "",
    }


def portable_row(columns: list[str], row: tuple[Any, ...]) -> list[Any]:
    """A row as a reply carries it to any client: ids, and integers beyond 2**53, as strings."""
    return [portable(v, c) for c, v in zip(columns, row, strict=True)]


def record_of(con: duckdb.DuckDBPyConnection, given: str | int) -> tuple[int, str]:
    """The record id a client sent, and a note when it had to be recovered.

    A string holds the id's digits. An integer above 2**53 that names no record most likely
    reached us as a JSON number a client held as a double, rounded: the one record whose id
    rounds to the same double is the one it read (a note says so); none or several is an
    error that asks for the id as a string."""
    if isinstance(given, str):
        text = given.strip().strip('"').replace(",", "").replace("_", "")
        if not text.isdigit():
            raise UsageError(
                f"record_id {given!r} is not a record id: send its digits as a string, as "
                "`search` and `sql` return it"
            )
        return int(text), ""
    if abs(given) <= MAX_EXACT:
        return given, ""
    if con.execute("SELECT count(*) FROM records WHERE record_id = ?", [given]).fetchall()[0][0]:
        return given, ""
    found = con.execute(
        "SELECT record_id FROM records WHERE record_id::DOUBLE = ?", [float(given)]
    ).fetchall()
    if not found:
        return given, ""
    if len(found) > 1:
        raise UsageError(
            f"record_id {given} came as a JSON number above 2**53, rounded on the way, and "
            f"{len(found)} records round to it: send the id as a string, as `search` and `sql` "
            "return it"
        )
    rid = int(found[0][0])
    return rid, (
        f"record_id {given} came as a JSON number above 2**53, rounded on the way; record "
        f"{rid} is the only one whose id rounds to it. Send ids as strings."
    )


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _day(name: str, value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        raise UsageError(f"{name} {value!r} is not a date (YYYY-MM-DD)") from None


def server(dataset: Path, limits: Limits | None = None) -> MCPServer[Any]:
    """The MCP server of one dataset (its tools bound to one locked connection)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from traceidx.analysis.evidence import inspect_record
    from traceidx.analysis.query import VIEWS, view_summary
    from traceidx.analysis.reports import REPORTS, params, report_summary, run_report
    from traceidx.analysis.search import COLUMNS, Query, search
    from traceidx.domain.columns import COLUMN_DOCS, DERIVED_COLUMNS

    limits = limits or Limits()
    calls = Calls(locked_connection(dataset, limits.memory), limits)
    app: MCPServer[Any] = MCPServer(
        "traceidx",
        instructions=(
            "Coding-agent traces as a queryable dataset: sessions, loops, model calls with "
            "cost, tool calls, shell commands. Use `schema` for the views, `sql` for a SELECT, "
            "`report` for the common questions, `search` for text, `inspect` for evidence. "
            "Ids are strings of digits; pass them back as strings."
        ),
    )

    def tool(name: str | None = None) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Register a tool, described by its docstring on one line."""

        def register(fn: Callable[..., T]) -> Callable[..., T]:
            app.tool(name=name, description=" ".join((fn.__doc__ or "").split()))(fn)
            return fn

        return register

    def refuse(exc: Exception) -> ToolError:
        return ToolError(str(exc))

    @tool()
    def sql(query: str, limit: int = 200) -> dict[str, Any]:
        """Run one read-only SELECT over the views (see `schema`); rows capped at 500, ids as
        strings."""
        try:
            return calls.run(lambda con: run_sql(con, query, limit))
        except TraceidxError as exc:
            raise refuse(exc) from None

    @tool()
    def report(
        name: str,
        since: str | None = None,
        until: str | None = None,
        runtimes: list[str] | None = None,
        models: list[str] | None = None,
        period: str | None = None,
        group_by: list[str] | None = None,
        timezone: str | None = None,
        limit: int = 200,
    ) -> dict[str, Any]:
        """A report as JSON rows: usage, models, projects, sessions, subagents, tools,
        slowest or prices (see `traceidx report --help`); dates and periods in `timezone`
        (an IANA zone; default: this machine's, as the command line)."""
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
                limit=row_limit(limit),
            )

            def answer(con: duckdb.DuckDBPyConnection) -> tuple[list[str], list[Any]]:
                relation = run_report(con, name, p)
                return list(relation.columns), relation.fetchall()

            columns, rows = calls.run(answer)
        except Exception as exc:  # a report's error is the caller's to read
            raise refuse(exc) from None
        return {
            "report": name,
            "about": report_summary(name),
            "timezone": p.timezone,
            "columns": columns,
            "rows": [portable_row(columns, row) for row in rows],
        }

    @tool()
    def schema() -> dict[str, Any]:
        """The views, each with what it holds and its columns with their meanings."""

        def describe(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for view in VIEWS:
                docs = {**COLUMN_DOCS.get(view, {}), **DERIVED_COLUMNS.get(view, {})}
                described = con.execute(f"DESCRIBE {view}").fetchall()
                out[view] = {
                    "about": view_summary(view),
                    "columns": [
                        {"name": c[0], "type": c[1], "meaning": docs.get(c[0], "")}
                        for c in described
                    ],
                }
            return out

        return calls.run(describe)

    @tool()
    def inspect(record_id: str | int) -> dict[str, Any]:
        """A record's raw evidence, re-read from its source and checked against its
        fingerprint. `record_id` as `search` and `sql` return it: a string of digits (an
        integer is taken too)."""

        def evidence(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            rid, note = record_of(con, record_id)
            info = inspect_record(con, rid)
            if info is None:
                beyond = (
                    "; an id above 2**53 sent as a JSON number is rounded on the way: send "
                    "it as a string"
                    if isinstance(record_id, int) and abs(record_id) > MAX_EXACT
                    else ""
                )
                raise UsageError(f"record {record_id} is not in the dataset{beyond}")
            reply: dict[str, Any] = portable(info)
            if note:
                reply["note"] = note
            return reply

        try:
            return calls.run(evidence)
        except TraceidxError as exc:
            raise refuse(exc) from None

    @tool(name="search")
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
        first, with their session, snippet and the record id to `inspect` (ids as strings)."""
        try:
            q = Query(
                text,
                regex=regex,
                runtimes=tuple(runtimes or ()),
                roles=tuple(roles or ()),
                since=_day("since", since),
                until=_day("until", until),
                limit=row_limit(limit),
            )
            rows = calls.run(lambda con: search(con, q))
        except Exception as exc:
            raise refuse(exc) from None
        return {"columns": list(COLUMNS), "rows": [portable_row(list(COLUMNS), r) for r in rows]}

    return app


def main(dataset: Path, limits: Limits | None = None) -> int:
    """Serve the dataset over stdio until the client closes it."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError("traceidx mcp needs the mcp extra: pip install 'traceidx[mcp]'") from None
    server(dataset, limits).run("stdio")
    return 0
