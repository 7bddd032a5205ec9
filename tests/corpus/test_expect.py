"""Every runtime's generated traces against their ground truth in the contract's units.

Each folder of the generated set (``generated/<folder>/``: the shared corpus's when it is
present, else the committed fixtures) has an ``expect.json`` (format ``expect/1``) that states,
per session, what the real runtime did in the contract's units: one entry per Loop with its
outcome, its usage and the usage of every billed model call, its tool calls in order (tool,
shell command, exit code, failed flag, output, delegation) and its final answer; the model
calls outside any Loop; the subagent sessions it delegated to. This module builds each folder
once and compares every session with it: one test per (runtime, session, family of facts), the
same code for every runtime. The calls compared are the billed ones (with usage): a failed
attempt that billed nothing stays a row of its outcome, without usage. Where a trace's
evidence reads otherwise than its expect.json, ``tests/fixtures/expect-deviations.json`` says
so, with the lines that show it.

``outcome_strict`` / ``final_strict`` say whether the trace itself states the outcome / marks the
final answer; where it does not, the published outcome may be absent (unknown), never another
one. ``exit_code_any`` lists the exit codes a tool call may truthfully have (a killed process).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import dict_rows
from tests.support.files import FIXTURES, generated
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.runtimes import names

#: the generated set's folders (the runtime each folder holds is its expect.json's `runtime`)
FOLDERS = ("claude", "codex", "dsh", "pi", "copilot", "gemini", "opencode", "qwen")
USAGE = ("input", "cached", "cache_write", "output", "reasoning")


def _truth(folder: str) -> dict[str, Any] | None:
    path = generated(folder) / "expect.json"
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


#: where the evidence reads otherwise than an expect.json: overridden members, with the reason
DEVIATIONS: dict[str, Any] = json.loads((FIXTURES / "expect-deviations.json").read_text("utf-8"))
#: the folders with ground truth whose runtime traceidx reads
TRUTHS = {
    folder: truth
    for folder in FOLDERS
    if (truth := _truth(folder)) is not None and truth["runtime"] in names()
}


def _params() -> list[Any]:
    return [
        pytest.param(folder, session, id=session["key"])
        for folder, truth in TRUTHS.items()
        for session in truth["sessions"]
    ]


@dataclass
class Published:
    """What a build of one folder published, keyed for the comparisons."""

    runtime: str
    sessions: dict[str, dict[str, Any]]  # by native id
    loops: dict[int, list[dict[str, Any]]]  # by session id, in session order
    calls: dict[int | None, list[dict[str, Any]]]  # by loop id (None: outside any loop)
    outside: dict[int, list[dict[str, Any]]]  # calls outside any loop, by session id
    tools: dict[int, list[dict[str, Any]]]  # by loop id, in loop order
    items: dict[int, list[dict[str, Any]]]  # by loop id, in loop order

    def session(self, truth: dict[str, Any]) -> dict[str, Any]:
        found = self.sessions.get(truth["native_session_id"])
        assert found is not None, f"{truth['key']}: no session {truth['native_session_id']}"
        assert found["runtime"] == self.runtime, truth["key"]
        return found

    def loop_pairs(self, truth: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        loops = self.loops.get(self.session(truth)["session_id"], [])
        expected = truth["loops"]
        assert len(loops) == len(expected), f"{truth['key']}: {len(loops)} loops published"
        return list(zip(expected, loops, strict=True))


_BUILT: dict[str, Published] = {}


def published(folder: str, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """The folder built once per test session."""
    if folder not in _BUILT:
        _BUILT[folder] = _build(folder, tmp_path_factory.mktemp(f"expect-{folder}") / "ds")
    return _BUILT[folder]


def _build(folder: str, dataset: Path) -> Published:
    report = build([generated(folder)], dataset, jobs=2)
    failed = [(r.locator, r.reason) for r in report.results if r.state == "failed"]
    assert report.exit_code == 0 and not failed, failed
    con = connect(dataset)
    try:
        sessions = {
            r["native_id"]: r
            for r in dict_rows(
                con, "SELECT session_id, native_id, runtime, delegated_from FROM sessions"
            )
        }
        loops: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            'SELECT loop_id, session_id, "end", usage FROM loops '
            "ORDER BY session_id, session_position",
        ):
            loops[row["session_id"]].append(row)
        calls: dict[int | None, list[dict[str, Any]]] = defaultdict(list)
        outside: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            "SELECT c.session_id, c.loop_id, c.model, c.usage FROM model_calls c "
            "JOIN records r ON r.record_id = c.record_ids[1] WHERE c.usage IS NOT NULL "
            "ORDER BY c.session_id, r.source_id, r.source_position",
        ):
            if row["loop_id"] is None:
                outside[row["session_id"]].append(row)
            else:
                calls[row["loop_id"]].append(row)
        tools: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            "SELECT t.*, i.loop_position FROM tool_calls t JOIN items i USING (item_id) "
            "WHERE t.loop_id IS NOT NULL ORDER BY t.loop_id, i.loop_position",
        ):
            tools[row["loop_id"]].append(row)
        items: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            "SELECT loop_id, semantic.role AS role, semantic.text.text.value AS text, "
            "semantic.delegation.child_session_id AS child FROM items "
            "WHERE loop_id IS NOT NULL ORDER BY loop_id, loop_position",
        ):
            items[row["loop_id"]].append(row)
    finally:
        con.close()
    return Published(TRUTHS[folder]["runtime"], sessions, loops, calls, outside, tools, items)


def _usage(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if usage is None else {m: usage.get(m) for m in USAGE}


def _calls(calls: list[dict[str, Any]]) -> list[str]:
    """Model calls as comparable values, in a fixed order: a runtime may state a call's usage
    after a later call's (dsh writes a subagent's response when it returns), so the order of
    the evidence need not be the order of the requests."""
    return sorted(json.dumps([c["model"], _usage(c["usage"])]) for c in calls)


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_loops_and_outcomes(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    for want, loop in published(folder, tmp_path_factory).loop_pairs(truth):
        outcome = (loop["end"] or {}).get("outcome")
        where = f"{truth['key']} loop {want['index']}"
        if want["outcome_strict"]:
            assert outcome == want["outcome"], where
        else:
            assert outcome in (want["outcome"], None), where


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_usage_per_loop_and_per_call(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    built = published(folder, tmp_path_factory)
    for want, loop in built.loop_pairs(truth):
        where = f"{truth['key']} loop {want['index']}"
        assert _usage(loop["usage"]) == want["usage"], where
        calls = _calls(built.calls.get(loop["loop_id"], []))
        assert calls == _calls(want["calls"]), where
    session_id = built.session(truth)["session_id"]
    outside = _calls(built.outside.get(session_id, []))
    assert outside == _calls(truth.get("calls", [])), truth["key"]


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_tool_calls(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    built = published(folder, tmp_path_factory)
    for want, loop in built.loop_pairs(truth):
        where = f"{truth['key']} loop {want['index']}"
        got = built.tools.get(loop["loop_id"], [])
        assert [c["tool_name"] for c in got] == [c["tool"] for c in want["tool_calls"]], where
        for n, (expected, call) in enumerate(zip(want["tool_calls"], got, strict=True), 1):
            deviation = DEVIATIONS["tool_calls"].get(truth["key"], {})
            expected = {**expected, **deviation.get(f"loop {want['index']} call {n}", {})}
            at = f"{where} call {n} ({expected['tool']} {expected['command']!r})"
            if expected["shell"]:
                assert call["role"] == "agent.tool_call.shell", at
                assert call["command"] == expected["command"], at
            allowed = expected.get("exit_code_any", [expected["exit_code"]])
            assert call["exit_code"] in allowed, at
            assert call["output_count"] == (1 if expected["has_output"] else 0), at
            if expected["has_output"]:
                assert bool(call["failed"]) is expected["failed"], at
        delegations = [i for i in built.items[loop["loop_id"]] if i["role"] == "agent.delegation"]
        assert len(delegations) == sum(c["delegation"] for c in want["tool_calls"]), where


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_final_answers(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    built = published(folder, tmp_path_factory)
    for want, loop in built.loop_pairs(truth):
        where = f"{truth['key']} loop {want['index']}"
        finals = [
            i["text"] for i in built.items[loop["loop_id"]] if i["role"] == "agent.final_answer"
        ]
        deviation = DEVIATIONS.get("final_answers", {}).get(truth["key"], {})
        expected = {**want, **deviation.get(f"loop {want['index']}", {})}["final_answer"]
        if expected is None:
            assert not finals, where
        else:
            assert finals[-1:] == [expected], where


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_subagents_are_linked_to_their_parent(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    built = published(folder, tmp_path_factory)
    parent = built.session(truth)
    for child in truth.get("subagents", []):
        row = built.sessions.get(child["native_session_id"])
        assert row is not None, f"{truth['key']}: no subagent {child['native_session_id']}"
        assert (row["delegated_from"] or {}).get("session_id") == parent["session_id"], truth["key"]
