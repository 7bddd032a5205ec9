"""Every invariant of the contract, checked over a dataset of every trace at hand (conftest)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.support.files import WITH_CORPUS
from traceidx.analysis.query import connect
from traceidx.domain.model import LOOP_BOUND_ROLES
from traceidx.domain.text import DEFAULT_TEXT_LIMIT
from traceidx.runtimes import RUNTIMES as REGISTRY
from traceidx.runtimes import names as runtime_names
from traceidx.sources.folder import is_folder, read_member
from traceidx.sources.frame import fingerprint
from traceidx.sources.rowsource import read_row
from traceidx.sources.sourceio import read_range
from traceidx.tables.schema import SHAPE_BY_ROLE, SHAPES


@pytest.fixture(scope="module")
def con(traces_dataset: Path) -> duckdb.DuckDBPyConnection:
    return connect(traces_dataset)


def none(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Assert that a query returns no rows (it selects the violations)."""
    bad = con.execute(sql).fetchall()
    assert bad == [], f"{len(bad)} violations, e.g. {bad[:3]}"


def _least(runtime: str) -> tuple[int, int, int, int]:
    """What a runtime has at least in the dataset (sources, sessions, loops, items): the
    sessions and loops its ground truth states (``expect.json`` of each of its folders of the
    generated set at hand), a source per session it states (a database holds several, so one
    at least), an item per loop (the prompt that opens it)."""
    from tests.support.expect import expect

    sessions = loops = 0
    for folder in REGISTRY[runtime].fixtures:
        truth = expect(folder)
        assert truth is not None, f"{runtime}: no expect.json in {folder}"
        sessions += len(truth["sessions"])
        loops += sum(len(session["loops"]) for session in truth["sessions"])
    sources = 1 if REGISTRY[runtime].database is not None else sessions
    return sources, sessions, loops, loops


@pytest.mark.parametrize("runtime", runtime_names())
def test_every_supported_runtime_is_in_the_dataset(
    con: duckdb.DuckDBPyConnection, runtime: str
) -> None:
    (sources, sessions, loops, items) = con.execute(
        """SELECT (SELECT count(*) FROM sources WHERE runtime = $rt),
                  (SELECT count(*) FROM sessions WHERE runtime = $rt),
                  (SELECT count(*) FROM loops JOIN sessions USING (session_id) WHERE runtime = $rt),
                  (SELECT count(*) FROM items JOIN sessions USING (session_id) WHERE runtime = $rt)
        """,
        {"rt": runtime},
    ).fetchall()[0]
    counts = (sources, sessions, loops, items)
    least = _least(runtime)
    assert least[1] >= 3 and least[2] >= 3, (runtime, least)  # a ground truth worth the name
    assert all(n >= m for n, m in zip(counts, least, strict=True)), (counts, least)


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ("sources", "source_id"),
        ("records", "record_id"),
        ("sessions", "session_id"),
        ("loops", "loop_id"),
        ("items", "item_id"),
    ],
)
def test_ids_are_unique(con: duckdb.DuckDBPyConnection, table: str, column: str) -> None:
    none(con, f"SELECT {column}, count(*) FROM {table} GROUP BY 1 HAVING count(*) > 1")


def test_every_record_reference_exists(con: duckdb.DuckDBPyConnection) -> None:
    refs = """
        SELECT unnest(record_ids) AS rid, 'item' AS what FROM items
        UNION ALL SELECT start_record_id, 'loop start' FROM loops
        UNION ALL SELECT "end".record_id, 'loop end' FROM loops WHERE "end" IS NOT NULL
        UNION ALL SELECT identity_record_id, 'session identity' FROM sessions
        UNION ALL SELECT delegated_from.record_id, 'delegation' FROM _sessions
            WHERE delegated_from IS NOT NULL
    """
    none(con, f"SELECT * FROM ({refs}) WHERE rid NOT IN (SELECT record_id FROM records)")
    none(con, "SELECT item_id FROM items WHERE len(record_ids) = 0")


