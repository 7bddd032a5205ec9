"""dsh subagents followed end to end, on a dataset built from the dsh traces at hand.

The committed fixtures (``tests/fixtures/generated/dsh``, ``tests/fixtures/data/dsh``) and, when
present, the shared corpus's ``generated/dsh`` and ``public/dsh``. What is checked:

* a parent's log names a child it created in a ``subagent/catalog`` record or in the result of
  a background ``subagent`` call (``started subagent <id>``); every child so named whose
  Session is in the dataset is linked from exactly one delegation, in that parent, and no
  delegation links a child its parent's log does not name;
* no child publishes a copy of its task as a second delegation: a delegation never links the
  Session it is in, and each child is linked from at most one delegation of the dataset;
* delegating calls are tool calls: each delegation shares its record with a ``subagent*`` row of
  ``tool_calls``, whose output is the ``tool.output`` beside the report or activity;
* a report or activity from a call that names its child names that child as its source.

A parent whose log does not name its child (foreground calls before dsh wrote
``subagent/catalog``, e.g. 0.1.0-rc.8 and the v0 snapshots) links nothing: the child's header
(``parentSession``) links the Sessions (``delegated_from``), not the call.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.support.facts import decoded_records, dict_rows
from tests.support.files import CORPUS, DATA, FIXTURES, WITH_CORPUS
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.pipeline.publish import prune

_STARTED = re.compile(r"started subagent (\S+)")
DELEGATING = ("subagent", "subagent_fork", "subagent_codex", "subagent_claude_code")


def _roots(shared: bool) -> list[Path]:
    # the committed generated traces are copies of the corpus's: one or the other
    generated = CORPUS / "generated" / "dsh" if shared else FIXTURES / "generated" / "dsh"
    roots = [generated, DATA / "dsh"]
    return [*roots, CORPUS / "public" / "dsh"] if shared else roots


@pytest.fixture(scope="module", params=["committed", "with-corpus"])
def built(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[duckdb.DuckDBPyConnection, bool]:
    shared = request.param == "with-corpus"
    if shared and not WITH_CORPUS:
        pytest.skip("the shared corpus is not available")
    dataset = tmp_path_factory.mktemp(f"dsh-subagents-{request.param}")
    report = build(_roots(shared), dataset, jobs=1)
    assert report.exit_code == 0
    return connect(dataset), shared


def _named_children(con: duckdb.DuckDBPyConnection) -> dict[int, set[str]]:
    """source id -> the children the parent log names (read from the files)."""
    named: dict[int, set[str]] = defaultdict(set)
    sources = dict_rows(con, "SELECT source_id, locator FROM sources WHERE runtime = 'dsh'")
    for row in sources:
        for _, objs in decoded_records(Path(row["locator"])):
            for obj in objs:
                if not isinstance(obj, dict):
                    continue
                data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
                if obj.get("type") == "subagent/catalog" and isinstance(data.get("childId"), str):
                    named[row["source_id"]].add(data["childId"])
                message = data.get("message") if isinstance(data.get("message"), dict) else {}
                if obj.get("type") == "tool/result":
                    for block in _blocks(message.get("content")):
                        started = _STARTED.fullmatch(str(block.get("text", "")))
                        if started:
                            named[row["source_id"]].add(started.group(1))
    return named


def _blocks(content: Any) -> list[dict[str, Any]]:
    out = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool-result":
            out += _blocks(block.get("content"))
        elif isinstance(block, dict):
            out.append(block)
    return out


def test_every_named_child_is_linked_from_one_delegation_of_its_parent(
    built: tuple[duckdb.DuckDBPyConnection, bool],
) -> None:
    con, shared = built
    named = _named_children(con)
    sessions = {r["native_id"]: r["session_id"] for r in dict_rows(con, "FROM sessions")}
    links: dict[int, list[int]] = defaultdict(list)  # child -> the sources whose delegation link it
    for row in dict_rows(
        con,
        """SELECT source_id, semantic.delegation.child_session_id AS child
           FROM items WHERE semantic.role = 'agent.delegation'
             AND semantic.delegation.child_session_id IS NOT NULL""",
    ):
        links[row["child"]].append(row["source_id"])
    naming: dict[int, set[int]] = defaultdict(set)  # child -> the sources whose log names it
    for source, children in named.items():
        for child in children:
            if child in sessions:
                naming[sessions[child]].add(source)
    # a child named in several sources (fixtures reusing one fixed id) is linked from one
    for child, sources in naming.items():
        assert len(links[child]) == 1 and links[child][0] in sources, (child, links[child])
    # every other link is a match: the delegation's task is the one the child received, and
    # the delegation is in the parent the child's header names; read per source (_sessions),
    # since fixtures reusing one fixed id merge several children into one `sessions` row
    matched = dict_rows(
        con,
        """SELECT DISTINCT i.semantic.delegation.child_session_id AS child
           FROM items i JOIN _sessions c ON c.session_id = i.semantic.delegation.child_session_id
           WHERE i.semantic.role = 'agent.delegation' AND i.linked_session_id IS NULL
             AND i.session_id = c.delegated_from.session_id
             AND i.semantic.delegation.text = c.task""",
    )
    assert {r["child"] for r in matched} == set(links) - set(naming)
    assert all(len(sources) == 1 for sources in links.values())
    # committed: the background child of s1-pebble and the two catalogued fixture children;
    # the corpus adds s1-tundra's background child and the public background fixtures
    assert len(naming) >= (5 if shared else 3)
    # the corpus: the foreground children of s1-sierra and the v0 snapshots, matched on their task
    assert len(matched) >= (9 if shared else 0)
    # and each such child's header names that parent (unless fixtures reusing one fixed id made
    # several sources one Session: its links come from one of them)
    rows = dict_rows(con, "SELECT session_id, source_ids, delegated_from FROM sessions")
    session_of = {source: r["session_id"] for r in rows for source in r["source_ids"]}
    parent_of = {r["session_id"]: (r["delegated_from"] or {}).get("session_id") for r in rows}
    merged = {r["session_id"] for r in rows if len(r["source_ids"]) > 1}
    for child, (source,) in links.items():
        if child not in merged and session_of[source] not in merged:
            assert parent_of[child] == session_of[source], (source, child)


def test_no_child_publishes_a_second_delegation(
    built: tuple[duckdb.DuckDBPyConnection, bool],
) -> None:
    con, shared = built
    assert not dict_rows(
        con,
        """SELECT item_id FROM items WHERE semantic.role = 'agent.delegation'
           AND (semantic.delegation.child_session_id = session_id
                OR linked_session_id = session_id)""",
    )
    per_child = dict_rows(
        con,
        """SELECT semantic.delegation.child_session_id AS child, count(*) AS n,
                  count(DISTINCT session_id) AS parents
           FROM items WHERE semantic.role = 'agent.delegation'
             AND semantic.delegation.child_session_id IS NOT NULL GROUP BY 1""",
    )
    for row in per_child:
        # the public snapshots reuse fixed ids (11111111-…, 33333333-…) in unrelated fixtures,
        # whose sources then make one Session: one delegation per source there
        assert row["n"] == 1 or shared, row
    # a child's task opens its Loop as a Record: every child turn is still a Loop
    assert not dict_rows(
        con,
        """SELECT c.session_id FROM sessions c WHERE c.delegated_from IS NOT NULL
           AND c.runtime = 'dsh' AND NOT EXISTS
               (SELECT 1 FROM loops l WHERE l.session_id = c.session_id)
           AND EXISTS (SELECT 1 FROM records r WHERE r.source_id = c.source_ids[1]
                       AND r.native_type = 'turn/start')""",
    )


def test_delegating_calls_are_tool_calls_with_their_outputs(
    built: tuple[duckdb.DuckDBPyConnection, bool],
) -> None:
    con, _ = built
    rows = dict_rows(
        con,
        """SELECT d.item_id, d.session_id, t.item_id AS call_id, t.tool_name, t.output_item_id,
                  t.failed, o.record_ids AS output_records
           FROM items d
           LEFT JOIN items c ON c.source_id = d.source_id AND c.loop_id = d.loop_id
                AND c.loop_position = d.loop_position - 1
                AND c.record_ids[1] = d.record_ids[1]
                AND c.semantic.role = 'agent.tool_call'
           LEFT JOIN tool_calls t ON t.item_id = c.item_id
           LEFT JOIN items o ON o.item_id = t.output_item_id
           WHERE d.semantic.role = 'agent.delegation'""",
    )
    assert rows
    calls = Counter(row["item_id"] for row in rows)
    assert set(calls.values()) == {1}, "each delegation right after its call"
    for row in rows:
        assert row["tool_name"] in DELEGATING, row
    answered = [row for row in rows if row["output_item_id"] is not None]
    assert len(answered) >= len(rows) - 1  # every committed call has its result
    # the output's record is the report's (or activity's): one record, two items
    for row in answered:
        beside = dict_rows(
            con,
            f"""SELECT semantic.role AS role,
                       coalesce(semantic.subagent_report.source_session_id,
                                semantic.subagent_activity.subagent_session_id) AS source
                FROM items WHERE session_id = {row["session_id"]}
                  AND record_ids[1] = {row["output_records"][0]}
                  AND semantic.role IN ('subagent.report', 'subagent.activity')""",
        )
        assert len(beside) == 1, row
        # the child the delegation links, or (a fixed id several fixtures reuse: the link
        # kept by another delegation) the one the call states
        link = dict_rows(
            con,
            f"""SELECT coalesce(semantic.delegation.child_session_id,
                               (SELECT session_id FROM sessions
                                WHERE session_id = linked_session_id)) AS child
                FROM items WHERE item_id = {row["item_id"]}""",
        )[0]["child"]
        assert beside[0]["source"] == link, row


def _sierra_links(dataset: Path) -> list[dict[str, Any]]:
    con = connect(dataset)
    try:
        return dict_rows(
            con,
            """SELECT (SELECT native_id FROM sessions s
                       WHERE s.session_id = i.semantic.delegation.child_session_id) AS child,
                      (SELECT native_id FROM sessions s WHERE s.session_id = coalesce(
                           r.semantic.subagent_report.source_session_id,
                           r.semantic.subagent_activity.subagent_session_id)) AS source
               FROM items i, items r
               WHERE i.semantic.role = 'agent.delegation'
                 AND r.semantic.role IN ('subagent.report', 'subagent.activity')""",
        )
    finally:
        con.close()


def test_a_matched_child_is_linked_whichever_side_a_build_reads_first(tmp_path: Path) -> None:
    """The foreground child of s1-sierra (its parent's log never names it) is linked on its
    task once both Sessions are in the dataset, and unlinked when the child's file goes."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "generated" / "dsh" / "s1-sierra" / "sessions", home)
    project = home / "--home-dev-projects-sierra--"
    child = project / "64d8d709-28e7-44c3-926d-f878477c60c3"
    aside = tmp_path / "aside"
    shutil.move(child, aside)
    dataset = tmp_path / "dataset"
    assert build([home], dataset, jobs=1).exit_code == 0
    assert _sierra_links(dataset) == [{"child": None, "source": None}]  # parent alone
    shutil.move(aside, child)
    assert build([home], dataset, jobs=1).exit_code == 0  # only the child is new
    native = "64d8d709-28e7-44c3-926d-f878477c60c3"
    linked = [{"child": native, "source": native}]
    assert _sierra_links(dataset) == linked
    assert build([home], dataset, jobs=1).exit_code == 0  # nothing new: the link stays
    assert _sierra_links(dataset) == linked
    shutil.rmtree(child)
    prune(dataset)
    assert _sierra_links(dataset) == [{"child": None, "source": None}]
