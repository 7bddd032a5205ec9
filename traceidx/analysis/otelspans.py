"""The dataset's facts as OpenTelemetry span rows: which sessions, loops, billed model calls,
tool calls and delegations an export covers, streamed from DuckDB in Arrow batches.

`traceidx.analysis.otel` turns each row into an OTLP span. The scope is the reports' scope
(`traceidx.analysis.reports.prepare`: ``--since/--until`` in a timezone, ``--runtime``,
``--model``) plus ``--project`` and, for ``--since-last``, the sessions whose sources changed
since the previous export. A session is in scope when any of its loops, billed calls or tool
calls is, or, when no model is asked for, when it has none of them and its runtime, project
and creation date are in scope (a session without a creation date only when no date bound is
given). Delegations follow their loop (or, outside any loop, their session).

Every row carries the times the records state and nothing else; a session's own bounds are its
creation time (else its earliest known fact time) and its latest known fact time, computed over
all of its facts so that a session's span is the same whatever the scope.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

#: rows per Arrow batch read from DuckDB
BATCH_ROWS = 4096

_SCOPE = """
CREATE OR REPLACE TEMP TABLE otel_session_scope AS
SELECT d.session_id, d.runtime, d.project, d.created_at
FROM session_dimensions AS d
WHERE (getvariable('projects') IS NULL OR list_contains(getvariable('projects'), d.project))
  AND (getvariable('changed') IS NULL
       OR d.session_id IN (
           SELECT session_id FROM (SELECT session_id, unnest(source_ids) AS source_id
                                   FROM _sessions)
           WHERE source_id IN (SELECT source_id FROM otel_changed)));

CREATE OR REPLACE TEMP TABLE otel_calls AS
SELECT c.call_id, c.session_id, c.loop_id, epoch_ms(c.occurred_at) AS occurred_ms,
       c.model, c.provider,
       c.input, c.cached, c.cache_write, c.output, c.reasoning, c.cost_usd,
       m.outcome, m.record_ids
FROM report_model_calls AS c
JOIN otel_session_scope USING (session_id)
JOIN model_calls AS m USING (call_id);

CREATE OR REPLACE TEMP TABLE otel_tools AS
SELECT c.item_id, c.session_id, c.loop_id, c.tool_name, c.kind, c.exit_code, c.failed,
       c.duration_ms, c.elapsed_ms, c.output_count, c.output_item_id,
       epoch_ms(c.started_at) AS started_ms
FROM report_calls AS c
JOIN otel_session_scope USING (session_id);

CREATE OR REPLACE TEMP TABLE otel_delegations AS
SELECT i.item_id, i.session_id, i.loop_id, epoch_ms(i.occurred_at) AS occurred_ms,
       i.record_ids,
       i.semantic.delegation.agent_type AS agent_type,
       coalesce(i.semantic.delegation.child_session_id, i.linked_session_id)
           AS child_session_id
FROM items AS i
JOIN otel_session_scope USING (session_id)
WHERE i.semantic.role = 'agent.delegation'
  AND (i.loop_id IN (SELECT loop_id FROM report_loops)
       OR (i.loop_id IS NULL AND getvariable('models') IS NULL
           AND (getvariable('runtimes') IS NULL
                OR list_contains(getvariable('runtimes'), otel_session_scope.runtime))
           AND (getvariable('since') IS NULL OR timezone(getvariable('tz'), i.occurred_at)
                >= getvariable('since')::TIMESTAMP)
           AND (getvariable('until') IS NULL OR timezone(getvariable('tz'), i.occurred_at)
                < getvariable('until')::TIMESTAMP + INTERVAL 1 DAY)));

CREATE OR REPLACE TEMP TABLE otel_loops AS
SELECT l.loop_id, l.session_id, l.model.id AS model, epoch_ms(l.started_at) AS started_ms,
       epoch_ms(l.ended_at) AS ended_ms, l."end".outcome AS outcome,
       l.start_record_id, l."end".record_id AS end_record_id
