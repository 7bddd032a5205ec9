"""Mistral Vibe: a session folder read as one source, per-call usage only where the journal
kept it, the session total as session-level usage (counted once by the usage report), and
the 1.x/2.x folders (hand-made ``legacy-document-*`` fixtures of the documented shape).

The generated sessions against their ground truth: ``tests/corpus/test_expect.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import traceidx
from tests.support.facts import dict_rows
from tests.support.files import fixture_path
from traceidx.analysis.evidence import inspect_record
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.sources.discover import discover

GENERATED = fixture_path("generated", "vibe")
LEGACY = fixture_path("handwritten", "vibe")
MULTI_TURN = "c6158f5c-8607-ea43-0903-b46b2bbeab70"
CHILD = "child-018aa6f87ac8d70c26f2eb57"


def _built(paths: list[Path], dataset: Path) -> Any:
    report = build(paths, dataset, jobs=1)
    assert report.exit_code == 0, [(r.locator, r.reason) for r in report.results]
    return connect(dataset)


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _built([GENERATED, LEGACY], tmp_path_factory.mktemp("vibe") / "ds")


def test_a_session_folder_is_one_source_and_its_journal_no_other() -> None:
    found = discover([GENERATED])
    locators = [c.locator for c in found.candidates]
    assert len(locators) == 4 and all(loc.endswith("/") for loc in locators)
    assert not any("journal" in loc for loc in locators)


def test_usage_per_call_only_for_turns_the_journal_holds_whole(con: Any) -> None:
    """Of a resumed session, only the last run's turn has calls; the others none, and the
    session's total is its session usage."""
    rows = dict_rows(
        con,
        "SELECT l.session_position, count(c.call_id) AS calls, l.usage FROM loops l "
        "JOIN sessions s USING (session_id) LEFT JOIN model_calls c USING (loop_id) "
        f"WHERE s.native_id = '{MULTI_TURN}' GROUP BY ALL ORDER BY 1",
    )
    assert [(r["calls"], r["usage"] is None) for r in rows] == [(0, True), (0, True), (1, False)]
    session = dict_rows(con, f"SELECT * FROM sessions WHERE native_id = '{MULTI_TURN}'")[0]
    assert session["session_usage"]["input"] == 28919
    assert session["session_usage"]["output"] == 1659
    assert session["session_usage_model"] == "mock-gpt-4.1"


def test_the_usage_report_counts_each_session_total_once(con: Any, tmp_path: Path) -> None:
    """The report's tokens are every session's total: its calls plus what the total exceeds
    them by, never both, never spread (no call or loop is added for it)."""
    truth = json.loads((GENERATED / "expect.json").read_text("utf-8"))
    sessions = dict_rows(con, "SELECT native_id, session_usage FROM sessions")
    want = {m: sum(s["session_usage"][m] for s in sessions) for m in ("input", "output")}
    stated = sum(s["session_token_usage"]["input"] for s in truth["sessions"])
    assert want["input"] == stated + 5210  # the generated sessions' totals, and the legacy one
    dataset = tmp_path / "ds"
    _built([GENERATED, LEGACY], dataset).close()
    report = traceidx.report("usage", dataset, period="month")
    assert int(report["input"].sum()) == want["input"]
    assert int(report["output"].sum()) == want["output"]
    calls = dict_rows(con, "SELECT count(*) AS n FROM model_calls WHERE usage IS NOT NULL")
    assert int(report["calls"].sum()) == calls[0]["n"]


def test_a_subagent_is_linked_to_the_parent_that_spawned_it(con: Any) -> None:
    child = dict_rows(con, f"SELECT * FROM sessions WHERE native_id = '{CHILD}'")[0]
    assert child["delegated_from"] is not None
    assert child["task"]["value"].startswith("Ticket T-799")
    roles = dict_rows(
        con,
        "SELECT semantic.role AS role FROM items WHERE semantic.role IN "
        f"('agent.delegation', 'subagent.report') AND linked_session_id = {child['session_id']}",
    )
    assert sorted(r["role"] for r in roles) == ["agent.delegation", "subagent.report"]


def test_a_folder_record_is_read_again_from_its_member(con: Any) -> None:
    rows = dict_rows(
        con,
        "SELECT r.record_id, r.json_path FROM records r JOIN sources s USING (source_id) "
        "WHERE s.runtime = 'vibe' AND (r.json_path LIKE 'journal/%' OR r.json_path LIKE "
        "'chunks/%]') LIMIT 20",
    )
    assert rows
    for row in rows:
        info = inspect_record(con, row["record_id"])
        assert info is not None and info["verification"] == "verified", info


def test_a_legacy_session_publishes_its_totals_as_session_usage_only(con: Any) -> None:
    session = dict_rows(con, "SELECT * FROM sessions WHERE native_id LIKE '4f2a9c1e-%'")[0]
    assert session["session_usage"] == {
        "input": 5210,
        "output": 412,
        "cached": 2048,
        "cache_write": None,
        "reasoning": None,
    }
    assert session["session_usage_model"] == "mistral-vibe-cli-latest"
    calls = dict_rows(
        con, f"SELECT count(*) AS n FROM model_calls WHERE session_id = {session['session_id']}"
    )
    assert calls[0]["n"] == 0  # never spread over calls
    items = dict_rows(
        con,
        "SELECT semantic.role AS role FROM items WHERE session_id = "
        f"{session['session_id']} ORDER BY loop_position",
    )
    roles = [i["role"] for i in items]
    assert roles[0] == "human.request" and roles[-1] == "agent.final_answer"
    assert "agent.tool_call.shell" in roles and "tool.output" in roles


def test_a_changed_folder_is_read_again(tmp_path: Path) -> None:
    """A line appended to a journal segment changes the folder's stamp: the next build
    re-reads the session (and only then)."""
    copy = tmp_path / "vibe"
    shutil.copytree(GENERATED, copy)
    dataset = tmp_path / "ds"
    build([copy], dataset, jobs=1)
    again = build([copy], dataset, jobs=1)
    assert again.exit_code == 0 and again.actions["unchanged"] == 4
    segment = next(copy.rglob("journal/*.jsonl"))
    with segment.open("ab") as out:
        out.write(b'{"sequence":999,"type":"receipt_succeeded","payload":{}}\n')
    third = build([copy], dataset, jobs=1)
    assert third.exit_code == 0
    assert (third.actions["rewritten"], third.actions["unchanged"]) == (1, 3)
