"""Codex lineage: subagent children as their own Sessions, inherited history, usage counted once.

* ``tests/fixtures/data/codex``: a hand-made parent rollout and a forked subagent child (0.171
  shape) whose first lines replay the parent's header, turn and cumulative counters below the
  declared ``subagent_history_start_ordinal``.
* the real Codex Desktop 0.142 parent with its two subagent children (public corpus).
* the usage rule proven on the generated corpus twice: once as published (0.171
  ``token_usage_record``), once with those records removed so only ``token_count`` counts.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import dict_rows
from tests.support.files import DATA, corpus_path, generated
from traceidx.adapters.codex import CodexAdapter
from traceidx.analysis.query import connect
from traceidx.domain.rules import sum_usage
from traceidx.pipeline.job import build

CODEX = DATA / "codex"
PARENT = "0199aaaa-0000-7000-8000-00000000a001"
CHILD = "0199aaaa-0000-7000-8000-00000000c002"
PUBLIC_PARENT = "019ede24-67de-7b11-b46f-7922530907a9"
PUBLIC_CHILDREN = {"019ede26-ff03-7a82-bb34-cfab716a498a", "019ede26-fff1-7790-ad39-a8a29eda9af4"}


@pytest.fixture(scope="module")
def fixture_con(tmp_path_factory: pytest.TempPathFactory) -> Any:
    dataset = tmp_path_factory.mktemp("codex-lineage") / "ds"
    report = build([CODEX], dataset, jobs=1)
    assert report.exit_code == 0 and report.count("indexed") == 2
    return connect(dataset)


def test_child_is_its_own_session_delegated_from_the_parent(fixture_con: Any) -> None:
    sessions = {r["native_id"]: r for r in dict_rows(fixture_con, "SELECT * FROM sessions")}
    assert set(sessions) == {PARENT, CHILD}
    parent, child = sessions[PARENT], sessions[CHILD]
    assert child["delegated_from"]["session_id"] == parent["session_id"]
    assert child["forked_from"]["session_id"] == parent["session_id"]
    assert parent["delegated_from"] is None and parent["forked_from"] is None
    # the parent's spawn_agent call is a delegation linked to the child session
    links = dict_rows(
        fixture_con,
        "SELECT semantic.delegation.child_session_id AS child, semantic.delegation.text.value "
        "AS text FROM items WHERE semantic.role = 'agent.delegation' AND session_id = "
        f"{parent['session_id']}",
    )
    assert links == [{"child": child["session_id"], "text": links[0]["text"]}]
    assert links[0]["text"].startswith("Count the TODO markers")
    reports = dict_rows(
        fixture_con,
        "SELECT semantic.subagent_report.source_session_id AS src FROM items "
        "WHERE semantic.role = 'subagent.report'",
    )
    assert reports == [{"src": child["session_id"]}]


def test_inherited_history_projects_nothing_in_the_child(fixture_con: Any) -> None:
    child = dict_rows(fixture_con, f"SELECT session_id FROM sessions WHERE native_id = '{CHILD}'")[
        0
    ]
    loops = dict_rows(
        fixture_con,
        f"SELECT native_id, model, usage FROM loops WHERE session_id = {child['session_id']}",
    )
    assert [loop["native_id"] for loop in loops] == ["0199aaaa-0000-7000-8000-000000000002"]
    assert loops[0]["model"]["id"] == "gpt-5.5-mini"
    items = dict_rows(
        fixture_con,
        "SELECT semantic.role AS role, (SELECT min(r.source_position) FROM records r "
        "WHERE list_contains(i.record_ids, r.record_id)) AS line FROM items i "
        f"WHERE session_id = {child['session_id']} ORDER BY loop_position",
    )
    assert min(i["line"] for i in items) >= 8  # nothing from the replayed lines 1-7
    roles = [i["role"] for i in items]
    # the child's task comes from the parent agent, whose call is the one delegation: here it
    # is neither a human request nor a second delegation (it stays a Record)
    assert "agent.delegation" not in roles and "human.request" not in roles
    assert "agent.final_answer" in roles


def test_lineage_usage_counts_replayed_history_once(fixture_con: Any) -> None:
    totals = dict_rows(
        fixture_con,
        "SELECT s.native_id, sum(l.usage.input) AS input, sum(l.usage.cached) AS cached, "
        "sum(l.usage.output) AS output, sum(l.usage.reasoning) AS reasoning "
        "FROM loops l JOIN sessions s USING (session_id) GROUP BY 1",
    )
    by = {t.pop("native_id"): t for t in totals}
    # parent: two calls (1000/0/50/10 + 1200/1000/40/0), each written twice (record + count)
    assert by[PARENT] == {"input": 2200, "cached": 1000, "output": 90, "reasoning": 10}
    # child: its own two calls only; the replayed parent counter and a rate-limit repeat
    # (unchanged total) are not calls
    assert by[CHILD] == {"input": 3200, "cached": 2700, "output": 90, "reasoning": 20}
    # the child's cumulative counter starts at the parent's counter at the fork (replayed on
    # line 7): its own calls are exactly the growth after the declared boundary, so the
    # lineage total is the parent's calls plus that growth, each call once
    lines = (CODEX / f"rollout-2026-03-02T10-00-01-{CHILD}.jsonl").read_text().splitlines()
    inherited, last = (
        json.loads(lines[n])["payload"]["info"]["total_token_usage"] for n in (7, 18)
    )
    for key, member in (("input_tokens", "input"), ("output_tokens", "output")):
        assert by[CHILD][member] == last[key] - inherited[key]
        lineage = by[PARENT][member] + by[CHILD][member]
        assert (
            lineage
            == by[PARENT][member] + last[key] - inherited[key]
            < (by[PARENT][member] + last[key])
        )


def test_public_subagent_children_link_to_their_parent(tmp_path: Path) -> None:
    folder = corpus_path("public", "codex")
    paths = sorted(folder.glob(f"*{PUBLIC_PARENT}*"))
    assert len(paths) == 3
    report = build(paths, tmp_path / "ds", jobs=1)
    assert report.exit_code == 0
    con = connect(tmp_path / "ds")
    sessions = {r["native_id"]: r for r in dict_rows(con, "SELECT * FROM sessions")}
    parent = sessions[PUBLIC_PARENT]
    for child in PUBLIC_CHILDREN:
        assert sessions[child]["delegated_from"]["session_id"] == parent["session_id"]
    delegated = dict_rows(
        con,
        "SELECT semantic.delegation.child_session_id AS child FROM items "
        f"WHERE semantic.role = 'agent.delegation' AND session_id = {parent['session_id']}",
    )
    assert {d["child"] for d in delegated} == {sessions[c]["session_id"] for c in PUBLIC_CHILDREN}
    # exactly one delegation per child across the dataset: the parent's (the child's copy of
    # its task stays a Record, and the child's loops are still there)
    for child in PUBLIC_CHILDREN:
        sid = sessions[child]["session_id"]
        linking = dict_rows(
            con,
            "SELECT session_id FROM items WHERE semantic.role = 'agent.delegation' "
            f"AND semantic.delegation.child_session_id = {sid}",
        )
        assert linking == [{"session_id": parent["session_id"]}]
        loops = dict_rows(con, f"SELECT count(*) AS n FROM loops WHERE session_id = {sid}")
        assert loops[0]["n"] >= 1


# ----------------------------------------------------------------------------------------------
# the usage rule, proven on the generated corpus through both native counters


def _loop_usage_without(path: Path, drop: str) -> list[dict[str, int | None] | None]:
    """Loop usages of a rollout fed to the adapter without the records of one type."""
    adapter = CodexAdapter()
    for position, raw in enumerate(path.read_bytes().splitlines()):
        obj = json.loads(raw)
        if obj.get("type") != drop:
            adapter.feed(position, obj)
    draft = adapter.finish()
    out = []
    for loop in draft.loops:
        usage = sum_usage(loop.usage)
        out.append(
            None
            if usage is None
            else {"input": usage.input, "cached": usage.cached, "output": usage.output}
        )
    return out


def test_token_count_alone_gives_the_recorded_usage() -> None:
    """Without the 0.171 ``token_usage_record`` lines the ``token_count`` rule (count a record
    only when the cumulative total moved) yields exactly the manifest's per-turn usage."""
    manifest = json.loads((generated("codex") / "manifest.json").read_text())
    checked = 0
    for session in manifest["sessions"]:
        path = generated("codex").parent / session["file"]
        expected: list[dict[str, int] | None] = []
        for turn in session["turns"]:
            recorded = [r["usage_recorded"] for r in turn["requests"] if r["usage_recorded"]]
            expected.append(
                {
                    "input": sum(r["input_tokens"] for r in recorded),
                    "cached": sum(r["cached_input_tokens"] for r in recorded),
                    "output": sum(r["output_tokens"] for r in recorded),
                }
                if recorded
                else None
            )
        assert _loop_usage_without(path, "token_usage_record") == expected, session["key"]
        checked += 1
    assert checked == len(manifest["sessions"])


def test_rate_limit_repeats_are_not_calls() -> None:
    """Desktop 0.104 repeats about half its token_count records unchanged: the per-loop sums
    equal the growth of the cumulative counter (every counted call once)."""
    path = corpus_path(
        "public",
        "codex",
        "madshn__localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__"
        "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
    )
    adapter = CodexAdapter()
    totals: list[int] = []
    repeats = 0
    for position, raw in enumerate(path.read_bytes().splitlines()):
        obj = json.loads(raw)
        adapter.feed(position, obj)
        info = obj.get("payload", {}).get("info") if obj.get("type") == "event_msg" else None
        if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
            total = info["total_token_usage"]["input_tokens"]
            repeats += bool(totals) and totals[-1] == total
            totals.append(total)
    draft = adapter.finish()
    per_loop: defaultdict[int, int] = defaultdict(int)
    for n, loop in enumerate(draft.loops):
        per_loop[n] = sum(s.input for s in loop.usage)
    assert repeats > 200
    assert sum(per_loop.values()) == totals[-1]