def test_records_are_dense_ordered_and_disjoint(con: duckdb.DuckDBPyConnection) -> None:
    none(
        con,
        """SELECT source_id FROM records GROUP BY source_id
           HAVING min(source_position) <> 0 OR max(source_position) <> count(*) - 1""",
    )
    none(  # lines follow each other
        con,
        """SELECT * FROM (
             SELECT content_range.start AS s, content_range."end" AS e,
                    lag(content_range."end") OVER (PARTITION BY source_id
                                                   ORDER BY source_position) AS prev_end
             FROM records WHERE json_path IS NULL) WHERE e < s OR s <= prev_end""",
    )
    none(  # a document's elements follow each other inside the document's record ($, first)
        con,
        """SELECT * FROM (
             SELECT source_position AS p, json_path, content_range.start AS s,
                    content_range."end" AS e,
                    first(content_range) OVER w AS whole,
                    lag(content_range."end") OVER w AS prev_end
             FROM records WHERE json_path IS NOT NULL
                AND source_id NOT IN (SELECT source_id FROM sources WHERE locator LIKE '%/')
             WINDOW w AS (PARTITION BY source_id ORDER BY source_position))
           WHERE (p = 0 AND json_path <> '$')
              OR (p > 0 AND (s < whole.start OR e > whole."end" OR e < s
                             OR (p > 1 AND s <= prev_end)))""",
    )
    folders = r"""SELECT source_id, source_position AS p, json_path,
                        regexp_replace(json_path, '\[[0-9]+\]$', '') AS member,
                        content_range.start AS s, content_range."end" AS e
                 FROM records
                 WHERE source_id IN (SELECT source_id FROM sources WHERE locator LIKE '%/')"""
    none(  # a session folder's records each name their member; a member's are read in one run
        con,
        f"""SELECT source_id, member FROM ({folders}) GROUP BY ALL
            HAVING bool_or(json_path IS NULL) OR max(p) - min(p) <> count(*) - 1""",
    )
    none(  # inside its member, a folder's records follow each other
        con,
        f"""SELECT * FROM (
              SELECT *, lag(e) OVER (PARTITION BY source_id, member ORDER BY p) AS prev_end
              FROM ({folders})) WHERE s < 0 OR e < s OR s <= prev_end""",
    )


def test_record_fingerprints_match_the_source_bytes(con: duckdb.DuckDBPyConnection) -> None:
    sample = con.execute(
        """SELECT s.locator, r.content_range.start, r.content_range."end", r.fingerprint,
                  r.json_path, r.row.table, r.row.key
           FROM records r JOIN sources s USING (source_id)
           QUALIFY row_number() OVER (PARTITION BY s.runtime, s.compression
                                      ORDER BY r.record_id) <= 150"""
    ).fetchall()
    for locator, start, end, expected, json_path, table, key in sample:
        # a database source's row is read again by its key (its framed line, sources.rowsource);
        # a session folder's record from the member its JSON path names (sources.folder)
        if table:
            data = read_row(locator, table, key)
        elif is_folder(locator):
            data = read_member(locator, json_path, start, end)
        else:
            data = read_range(locator, start, end)
        assert fingerprint(data) == expected and len(data) == end - start
        assert (
            json_path is not None or b"\n" not in data
        )  # a line or a row; a document's element spans lines
    assert any(is_folder(row[0]) for row in sample)  # session folders are sampled too


def test_every_source_supports_one_session(con: duckdb.DuckDBPyConnection) -> None:
    none(
        con,
        """SELECT source_id FROM sources WHERE duplicate_of IS NULL AND source_id NOT IN
           (SELECT unnest(source_ids) FROM sessions)""",
    )
    none(con, "SELECT session_id FROM sessions WHERE len(source_ids) = 0")