FROM loops AS l
WHERE l.loop_id IN (
    SELECT loop_id FROM report_loops JOIN otel_session_scope USING (session_id)
    UNION SELECT loop_id FROM otel_calls UNION SELECT loop_id FROM otel_tools
);

CREATE OR REPLACE TEMP TABLE otel_sessions AS
WITH spanned AS (
    SELECT session_id FROM otel_loops UNION SELECT session_id FROM otel_calls
    UNION SELECT session_id FROM otel_tools UNION SELECT session_id FROM otel_delegations
    UNION SELECT session_id FROM report_session_excess JOIN otel_session_scope USING (session_id)
),
bare AS (  -- sessions with no loop, billed call or tool call at all
    SELECT s.session_id FROM otel_session_scope AS s
    WHERE getvariable('models') IS NULL
      AND (getvariable('runtimes') IS NULL
           OR list_contains(getvariable('runtimes'), s.runtime))
      AND (getvariable('since') IS NULL OR timezone(getvariable('tz'), s.created_at)
           >= getvariable('since')::TIMESTAMP)
      AND (getvariable('until') IS NULL OR timezone(getvariable('tz'), s.created_at)
           < getvariable('until')::TIMESTAMP + INTERVAL 1 DAY)
      AND s.session_id NOT IN (SELECT session_id FROM _loops)
      AND s.session_id NOT IN (SELECT session_id FROM priced_calls)
      AND s.session_id NOT IN (SELECT session_id FROM tool_calls)
)
SELECT session_id FROM spanned UNION SELECT session_id FROM bare;

-- each session's bounds: its creation time or earliest known fact time, its latest one
CREATE OR REPLACE TEMP TABLE otel_session_times AS
WITH times AS (
    SELECT session_id, min(t) AS first_at, max(t) AS last_at FROM (
        SELECT session_id, started_at AS t FROM _loops
        UNION ALL SELECT session_id, ended_at FROM _loops
        UNION ALL SELECT session_id, occurred_at FROM _model_calls
        UNION ALL SELECT session_id, occurred_at FROM _items
    ) WHERE t IS NOT NULL AND session_id IN (SELECT session_id FROM otel_sessions)
    GROUP BY session_id
)
SELECT d.session_id, d.runtime, s.native_id,
    epoch_ms(least(d.created_at, t.first_at)) AS start_ms,
    epoch_ms(greatest(d.created_at, t.last_at)) AS end_ms
FROM session_dimensions AS d
JOIN otel_sessions USING (session_id)
JOIN (SELECT session_id, any_value(native_id) AS native_id FROM _sessions GROUP BY 1) AS s
    USING (session_id)
LEFT JOIN times AS t USING (session_id);
"""

#: the session rows: identity and lineage, and what the session's own usage total exceeds its
#: billed calls by (a runtime that keeps one: the usage report counts it the same way)
_SESSIONS = """
SELECT s.session_id, s.runtime, s.native_id, s.identity_record_id, s.name,
       s.working_directory, s.project, s.branch, s.forked_from.session_id AS forked_from,
       t.start_ms, t.end_ms, x.model AS excess_model, x.input AS excess_input,
       x.cached AS excess_cached, x.output AS excess_output
FROM sessions AS s
JOIN otel_session_times AS t USING (session_id)
LEFT JOIN report_session_excess AS x USING (session_id)
"""

#: what a span without a time of its own is placed at: its loop's start, else its session's
_PLACED = """coalesce(epoch_ms(pl.started_at), pt.start_ms) AS placed_ms, pt.runtime,
    pt.native_id"""
_PLACED_JOINS = """
LEFT JOIN _loops AS pl ON pl.loop_id = {alias}.loop_id
LEFT JOIN otel_session_times AS pt ON pt.session_id = {alias}.session_id"""
_LOOPS = """
SELECT l.*, t.start_ms AS placed_ms, t.runtime, t.native_id FROM otel_loops AS l
JOIN otel_session_times AS t USING (session_id)"""
_CALLS = f"SELECT c.*, {_PLACED} FROM otel_calls AS c{_PLACED_JOINS.format(alias='c')}"
_TOOLS = (
    """
