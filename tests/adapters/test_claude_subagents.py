"""Claude Code subagents followed end to end, on a dataset built from every Claude trace at hand.

The committed fixtures (``tests/fixtures/generated/claude``, ``tests/fixtures/handwritten/claude``),
or with the shared corpus its ``generated/claude`` and ``public/claude`` instead of the committed
copies. What holds over the whole dataset:

* a child the parent names (its Agent/Task result's ``agentId``) is linked from exactly one
  ``agent.delegation``, its parent's; no session holds a copy of a delegation of itself;
* every delegation comes from a delegating call: the same record supports an Agent/Task
  ``agent.tool_call``, which is a ``tool_calls`` row; each report or activity a call's result
  yields sits beside that call's ``tool.output`` (so the row has its output);
* reports and activity name the child session whenever the parent names one in the dataset;
* inline sidechain work (Claude Code 1.0.x) is not the parent agent's: no Loop holds both a
  human request and work of a sidechain record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import dict_rows
from tests.support.files import CORPUS, FIXTURES, WITH_CORPUS
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build


def _sidechain(line: str) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("isSidechain") is True


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Any:
    roots = [FIXTURES / "handwritten" / "claude"]
    if WITH_CORPUS and (CORPUS / "generated" / "claude").is_dir():
        roots += [CORPUS / "generated" / "claude", CORPUS / "public" / "claude"]
    else:
        roots += [FIXTURES / "generated" / "claude"]
    dataset = tmp_path_factory.mktemp("claude-subagents") / "dataset"
    report = build([r for r in roots if r.is_dir()], dataset, jobs=1)
    assert report.exit_code == 0, [r.reason for r in report.results if r.state == "failed"]
    connection = connect(dataset)
    yield connection
    connection.close()


def test_each_named_child_is_delegated_once_by_its_parent(con: Any) -> None:
    rows = dict_rows(
        con,
        """SELECT c.native_id, c.session_id, p.session_id AS parent,
                  list(i.session_id) FILTER (WHERE i.item_id IS NOT NULL) AS by
           FROM sessions c
           JOIN sessions p ON p.session_id = c.delegated_from.session_id
           LEFT JOIN items i ON i.semantic.delegation.child_session_id = c.session_id
           WHERE EXISTS (SELECT 1 FROM items n WHERE n.session_id = p.session_id
                         AND n.semantic.role IN ('subagent.report', 'subagent.activity')
                         AND n.linked_session_id = c.session_id)
           GROUP BY ALL""",
    )
    assert len(rows) >= (8 if WITH_CORPUS else 2), rows  # fjord and zephyr at least
    wrong = [r["native_id"] for r in rows if r["by"] != [r["parent"]]]
    assert not wrong, f"children not delegated exactly once, by their parent: {wrong}"
    own = dict_rows(
        con,
        "SELECT item_id FROM items WHERE semantic.role = 'agent.delegation' "
        "AND linked_session_id = session_id",
    )
    assert own == []


def test_delegation_calls_are_tool_calls_with_their_outputs(con: Any) -> None:
    delegations = dict_rows(
        con,
        """SELECT d.item_id,
                  (SELECT list(t.tool_name) FROM tool_calls t JOIN items c USING (item_id)
                   WHERE c.record_ids = d.record_ids) AS calls
           FROM items d WHERE d.semantic.role = 'agent.delegation'""",
    )
    assert len(delegations) >= (20 if WITH_CORPUS else 4)
    assert all(d["calls"] in (["Agent"], ["Task"]) for d in delegations), delegations
    # every report/activity from a call's result sits beside that call's output
    results = dict_rows(
        con,
        """SELECT r.item_id, t.tool_name, t.output_count, t.output_item_id = o.item_id AS same,
                  o.semantic.tool_output.duration_ms AS duration_ms
           FROM items r
           JOIN items o ON o.record_ids = r.record_ids AND o.semantic.role = 'tool.output'
           LEFT JOIN tool_calls t ON t.item_id = o.semantic.tool_output.call_item_id
           WHERE r.semantic.role IN ('subagent.report', 'subagent.activity')""",
    )
    assert len(results) >= (20 if WITH_CORPUS else 4)
    wrong = [
        r
        for r in results
        if r["tool_name"] not in ("Agent", "Task") or r["output_count"] != 1 or not r["same"]
    ]
    assert not wrong
    # foreground results report their duration
    assert sum(r["duration_ms"] is not None for r in results) >= (15 if WITH_CORPUS else 3)


def test_reports_name_the_child_the_parent_names(con: Any) -> None:
    unnamed = dict_rows(
        con,
        """SELECT item_id FROM items
           WHERE semantic.role IN ('subagent.report', 'subagent.activity')
             AND linked_session_id IN (SELECT session_id FROM sessions)
             AND coalesce(semantic.subagent_report.source_session_id,
                          semantic.subagent_activity.subagent_session_id) IS NULL""",
    )
    assert unnamed == []


def test_inline_sidechain_work_is_not_the_parent_agents(con: Any) -> None:
    """Each Loop holds either the parent agent's work or one sidechain's, never both."""
    rows = dict_rows(
        con,
        """SELECT i.loop_id, src.locator, r.source_position AS line
           FROM items i JOIN records r ON r.record_id = i.record_ids[1]
           JOIN sources src ON src.source_id = r.source_id
           JOIN sessions s ON s.session_id = i.session_id
           WHERE i.loop_id IS NOT NULL AND s.delegated_from IS NULL""",
    )
    sidechain: dict[str, set[int]] = {}
    for locator in {r["locator"] for r in rows}:
        lines = Path(locator).read_text("utf-8").splitlines()
        sidechain[locator] = {n for n, line in enumerate(lines) if _sidechain(line)}
    kinds: dict[int, set[bool]] = {}
    for row in rows:
        kinds.setdefault(row["loop_id"], set()).add(row["line"] in sidechain[row["locator"]])
    assert sum(True in k for k in kinds.values()) >= (8 if WITH_CORPUS else 2)
    assert not [loop for loop, k in kinds.items() if k == {True, False}]