def test_a_copy_names_a_counted_source_and_publishes_nothing_else(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """A copy (the same records collected twice) counts once: as its original."""
    none(
        con,
        """SELECT c.source_id FROM sources c LEFT JOIN sources o ON o.source_id = c.duplicate_of
           WHERE c.duplicate_of IS NOT NULL
             AND (o.source_id IS NULL OR o.duplicate_of IS NOT NULL OR o.runtime <> c.runtime)""",
    )
    copies = "(SELECT source_id FROM sources WHERE duplicate_of IS NOT NULL)"
    for table in ("records", "loops", "items"):
        none(con, f"SELECT source_id FROM {table} WHERE source_id IN {copies}")
    none(con, f"SELECT session_id FROM sessions WHERE list_has_any(source_ids, ARRAY{copies})")


def test_loop_positions_are_dense_from_zero(con: duckdb.DuckDBPyConnection) -> None:
    none(
        con,
        """SELECT session_id FROM loops GROUP BY session_id
           HAVING min(session_position) <> 0 OR max(session_position) <> count(*) - 1
               OR count(DISTINCT session_position) <> count(*)""",
    )
    none(
        con,
        """SELECT loop_id FROM items WHERE loop_id IS NOT NULL GROUP BY loop_id
           HAVING min(loop_position) <> 0 OR max(loop_position) <> count(*) - 1
               OR count(DISTINCT loop_position) <> count(*)""",
    )
    none(con, "SELECT item_id FROM items WHERE loop_id IS NULL AND loop_position IS NOT NULL")


def test_loop_positions_follow_start_times(con: duckdb.DuckDBPyConnection) -> None:
    """A session spread over several sources still has its loops in time order."""
    none(
        con,
        """SELECT a.session_id, a.loop_id, b.loop_id FROM loops a JOIN loops b
             ON a.session_id = b.session_id AND a.session_position < b.session_position
           WHERE a.started_at > b.started_at""",
    )


def test_items_and_their_loops_agree_on_the_session(con: duckdb.DuckDBPyConnection) -> None:
    none(
        con,
        """SELECT i.item_id FROM items i JOIN loops l USING (loop_id)
           WHERE i.session_id <> l.session_id""",
    )
    none(con, "SELECT item_id FROM items WHERE loop_id NOT IN (SELECT loop_id FROM loops)")
    none(con, "SELECT loop_id FROM loops WHERE session_id NOT IN (SELECT session_id FROM sessions)")


def test_loop_bound_roles_have_a_loop(con: duckdb.DuckDBPyConnection) -> None:
    roles = ", ".join(f"'{r}'" for r in sorted(LOOP_BOUND_ROLES))
    none(con, f"SELECT item_id FROM items WHERE semantic.role IN ({roles}) AND loop_id IS NULL")


def test_exactly_one_value_shape_matches_the_role(con: duckdb.DuckDBPyConnection) -> None:
    set_count = " + ".join(f"(semantic.{s} IS NOT NULL)::INT" for s in SHAPES)
    none(con, f"SELECT item_id FROM items WHERE {set_count} <> 1")
    for role, shape in SHAPE_BY_ROLE.items():
        none(
            con,
            f"SELECT item_id FROM items WHERE semantic.role = '{role}' "
            f"AND semantic.{shape} IS NULL",
        )
    roles = ", ".join(f"'{r}'" for r in SHAPE_BY_ROLE)
    none(con, f"SELECT item_id FROM items WHERE semantic.role NOT IN ({roles})")
    none(
        con,
        """SELECT item_id FROM items
           WHERE semantic.evidence_strength NOT IN ('structural', 'heuristic')""",
    )


def test_usage_follows_the_subset_rules(con: duckdb.DuckDBPyConnection) -> None:
    none(
        con,
        """SELECT loop_id FROM loops WHERE usage IS NOT NULL AND (
             usage.input IS NULL OR usage.output IS NULL OR usage.input < 0 OR usage.output < 0
             OR usage.cached > usage.input OR usage.cache_write > usage.input
             OR usage.reasoning > usage.output)""",
    )


def test_loop_end_and_model_are_well_formed(con: duckdb.DuckDBPyConnection) -> None:
    none(
        con,
        """SELECT loop_id FROM loops WHERE "end" IS NOT NULL AND ("end".record_id IS NULL
           OR coalesce("end".outcome, 'completed') NOT IN ('completed','interrupted','failed'))""",
    )
    none(con, "SELECT loop_id FROM loops WHERE model IS NOT NULL AND coalesce(model.id, '') = ''")


def test_no_text_outside_its_bound(con: duckdb.DuckDBPyConnection) -> None:
    texts = """
        SELECT item_id, semantic.text.text AS t FROM items
        UNION ALL SELECT item_id, semantic.reasoning.text FROM items
        UNION ALL SELECT item_id, semantic.tool_output.text FROM items
        UNION ALL SELECT item_id, semantic.delegation.text FROM items
        UNION ALL SELECT item_id, semantic.compaction.summary FROM items
        UNION ALL SELECT item_id, semantic.instruction.text FROM items
        UNION ALL SELECT item_id, semantic.context.text FROM items
        UNION ALL SELECT item_id, unnest(semantic.tool_call.shell_fragments).text FROM items
    """
    none(
        con,
        f"""SELECT item_id FROM ({texts}) WHERE t IS NOT NULL AND (
              octet_length(encode(t.value)) > {DEFAULT_TEXT_LIMIT}
              OR octet_length(encode(t.value)) > t.full_bytes
              OR (t.full_bytes <= {DEFAULT_TEXT_LIMIT}
                  AND octet_length(encode(t.value)) <> t.full_bytes))""",
    )
    truncated = con.execute(
        f"SELECT count(*) FROM ({texts}) WHERE t.full_bytes > {DEFAULT_TEXT_LIMIT}"
    ).fetchall()[0][0]
    assert truncated > 0  # the corpus has outputs over 64 KiB: the bound is exercised


def test_reasoning_text_presence_follows_representation(con: duckdb.DuckDBPyConnection) -> None:
    none(
        con,
        """SELECT item_id FROM items WHERE semantic.role = 'agent.reasoning' AND (
             (semantic.reasoning.representation = 'unavailable'
              AND semantic.reasoning.text IS NOT NULL)
             OR (semantic.reasoning.representation <> 'unavailable'
              AND coalesce(semantic.reasoning.text.full_bytes, 0) = 0))""",
    )


def test_shell_calls_have_fragments_and_outputs_link_calls(
    con: duckdb.DuckDBPyConnection,
) -> None:
    none(
        con,
        """SELECT item_id FROM items WHERE semantic.role = 'agent.tool_call.shell'
           AND coalesce(len(semantic.tool_call.shell_fragments), 0) = 0""",
    )
    none(
        con,
        """SELECT o.item_id FROM items o LEFT JOIN items c
             ON c.item_id = o.semantic.tool_output.call_item_id
           WHERE o.semantic.tool_output.call_item_id IS NOT NULL AND (c.item_id IS NULL
             OR c.session_id <> o.session_id
             OR c.semantic.role NOT IN ('agent.tool_call', 'agent.tool_call.shell'))""",
    )
    linked = con.execute(
        "SELECT count(*) FROM items WHERE semantic.tool_output.call_item_id IS NOT NULL"
    ).fetchall()[0][0]
    assert linked > (1000 if WITH_CORPUS else 150)  # outputs of the committed fixtures alone: 162+


def test_session_references_resolve_to_existing_sessions(con: duckdb.DuckDBPyConnection) -> None:
    refs = """
        SELECT semantic.delegation.child_session_id AS sid FROM items
        UNION ALL SELECT semantic.subagent_activity.subagent_session_id FROM items
        UNION ALL SELECT semantic.subagent_report.source_session_id FROM items
        UNION ALL SELECT delegated_from.session_id FROM sessions
        UNION ALL SELECT forked_from.session_id FROM sessions
    """
    none(
        con,
        f"SELECT sid FROM ({refs}) WHERE sid IS NOT NULL "
        "AND sid NOT IN (SELECT session_id FROM sessions)",
    )
    delegated = con.execute(
        "SELECT count(*) FROM sessions WHERE delegated_from IS NOT NULL"
    ).fetchall()[0][0]
    assert delegated >= (10 if WITH_CORPUS else 5)  # subagent transcripts link to their parents


def test_times_are_runtime_times_not_index_times(con: duckdb.DuckDBPyConnection) -> None:
    none(con, "SELECT item_id FROM items WHERE occurred_at > now()")
    none(
        con,
        """SELECT i.item_id FROM items i JOIN records r ON r.record_id = i.record_ids[1]
           WHERE i.occurred_at IS NOT NULL AND r.occurred_at IS NULL""",
    )


def test_members_with_a_default_are_never_missing(con: duckdb.DuckDBPyConnection) -> None:
    """has_images is always present where its shape is; every source states its compression."""
    for shape in ("text", "delegation", "subagent_activity", "subagent_report", "context"):
        roles = ", ".join(f"'{r}'" for r, s in SHAPE_BY_ROLE.items() if s == shape)
        none(
            con,
            f"SELECT item_id FROM items WHERE semantic.role IN ({roles}) "
            f"AND semantic.{shape}.has_images IS NULL",
        )
    none(con, "SELECT source_id FROM sources WHERE compression IS NULL")
