"""Every runtime's generated traces against their ground truth, the same code for every runtime.

Each folder of the generated set (``generated/<folder>/``: the shared corpus's when it is
present, else the committed fixtures) has an ``expect.json`` (format ``expect/1``) that states,
per session, what the real runtime did in the contract's units: one entry per Loop with its
outcome, its usage and the usage of every billed model call, its tool calls in order (tool,
shell command, exit code, failed flag, output, delegation) and its final answer; the model
calls outside any Loop; the subagent sessions it delegated to. Its ``manifest.json`` states, in
the same sense for every runtime, each session's working directory, the prompts the human typed
(which turn each opens, and its steering) and the session's final answer, and each tool call's
arguments (`tests.support.expect`). This module builds each folder once and compares every
session with both: one test per (runtime, session, family of facts), and one per runtime for
the whole set (usage counted once). The calls compared are the billed ones (with usage): a
failed attempt that billed nothing stays a row of its outcome, without usage. Where a trace's
evidence reads otherwise than its ground truth, ``tests/fixtures/expect-deviations.json`` says
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

from tests.support.expect import (
    SESSION_USAGE,
    TRUTHS,
    USAGE,
    deviation,
    is_human_turn,
    loop_calls,
    manifest_sessions,
    turn_of,
    usage_total,
)
from tests.support.facts import dict_rows, text_of
from tests.support.files import generated
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build

#: the human's own items, in the order the human typed them
HUMAN_ROLES = ("human.request", "human.steering")
#: the items a delegated subagent's result is published as in the parent
SUBAGENT_RESULTS = ("subagent.report", "subagent.activity")


def _params() -> list[Any]:
    return [
        pytest.param(folder, session, id=session["key"])
        for folder, truth in TRUTHS.items()
        for session in truth["sessions"]
    ]


def _folders() -> list[Any]:
    return [pytest.param(folder, id=folder) for folder in TRUTHS]


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
    session_items: dict[int, list[dict[str, Any]]]  # by session id, loops in order, then the rest
    totals: dict[str, dict[str, int]]  # usage summed over the dataset: "calls", "loops"

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


def _totals(con: Any, view: str) -> dict[str, int]:
    members = ", ".join(f"coalesce(sum(usage.{m}), 0) AS {m}" for m in USAGE)
    return dict_rows(con, f"SELECT {members} FROM {view}")[0]


def _build(folder: str, dataset: Path) -> Published:
    report = build([generated(folder)], dataset, jobs=2)
    failed = [(r.locator, r.reason) for r in report.results if r.state == "failed"]
    assert report.exit_code == 0 and not failed, failed
    con = connect(dataset)
    try:
        sessions = {
            r["native_id"]: r
            for r in dict_rows(
                con,
                "SELECT session_id, native_id, runtime, delegated_from, forked_from, "
                "working_directory, created_at, session_usage FROM sessions",
            )
        }
        loops: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            'SELECT loop_id, session_id, "end", model, usage FROM loops '
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
            "SELECT t.*, i.loop_position, i.record_ids FROM tool_calls t "
            "JOIN items i USING (item_id) "
            "WHERE t.loop_id IS NOT NULL ORDER BY t.loop_id, i.loop_position",
        ):
            tools[row["loop_id"]].append(row)
        items: dict[int, list[dict[str, Any]]] = defaultdict(list)
        session_items: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            "SELECT i.session_id, i.loop_id, i.loop_position, i.record_ids, i.semantic "
            "FROM items AS i LEFT JOIN loops AS l USING (loop_id) "
            "ORDER BY i.session_id, l.session_position NULLS LAST, i.loop_position, i.item_id",
        ):
            semantic = row.pop("semantic")
            row["role"] = semantic["role"]
            row["text"] = text_of(semantic)
            row["child"] = (semantic.get("delegation") or {}).get("child_session_id")
            row["reporter"] = (semantic.get("subagent_report") or {}).get("source_session_id")
            session_items[row["session_id"]].append(row)
            if row["loop_id"] is not None:
                items[row["loop_id"]].append(row)
        totals = {"calls": _totals(con, "model_calls"), "loops": _totals(con, "loops")}
    finally:
        con.close()
    return Published(
        TRUTHS[folder]["runtime"],
        sessions,
        loops,
        calls,
        outside,
        tools,
        items,
        session_items,
        totals,
    )


def _usage(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if usage is None else {m: usage.get(m) for m in USAGE}


def _calls(calls: list[dict[str, Any]]) -> list[str]:
    """Model calls as comparable values, in a fixed order: a runtime may state a call's usage
    after a later call's (dsh writes a subagent's response when it returns), so the order of
    the evidence need not be the order of the requests."""
    return sorted(json.dumps([c["model"], _usage(c["usage"])]) for c in calls)


def _first_request(items: list[dict[str, Any]], where: str) -> dict[str, Any]:
    found = [i for i in items if i["role"] == "human.request"]
    assert found, f"{where}: no human.request"
    return found[0]


def _manifest_session(folder: str, truth: dict[str, Any]) -> dict[str, Any]:
    found = manifest_sessions(folder).get(truth["native_session_id"])
    if found is None:
        pytest.skip(f"{truth['key']}: no manifest.json session")
    return found


# --------------------------------------------------------------------------------------------
# Sessions


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_session(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The session's working directory and start; no generated session is a fork."""
    stated = _manifest_session(folder, truth)
    row = published(folder, tmp_path_factory).session(truth)
    if "cwd" in stated:  # a subagent's entry may state none (Cline's)
        assert row["working_directory"] == stated["cwd"], truth["key"]
    assert row["created_at"] is not None, truth["key"]
    assert row["forked_from"] is None, truth["key"]


