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
from tests.support.facts import decoded_records, dict_rows
from tests.support.files import CORPUS, WITH_CORPUS, fixture_path
from traceidx.adapters import detect
from traceidx.analysis.evidence import inspect_record
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.sources.discover import discover

GENERATED = fixture_path("generated", "vibe")
LEGACY = fixture_path("handwritten", "vibe")
MULTI_TURN = "c6158f5c-8607-ea43-0903-b46b2bbeab70"
CHILD = "child-018aa6f87ac8d70c26f2eb57"
#: sessions of the shared corpus only: reasoning, a failed turn (HTTP 503), a saved tool result
REASONING = "9e4565e8-4281-4911-db76-22ca85b88744"
FAILED = "2237be26-b2a5-ed21-2a72-74283ab6f16f"
LONG_OUTPUT = "0d7c7532-24df-6645-02f4-1151067a2102"


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


def test_a_member_of_a_session_folder_alone_is_no_trace(tmp_path: Path) -> None:
    """A journal segment or a 1.x/2.x ``messages.jsonl`` read alone is claimed by no adapter
    (their records say nothing without the folder); named explicitly, it indexes nothing."""
    members = sorted(GENERATED.rglob("journal/*.jsonl")) + sorted(LEGACY.rglob("messages.jsonl"))
    members = [p for p in members if p.stat().st_size]
    assert len(members) >= 4
    for path in members:
        head = [v for _, values in decoded_records(path)[:32] for v in values]
        assert head and detect(head) is None, path
    report = build(members, tmp_path / "ds", jobs=1)
    assert {r.runtime for r in report.results} == {None}
    assert all(r.state != "indexed" for r in report.results)


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


def test_a_subagent_report_is_stated_by_the_runtime_state_at_its_completion(con: Any) -> None:
    """The child's answer comes from the parent's runtime-state, at the time it states the
    child's outcome completed (a time the runtime-state record carries, not the spawn's)."""
    rows = dict_rows(
        con,
        "SELECT i.occurred_at AS at, r.occurred_at AS record_at, r.json_path, i.record_ids "
        "FROM items i JOIN records r ON r.record_id = i.record_ids[1] "
        "WHERE i.semantic.role = 'subagent.report'",
    )
    assert len(rows) == 1 and len(rows[0]["record_ids"]) == 1
    assert rows[0]["json_path"].endswith("/runtime-state.json")
    assert rows[0]["at"] == rows[0]["record_at"]
    assert int(rows[0]["at"].timestamp() * 1000) == 1796655025895  # completed_at_unix_ms


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if not WITH_CORPUS:
        pytest.skip("the shared corpus is not at hand")
    root = CORPUS / "generated" / "vibe" / "s1" / "logs" / "session" / "unified"
    folders = [root / REASONING, root / FAILED, root / LONG_OUTPUT]
    return _built(folders, tmp_path_factory.mktemp("vibe-corpus") / "ds")


def _items(con: Any, native: str, role: str) -> list[dict[str, Any]]:
    return dict_rows(
        con,
        "SELECT any_value(i.semantic) AS semantic, any_value(i.occurred_at) AS at, "
        "any_value(i.record_ids) AS record_ids, "
        "list(r.json_path ORDER BY list_position(i.record_ids, r.record_id)) AS paths "
        "FROM items i JOIN sessions s USING (session_id) "
        "JOIN records r ON list_contains(i.record_ids, r.record_id) "
        f"WHERE s.native_id = '{native}' AND i.semantic.role = '{role}' "
        "GROUP BY i.item_id ORDER BY any_value(i.loop_id), any_value(i.loop_position)",
    )


def test_reasoning_entries_are_reasoning_items(corpus: Any) -> None:
    items = _items(corpus, REASONING, "agent.reasoning")
    texts = [i["semantic"]["reasoning"]["text"]["value"] for i in items]
    assert texts[0] == "**Deciding next step**" and len(texts) == 3
    assert {i["semantic"]["reasoning"]["representation"] for i in items} == {"full"}


def test_a_failed_turn_notice_is_stated_by_the_projection_snapshot(corpus: Any) -> None:
    (notice,) = _items(corpus, FAILED, "runtime.notice")
    assert "503 Service Unavailable" in notice["semantic"]["text"]["text"]["value"]
    assert notice["paths"][0].endswith("/projection-state.json")
    assert int(notice["at"].timestamp() * 1000) == 1796654439141  # the snapshot's updatedAt


def test_a_saved_tool_result_supports_the_output_beside_its_effect(corpus: Any) -> None:
    outputs = [o for o in _items(corpus, LONG_OUTPUT, "tool.output") if len(o["record_ids"]) > 1]
    assert len(outputs) == 1
    (saved,) = outputs
    assert sorted(p.split("/")[0] for p in saved["paths"]) == ["chunks", "tool-results"]
    assert saved["semantic"]["tool_output"]["exit_code"] == 0
    assert saved["at"] is not None


def test_every_report_counts_a_session_total_once(tmp_path: Path) -> None:
    """models, projects, sessions and prices count what a session's total exceeds its calls by
    as the usage report does: the same tokens in all, unpriced, and none left out."""
    dataset = tmp_path / "ds"
    _built([GENERATED, LEGACY], dataset).close()
    usage = traceidx.report("usage", dataset, group_by=("runtime", "model"))
    total = int(usage["total"].sum())
    sessions = traceidx.report("sessions", dataset)
    assert int(sessions["tokens"].sum()) == total
    projects = traceidx.report("projects", dataset)
    assert int(projects["tokens"].sum()) == total
    beyond = int(sessions["session_tokens"].sum())
    assert int(projects["session_tokens"].sum()) == beyond > 5622  # the legacy total and more
    for name in ("models", "prices"):
        assert int(traceidx.report(name, dataset)["session_tokens"].sum()) == beyond, name
    prices = traceidx.report("prices", dataset)
    assert int(prices["total"].sum()) + beyond == total  # the calls' tokens, and the rest
    legacy = sessions.filter(sessions["native_id"].str.starts_with("4f2a9c1e-"))
    assert legacy["tokens"].to_list() == [5210 + 412] == legacy["session_tokens"].to_list()