WITH programs AS (
    SELECT item_id, list(program ORDER BY fragment_position, statement_position) AS programs
    FROM shell_invocations
    WHERE item_id IN (SELECT item_id FROM otel_tools) AND program IS NOT NULL
    GROUP BY item_id
)
SELECT t.*, p.programs, """
    + _PLACED
    + """{content_columns}
FROM otel_tools AS t
LEFT JOIN programs AS p USING (item_id)"""
    + _PLACED_JOINS.format(alias="t")
    + "{content_joins}"
)
_TOOL_CONTENT_COLUMNS = (
    ", c.semantic.tool_call.arguments AS arguments, o.semantic.tool_output.text.value AS result"
)
_TOOL_CONTENT_JOINS = (
    "\nLEFT JOIN items AS c ON c.item_id = t.item_id"
    "\nLEFT JOIN items AS o ON o.item_id = t.output_item_id"
)
_DELEGATIONS = (
    "SELECT d.*, "
    + _PLACED
    + "{content_columns} FROM otel_delegations AS d"
    + _PLACED_JOINS.format(alias="d")
    + "{content_joins}"
)
_DELEGATION_CONTENT_COLUMNS = ", i.semantic.delegation.text.value AS task"
_DELEGATION_CONTENT_JOINS = "\nLEFT JOIN items AS i ON i.item_id = d.item_id"
#: a loop's requests and final answer (only with --content)
_LOOP_CONTENT = """
SELECT l.*, t.start_ms AS placed_ms, t.runtime, t.native_id, x.requests, x.answers
FROM otel_loops AS l
JOIN otel_session_times AS t USING (session_id)
LEFT JOIN (
    SELECT loop_id,
        list(semantic.text.text.value ORDER BY loop_position)
            FILTER (WHERE semantic.role IN ('human.request', 'human.steering')) AS requests,
        list(semantic.text.text.value ORDER BY loop_position)
            FILTER (WHERE semantic.role = 'agent.final_answer') AS answers
    FROM items
    WHERE loop_id IN (SELECT loop_id FROM otel_loops)
      AND semantic.role IN ('human.request', 'human.steering', 'agent.final_answer')
      AND semantic.text.text.value IS NOT NULL
    GROUP BY loop_id
) AS x USING (loop_id)
"""

#: the links that place a session under another: the delegation that linked it (the parent's
#: item), else the session it states it was delegated from
_LINEAGE = """
SELECT s.session_id, s.delegated_from.session_id AS parent_session_id, d.item_id, d.session_id
FROM sessions AS s
LEFT JOIN (
    SELECT child, link.item_id, link.session_id
    FROM (
        SELECT coalesce(semantic.delegation.child_session_id, linked_session_id) AS child,
               -- the delegation that resolved the link first, then the latest
               arg_max({'item_id': item_id, 'session_id': session_id},
                       [(semantic.delegation.child_session_id IS NOT NULL)::BIGINT,
                        coalesce(epoch_ms(occurred_at), -1), item_id]) AS link
        FROM items
        WHERE semantic.role = 'agent.delegation' AND session_id <> coalesce(
            semantic.delegation.child_session_id, linked_session_id)
        GROUP BY 1
    )
) AS d ON d.child = s.session_id
WHERE s.delegated_from IS NOT NULL OR d.item_id IS NOT NULL
"""


@dataclass(frozen=True, slots=True)
class Scope:
    """What an export covers beside the reports' parameters: projects, and (``--since-last``)
    the sources whose sessions are new or changed (None: every session)."""

    projects: tuple[str, ...] = ()
    sources: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Lineage:
    """Where each linked session hangs: the delegation item (and its session) that linked it,
    else the session it was delegated from."""

    delegation: dict[int, tuple[int, int]]
    delegated_from: dict[int, int]

    def parent_session(self, session_id: int) -> int | None:
        """The session whose trace this one joins (None for a root)."""
        link = self.delegation.get(session_id)
        return link[1] if link else self.delegated_from.get(session_id)

    def root(self, session_id: int) -> int:
        """The session at the top of this one's chain: itself when nothing delegated to it;
        in a chain that comes back on itself, the smallest session id of the circle."""
        path = [session_id]
        seen = {session_id: 0}
        while (parent := self.parent_session(path[-1])) is not None:
            if parent in seen:
                return min(path[seen[parent] :])
            seen[parent] = len(path)
            path.append(parent)
        return path[-1]


def prepare(con: duckdb.DuckDBPyConnection, params: Any, scope: Scope) -> Lineage:
    """Define the export's scope on a connection (after `traceidx.connect`) and read the
    lineage of the dataset's sessions."""
    from traceidx.analysis.reports import prepare as prepare_reports

    prepare_reports(con, replace(params, group_by=("runtime", "project")))
    if scope.projects:
        con.execute("SET VARIABLE projects = ?::VARCHAR[]", [list(scope.projects)])
    else:
        con.execute("SET VARIABLE projects = NULL")
    con.execute(
        "CREATE OR REPLACE TEMP TABLE otel_changed AS SELECT unnest(?::BIGINT[]) AS source_id",
        [list(scope.sources or ())],
    )
    con.execute(f"SET VARIABLE changed = {'NULL' if scope.sources is None else 'true'}")
    for statement in _SCOPE.split(";"):
        if statement.strip():
            con.execute(statement)
    delegation: dict[int, tuple[int, int]] = {}
    delegated_from: dict[int, int] = {}
    for child, parent, item_id, item_session in con.execute(_LINEAGE).fetchall():
        if item_id is not None and item_session != child:
            delegation[child] = (item_id, item_session)
        if parent is not None and parent != child:
            delegated_from[child] = parent
    return Lineage(delegation, delegated_from)


def counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """How many spans of each kind the prepared scope holds."""
    row = con.execute(
        "SELECT (SELECT count(*) FROM otel_sessions), (SELECT count(*) FROM otel_loops), "
        "(SELECT count(*) FROM otel_calls), (SELECT count(*) FROM otel_tools), "
        "(SELECT count(*) FROM otel_delegations)"
    ).fetchall()[0]
    return dict(zip(("session", "loop", "model_call", "tool_call", "delegation"), row, strict=True))


def rows(
    con: duckdb.DuckDBPyConnection, kind: str, content: bool = False
) -> Iterator[list[dict[str, Any]]]:
    """The rows of one kind of span, batch by batch (Arrow record batches from DuckDB)."""
    if kind == "session":
        sql = _SESSIONS
    elif kind == "loop":
        sql = _LOOP_CONTENT if content else _LOOPS
    elif kind == "model_call":
        sql = _CALLS
    elif kind == "tool_call":
        sql = _TOOLS.format(
            content_columns=_TOOL_CONTENT_COLUMNS if content else "",
            content_joins=_TOOL_CONTENT_JOINS if content else "",
        )
    elif kind == "delegation":
        sql = _DELEGATIONS.format(
            content_columns=_DELEGATION_CONTENT_COLUMNS if content else "",
            content_joins=_DELEGATION_CONTENT_JOINS if content else "",
        )
    else:
        raise ValueError(f"no span kind {kind!r}")
    # in a fixed order (a trace's spans together, then by id): the same export, the same file
    key = {
        "session": "session_id",
        "loop": "loop_id",
        "model_call": "call_id",
        "tool_call": "item_id",
        "delegation": "item_id",
    }[kind]
    ordered = f"SELECT * FROM ({sql}) ORDER BY session_id, {key}"
    reader: Any = con.sql(ordered).to_arrow_reader(BATCH_ROWS)
    for batch in reader:
        if batch.num_rows:
            yield batch.to_pylist()