@pytest.mark.parametrize("folder", _folders())
def test_the_dataset_holds_exactly_the_sessions_of_the_ground_truth(
    folder: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every trace is read into its sessions and nothing else (a file that is no session, a
    session counted twice); expect.json and manifest.json list the same sessions (a manifest
    may state a subagent's session only as one of its parent's ``subagent_files``)."""
    expected = {s["native_session_id"] for s in TRUTHS[folder]["sessions"]}
    assert set(published(folder, tmp_path_factory).sessions) == expected
    stated = manifest_sessions(folder)
    if stated:
        children = {
            s["native_session_id"]
            for s in TRUTHS[folder]["sessions"]
            if s.get("file")
            in stated.get(s.get("parent_native_session_id", ""), {}).get("subagent_files", [])
        }
        assert set(stated) | children == expected


# --------------------------------------------------------------------------------------------
# Loops: how they open, how they end, their outcome, model and usage


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_loops_and_outcomes(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    pairs = published(folder, tmp_path_factory).loop_pairs(truth)
    for n, (want, loop) in enumerate(pairs, 1):
        outcome = (loop["end"] or {}).get("outcome")
        where = f"{truth['key']} loop {want['index']}"
        if want["outcome_strict"]:
            assert outcome == want["outcome"], where
        else:
            assert outcome in (want["outcome"], None), where
        if n < len(pairs):  # every loop but the last is ended, at the latest by the next
            assert loop["end"] is not None, where
        if want["outcome"] is None and want["outcome_strict"]:  # the trace stops inside it
            assert loop["end"] is None, where


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_human_prompts_open_their_loops(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A Loop the human's prompt opened starts with that prompt, its one human.request (after
    only what the runtime sends with it, runtime.* items: Codex's instructions and context),
    and holds the turn's steering; any other Loop (a subagent's task, a runtime's notification)
    holds no human.request and no copy of its task as a delegation; the session's human items
    are exactly the texts the human typed."""
    built = published(folder, tmp_path_factory)
    stated = _manifest_session(folder, truth)
    for want, loop in built.loop_pairs(truth):
        where = f"{truth['key']} loop {want['index']}"
        items = built.items.get(loop["loop_id"], [])
        assert items, f"{where}: no items"
        assert [i["loop_position"] for i in items] == list(range(len(items))), where
        requests = [i["text"] for i in items if i["role"] == "human.request"]
        steering = [i["text"] for i in items if i["role"] == "human.steering"]
        turn = turn_of(stated, want)
        if turn is not None and is_human_turn(stated, turn):
            opening = [i["role"] for i in items[: items.index(_first_request(items, where))]]
            assert all(r.startswith("runtime.") for r in opening), f"{where}: opens with {opening}"
            assert requests == [turn["prompt"]], where
            assert steering == turn.get("steering", []), where
        else:
            assert not requests, f"{where}: not opened by the human"
            task = (turn or {}).get("prompt")  # a subagent's task is its parent's delegation
            delegated = [i["text"] for i in items if i["role"] == "agent.delegation"]
            assert task is None or task not in delegated, f"{where}: the task copied"
    typed = [
        i["text"]
        for i in built.session_items.get(built.session(truth)["session_id"], [])
        if i["role"] in HUMAN_ROLES
    ]
    assert typed == stated.get("human_prompts", []), truth["key"]


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_loop_model(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A Loop that billed calls names a model it called."""
    for want, loop in published(folder, tmp_path_factory).loop_pairs(truth):
        if loop_calls(want):
            model = (loop["model"] or {}).get("id")
            called = {c["model"] for c in want["calls"]}
            assert model in called, f"{truth['key']} loop {want['index']}: {model}"


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_usage_per_loop_and_per_call(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    built = published(folder, tmp_path_factory)
    for want, loop in built.loop_pairs(truth):
        where = f"{truth['key']} loop {want['index']}"
        assert _usage(loop["usage"]) == want["usage"], where
        calls = _calls(built.calls.get(loop["loop_id"], []))
        assert calls == _calls(loop_calls(want)), where
    session_id = built.session(truth)["session_id"]
    outside = _calls(built.outside.get(session_id, []))
    assert outside == _calls(truth.get("calls", [])), truth["key"]


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_session_usage(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The session's usage as the runtime totals it (``session_token_usage``), where it keeps
    one; absent where the ground truth states none."""
    row = published(folder, tmp_path_factory).session(truth)
    stated = {**truth, **deviation("session_usage", truth["key"], "session")}
    want = stated.get("session_token_usage")
    got = row["session_usage"]
    if want is None:
        assert got is None, truth["key"]
    else:
        assert got is not None, truth["key"]
        assert {m: got[m] for m in SESSION_USAGE} == want, truth["key"]


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_expected_loop_usage_is_its_calls_usage(folder: str, truth: dict[str, Any]) -> None:
    """The ground truth agrees with itself (guards the expectations above): a Loop's usage is
    the sum of its calls', a member present only where every call reports it, none without
    calls."""
    for want in truth["loops"]:
        calls = [c["usage"] for c in loop_calls(want)]
        summed = {
            m: None if any(u.get(m) is None for u in calls) else sum(u[m] for u in calls)
            for m in USAGE
        }
        assert want["usage"] == (summed if calls else None), f"{truth['key']} {want['index']}"


@pytest.mark.parametrize("folder", _folders())
def test_usage_is_counted_once_over_the_dataset(
    folder: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """All model calls, and all Loops, of the dataset together carry exactly the ground truth's
    usage: nothing counted twice, nothing left out (also in sessions the ground truth does not
    list)."""
    built = published(folder, tmp_path_factory)
    truth = TRUTHS[folder]
    assert built.totals["calls"] == usage_total(truth), folder
    assert built.totals["loops"] == usage_total(truth, loops_only=True), folder


# --------------------------------------------------------------------------------------------
# Tool calls, delegations, final answers, subagents


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_tool_calls(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    built = published(folder, tmp_path_factory)
    stated = manifest_sessions(folder).get(truth["native_session_id"])
    for want, loop in built.loop_pairs(truth):
        where = f"{truth['key']} loop {want['index']}"
        got = built.tools.get(loop["loop_id"], [])
        assert [c["tool_name"] for c in got] == [c["tool"] for c in want["tool_calls"]], where
        turn = turn_of(stated, want) if stated else None
        stated_calls = (turn or {}).get("tool_calls", [])
        arguments = [c.get("arguments", c.get("input")) for c in stated_calls]
        if not all("arguments" in c or "input" in c for c in stated_calls):
            arguments = []  # the manifest states the calls but not their arguments (Cline's)
        for n, (expected, call) in enumerate(zip(want["tool_calls"], got, strict=True), 1):
            expected = {
                **expected,
                **deviation("tool_calls", truth["key"], f"loop {want['index']} call {n}"),
            }
            at = f"{where} call {n} ({expected['tool']} {expected['command']!r})"
            if expected["shell"]:
                assert call["role"] == "agent.tool_call.shell", at
                assert call["command"] == expected["command"], at
            else:
                assert call["role"] == "agent.tool_call", at
                assert call["command"] is None, at
            if len(arguments) == len(got):  # the manifest states this turn's calls
                assert json.loads(call["arguments"] or "null") == arguments[n - 1], at
            allowed = expected.get("exit_code_any", [expected["exit_code"]])
            assert call["exit_code"] in allowed, at
            assert call["output_count"] == (1 if expected["has_output"] else 0), at
            if expected["has_output"]:
                assert bool(call["failed"]) is expected["failed"], at


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_delegations(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A delegating tool call is also an agent.delegation item, starting with the call's own
    records, whose text is the task the call gave (its ``prompt`` argument, Cline's ``task``)."""
    built = published(folder, tmp_path_factory)
    for want, loop in built.loop_pairs(truth):
        where = f"{truth['key']} loop {want['index']}"
        delegations = [i for i in built.items[loop["loop_id"]] if i["role"] == "agent.delegation"]
        assert len(delegations) == sum(c["delegation"] for c in want["tool_calls"]), where
        calls = [
            call
            for expected, call in zip(
                want["tool_calls"], built.tools.get(loop["loop_id"], []), strict=True
            )
            if expected["delegation"]
        ]
        for delegation, call in zip(delegations, calls, strict=True):
            # of the call's records (and may join the records of its result)
            records = call["record_ids"]
            assert delegation["record_ids"][: len(records)] == records, where
            arguments = json.loads(call["arguments"] or "{}")
            task = arguments.get(
                "prompt", arguments.get("task")
            )  # Cline's and Mistral Vibe's: ``task``
            assert delegation["text"] == task, f"{where}: the delegated task"
        # a delegation that returned comes back as the child's report or activity
        results = [i for i in built.items[loop["loop_id"]] if i["role"] in SUBAGENT_RESULTS]
        returned = [c for c in want["tool_calls"] if c["delegation"] and c["has_output"]]
        assert len(results) >= len(returned), f"{where}: subagent results"


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
        expected = {**want, **deviation("final_answers", truth["key"], f"loop {want['index']}")}
        earlier = expected.get("earlier", [])  # answers the trace marks final, then retried
        if expected["final_answer"] is None:
            assert finals == earlier, where
        else:
            assert finals == [*earlier, expected["final_answer"]], where


@pytest.mark.parametrize(("folder", "truth"), _params())
def test_subagents_are_linked_to_their_parent(
    folder: str, truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Each subagent session names its parent (delegated_from), the parent's delegation names
    it, and it reports back to the parent (a subagent.report naming it)."""
    built = published(folder, tmp_path_factory)
    parent = built.session(truth)
    items = built.session_items.get(parent["session_id"], [])
    children = {i["child"] for i in items if i["role"] == "agent.delegation"}
    reporters = {i["reporter"] for i in items if i["role"] == "subagent.report"}
    for child in truth.get("subagents", []):
        where = f"{truth['key']}: subagent {child['native_session_id']}"
        row = built.sessions.get(child["native_session_id"])
        assert row is not None, where
        assert (row["delegated_from"] or {}).get("session_id") == parent["session_id"], where
        assert row["session_id"] in children, f"{where}: no delegation names it"
        assert row["session_id"] in reporters, f"{where}: no subagent.report from it"
